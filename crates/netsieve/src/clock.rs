//! Times as the peers print them: in the local time zone (the `TZ` variable, else the
//! system's), as Suricata writes its EVE and fast.log timestamps (`...+0100`) and tcpdump
//! its packet lines. The zone is read once; each time costs a lookup of its offset.

use std::sync::OnceLock;
use std::time::Duration;

use jiff::tz::TimeZone;

/// A moment as a local calendar date and time of day, with the zone's offset then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub micros: u32,
    /// Seconds east of UTC.
    pub offset: i32,
}

fn zone() -> &'static TimeZone {
    static ZONE: OnceLock<TimeZone> = OnceLock::new();
    // Where the zone cannot be read (a bad TZ, no tz database), times are UTC.
    ZONE.get_or_init(|| TimeZone::try_system().unwrap_or(TimeZone::UTC))
}

impl Civil {
    /// `ts` (since the epoch) in the local time zone.
    pub fn local(ts: Duration) -> Civil {
        let secs = i64::try_from(ts.as_secs()).unwrap_or(i64::MAX);
        let offset = jiff::Timestamp::from_second(secs)
            .map(|t| zone().to_offset(t).seconds())
            .unwrap_or(0);
        Civil::at(ts, offset)
    }

    /// `ts` at `offset` seconds east of UTC.
    pub fn at(ts: Duration, offset: i32) -> Civil {
        let secs = i64::try_from(ts.as_secs()).unwrap_or(i64::MAX / 2) + i64::from(offset);
        let (year, month, day) = civil_date(secs.div_euclid(86_400));
        let sod = secs.rem_euclid(86_400);
        Civil {
            year,
            month,
            day,
            hour: sod / 3600,
            minute: sod / 60 % 60,
            second: sod % 60,
            micros: ts.subsec_micros(),
            offset,
        }
    }

    /// As EVE writes times: `2015-10-06T15:16:43.137833+0000`.
    pub fn write_iso(&self, f: &mut impl std::fmt::Write) -> std::fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}{}",
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.micros,
            self.offset_str()
        )
    }

    /// As fast.log writes times: `11/24/2009-18:57:25.179869`.
    pub fn write_legacy(&self, f: &mut impl std::fmt::Write) -> std::fmt::Result {
        write!(
            f,
            "{:02}/{:02}/{:04}-{:02}:{:02}:{:02}.{:06}",
            self.month, self.day, self.year, self.hour, self.minute, self.second, self.micros,
        )
    }

    /// The offset as Suricata writes it: `+0100`, `-0500`.
    pub fn offset_str(&self) -> String {
        let sign = if self.offset < 0 { '-' } else { '+' };
        let m = self.offset.unsigned_abs() / 60;
        format!("{sign}{:02}{:02}", m / 60, m % 60)
    }
}

/// A local time as Suricata's Lua packet library gives it: EVE's form (`iso`) or
/// fast.log's.
pub fn lua_time(t: Duration, iso: bool) -> String {
    let c = Civil::local(t);
    let mut s = String::new();
    let _ = if iso {
        c.write_iso(&mut s)
    } else {
        c.write_legacy(&mut s)
    };
    s
}

/// Days since 1970-01-01 to a civil date: year, month, day.
fn civil_date(days: i64) -> (i64, i64, i64) {
    // Howard Hinnant's algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_offsets() {
        // 2022-01-25T16:50:41.023341Z
        let t = Duration::new(1_643_129_441, 23_341_000);
        let utc = Civil::at(t, 0);
        assert_eq!(
            (
                utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.micros
            ),
            (2022, 1, 25, 16, 50, 41, 23_341)
        );
        assert_eq!(utc.offset_str(), "+0000");
        // Five hours west crosses no day; seventeen do.
        let ny = Civil::at(t, -5 * 3600);
        assert_eq!(
            (ny.day, ny.hour, ny.offset_str()),
            (25, 11, "-0500".to_string())
        );
        let west = Civil::at(t, -17 * 3600);
        assert_eq!((west.day, west.hour), (24, 23));
        let india = Civil::at(t, 5 * 3600 + 1800);
        assert_eq!(
            (india.hour, india.minute, india.offset_str()),
            (22, 20, "+0530".to_string())
        );
        // Leap day and the turn of a century.
        let leap = Civil::at(Duration::from_secs(951_782_400), 0); // 2000-02-29
        assert_eq!((leap.year, leap.month, leap.day), (2000, 2, 29));
    }
}
