//! Bits kept on hosts and pairs of hosts (`xbits`, `hostbits`): set by one flow, read
//! by another, until they expire.
//!
//! The table is shared by every worker ([`crate::engine::Shared`]), as Suricata's host and
//! IP-pair tables are: with several threads, a set and a read in flows on different
//! threads are ordered by when the threads get there (Suricata documents the same).
//! A bit is named, not numbered, so that it survives a rule reload whatever the new
//! set's numbering; the names are interned once at load ([`XbitOp`]).
//!
//! What a bit does follows Suricata 8.0.6 as measured on captures built for it (a
//! random one of 3,000 packets over four hosts gives the same alerts but one): a test
//! that finds a bit expired removes it; `set` leaves a bit that is there alone, even
//! expired (its lifetime is not renewed); `toggle` removes a bit that is there, even
//! expired, and sets one that is not.
//!
//! Memory is bounded: expired bits are swept as the table grows, and past
//! [`MAX_BITS`] bits a new one is not kept.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use netsieve_rules::{FlowbitCmd, Xbit, XbitTrack};

/// Live bits kept at most.
pub const MAX_BITS: usize = 1 << 20;
/// Suricata's lifetime of a bit set without `expire` (measured against 8.0.6).
const DEFAULT_EXPIRE: Duration = Duration::from_secs(30);

/// One `xbits` option of a compiled rule.
#[derive(Clone, Debug)]
pub struct XbitOp {
    pub cmd: FlowbitCmd,
    pub name: Arc<str>,
    pub track: XbitTrack,
    pub expire: Duration,
}

impl XbitOp {
    pub fn of(x: &Xbit) -> XbitOp {
        XbitOp {
            cmd: x.cmd,
            name: Arc::from(x.name.as_str()),
            track: x.track,
            expire: x
                .expire
                .map_or(DEFAULT_EXPIRE, |s| Duration::from_secs(s.into())),
        }
    }

    /// Where the bit is kept for a packet from `src` to `dst`.
    fn key(&self, src: IpAddr, dst: IpAddr) -> Holder {
        match self.track {
            XbitTrack::IpSrc => Holder::Host(src),
            XbitTrack::IpDst => Holder::Host(dst),
            // A pair is the same pair both ways.
            XbitTrack::IpPair => Holder::Pair(src.min(dst), src.max(dst)),
        }
    }
}

/// What holds a bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Holder {
    Host(IpAddr),
    Pair(IpAddr, IpAddr),
}

/// The bits, each with the time it expires.
#[derive(Debug, Default)]
pub struct HostBits {
    bits: HashMap<(Arc<str>, Holder), Duration>,
    /// The table's size after the last sweep: the next comes when it doubled.
    swept: usize,
}

impl HostBits {
    /// Whether every test of `ops` holds for a packet from `src` to `dst` at `now`.
    pub fn tests_hold(&mut self, ops: &[XbitOp], src: IpAddr, dst: IpAddr, now: Duration) -> bool {
        ops.iter().all(|op| match op.cmd {
            FlowbitCmd::IsSet => self.live(op, src, dst, now),
            FlowbitCmd::IsNotSet => !self.live(op, src, dst, now),
            _ => true,
        })
    }

    /// Whether the bit of `op` is set; an expired one is removed.
    fn live(&mut self, op: &XbitOp, src: IpAddr, dst: IpAddr, now: Duration) -> bool {
        let k = (Arc::clone(&op.name), op.key(src, dst));
        match self.bits.get(&k) {
            Some(&until) if until > now => true,
            Some(_) => {
                self.bits.remove(&k);
                false
            }
            None => false,
        }
    }

    /// Applies the changes of `ops` (a rule matched a packet from `src` to `dst` at
    /// `now`).
    pub fn apply(&mut self, ops: &[XbitOp], src: IpAddr, dst: IpAddr, now: Duration) {
        for op in ops {
            let k = (Arc::clone(&op.name), op.key(src, dst));
            let there = self.bits.contains_key(&k);
            match op.cmd {
                FlowbitCmd::Set if there => {}
                FlowbitCmd::Set => self.set(k, now + op.expire, now),
                FlowbitCmd::Unset => {
                    self.bits.remove(&k);
                }
                FlowbitCmd::Toggle if there => {
                    self.bits.remove(&k);
                }
                FlowbitCmd::Toggle => self.set(k, now + op.expire, now),
                FlowbitCmd::IsSet | FlowbitCmd::IsNotSet => {}
            }
        }
    }

    fn set(&mut self, k: (Arc<str>, Holder), until: Duration, now: Duration) {
        if self.bits.len() >= (2 * self.swept).max(1024) {
            self.bits.retain(|_, &mut u| u > now);
            self.swept = self.bits.len();
        }
        if self.bits.len() < MAX_BITS {
            self.bits.insert(k, until);
        }
    }

    /// Bits kept (live or not yet swept).
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(cmd: FlowbitCmd, track: XbitTrack, expire: Option<u32>) -> XbitOp {
        XbitOp::of(&Xbit {
            cmd,
            name: "b".into(),
            track,
            expire,
        })
    }

    #[test]
    fn bits_follow_their_holder_and_expire() {
        let (a, b, c): (IpAddr, IpAddr, IpAddr) = (
            "10.0.0.1".parse().unwrap(),
            "10.0.0.2".parse().unwrap(),
            "10.0.0.3".parse().unwrap(),
        );
        let s = |secs| Duration::from_secs(secs);
        let mut t = HostBits::default();
        // Set on the destination host, read as the source of its answer.
        t.apply(&[op(FlowbitCmd::Set, XbitTrack::IpDst, None)], a, b, s(0));
        let isset = [op(FlowbitCmd::IsSet, XbitTrack::IpSrc, None)];
        assert!(t.tests_hold(&isset, b, c, s(29)));
        assert!(!t.tests_hold(&isset, a, b, s(29)));
        // Thirty seconds by default.
        assert!(!t.tests_hold(&isset, b, c, s(31)));
        // A pair is the pair either way; `expire` sets the lifetime.
        t.apply(
            &[op(FlowbitCmd::Set, XbitTrack::IpPair, Some(100))],
            a,
            b,
            s(0),
        );
        let pair = [op(FlowbitCmd::IsSet, XbitTrack::IpPair, None)];
        assert!(t.tests_hold(&pair, b, a, s(99)));
        assert!(!t.tests_hold(&pair, a, c, s(1)));
        // Toggle (the bit is there: removed; then set) and unset.
        t.apply(
            &[op(FlowbitCmd::Toggle, XbitTrack::IpPair, None)],
            a,
            b,
            s(50),
        );
        assert!(!t.tests_hold(&pair, a, b, s(51)));
        t.apply(
            &[op(FlowbitCmd::Toggle, XbitTrack::IpPair, None)],
            a,
            b,
            s(52),
        );
        assert!(t.tests_hold(&pair, a, b, s(53)));
        t.apply(
            &[op(FlowbitCmd::Unset, XbitTrack::IpPair, None)],
            a,
            b,
            s(54),
        );
        assert!(!t.tests_hold(&pair, a, b, s(55)));
        // As in Suricata: setting a bit that is there does not renew it, even once it
        // expired, until a test finds it expired and removes it.
        let set = [op(FlowbitCmd::Set, XbitTrack::IpSrc, Some(10))];
        let isset = [op(FlowbitCmd::IsSet, XbitTrack::IpSrc, None)];
        t.apply(&set, c, a, s(0));
        t.apply(&set, c, a, s(5));
        assert!(!t.tests_hold(&isset, c, a, s(12)));
        t.apply(&set, c, a, s(20));
        assert!(t.tests_hold(&isset, c, a, s(21)));
    }

    #[test]
    fn expired_bits_are_swept() {
        let mut t = HostBits::default();
        let set = [op(FlowbitCmd::Set, XbitTrack::IpSrc, Some(1))];
        for i in 0..100_000u32 {
            let host = IpAddr::from(i.to_be_bytes());
            t.apply(
                &set,
                host,
                host,
                Duration::from_secs(u64::from(i / 1000) * 2),
            );
        }
        assert!(t.len() < 5_000, "{}", t.len());
    }
}
