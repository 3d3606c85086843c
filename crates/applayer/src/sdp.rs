//! SDP (RFC 8866), the session description a SIP message carries in its body: one
//! `x=value` line per field, the session's fields first, then one block per media
//! (`m=`) with fields of its own.
//!
//! Read as Suricata reads it for its `sdp.*` keywords and the `sdp` object of EVE's
//! `sip` record: the version line is not kept, a time description (`t=`) takes the
//! repeat times (`r=`) that follow it, and lines of a kind SDP does not define are
//! skipped. Values are kept as sent, without their line end. A session name (`s=`) of
//! anything but ASCII letters, digits and spaces makes the whole description unread, as
//! it does in Suricata 8 (measured: `s=-`, RFC 8866's name for "no name", and `s=a-b`
//! give no `sdp` object there; `s=a b` does). Likewise one media line of a media type or
//! transport outside RFC 4566's (`audio`, `video`, `text`, `application`, `message`;
//! `udp`, `RTP/AVP`, `RTP/SAVP`) leaves every media description out: `m=image 1 udptl
//! t38` (T.38 fax) and `RTP/SAVPF` are measured so.

/// One time description: `t=` and its first `r=`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Time {
    pub time: Vec<u8>,
    pub repeat_time: Option<Vec<u8>>,
}

/// One media description (`m=` and the lines up to the next `m=`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Media {
    pub media: Vec<u8>,
    pub media_info: Option<Vec<u8>>,
    pub connection_data: Option<Vec<u8>>,
    pub bandwidths: Vec<Vec<u8>>,
    pub encryption_key: Option<Vec<u8>>,
    pub attributes: Vec<Vec<u8>>,
}

/// A session description.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sdp {
    pub origin: Option<Vec<u8>>,
    pub session_name: Option<Vec<u8>>,
    pub session_info: Option<Vec<u8>>,
    pub uri: Option<Vec<u8>>,
    pub email: Option<Vec<u8>>,
    pub phone_number: Option<Vec<u8>>,
    pub connection_data: Option<Vec<u8>>,
    pub bandwidths: Vec<Vec<u8>>,
    pub time_descriptions: Vec<Time>,
    pub timezone: Option<Vec<u8>>,
    pub encryption_key: Option<Vec<u8>>,
    pub attributes: Vec<Vec<u8>>,
    pub media: Vec<Media>,
}

/// Reads a body as a session description; `None` when it does not open with the
/// version line (`v=`).
pub fn parse(body: &[u8]) -> Option<Sdp> {
    let mut lines = body
        .split(|&c| c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty());
    if !lines.next()?.starts_with(b"v=") {
        return None;
    }
    let mut s = Sdp::default();
    let mut bad_media = false;
    for line in lines {
        let [kind, b'=', value @ ..] = line else {
            continue;
        };
        if *kind == b's'
            && !value
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || *c == b' ')
        {
            return None;
        }
        let value = value.to_vec();
        if *kind == b'm' {
            bad_media |= !media_line_ok(&value);
            s.media.push(Media {
                media: value,
                ..Media::default()
            });
        } else if let Some(m) = s.media.last_mut() {
            m.field(*kind, value);
        } else {
            s.field(*kind, value);
        }
    }
    if bad_media {
        s.media.clear();
    }
    Some(s)
}

/// `<media> <port>[/<count>] <proto> <fmt> ...` with a media type and transport that
/// Suricata reads.
fn media_line_ok(value: &[u8]) -> bool {
    let mut words = value.split(|&c| c == b' ');
    let media = words.next().unwrap_or_default();
    let port = words.next().unwrap_or_default();
    let proto = words.next().unwrap_or_default();
    let number = |p: &[u8]| !p.is_empty() && p.iter().all(u8::is_ascii_digit);
    let port_ok = match port.iter().position(|&c| c == b'/') {
        Some(i) => number(&port[..i]) && number(&port[i + 1..]),
        None => number(port),
    };
    [&b"audio"[..], b"video", b"text", b"application", b"message"].contains(&media)
        && port_ok
        && [&b"udp"[..], b"RTP/AVP", b"RTP/SAVP"].contains(&proto)
}

/// Sets `slot` unless an earlier line did.
fn first(slot: &mut Option<Vec<u8>>, value: Vec<u8>) {
    if slot.is_none() {
        *slot = Some(value);
    }
}

impl Sdp {
    fn field(&mut self, kind: u8, value: Vec<u8>) {
        match kind {
            b'o' => first(&mut self.origin, value),
            b's' => first(&mut self.session_name, value),
            b'i' => first(&mut self.session_info, value),
            b'u' => first(&mut self.uri, value),
            b'e' => first(&mut self.email, value),
            b'p' => first(&mut self.phone_number, value),
            b'c' => first(&mut self.connection_data, value),
            b'b' => self.bandwidths.push(value),
            b't' => self.time_descriptions.push(Time {
                time: value,
                repeat_time: None,
            }),
            b'r' => {
                if let Some(t) = self.time_descriptions.last_mut() {
                    first(&mut t.repeat_time, value);
                }
            }
            b'z' => first(&mut self.timezone, value),
            b'k' => first(&mut self.encryption_key, value),
            b'a' => self.attributes.push(value),
            _ => {}
        }
    }
}

impl Media {
    fn field(&mut self, kind: u8, value: Vec<u8>) {
        match kind {
            b'i' => first(&mut self.media_info, value),
            b'c' => first(&mut self.connection_data, value),
            b'b' => self.bandwidths.push(value),
            b'k' => first(&mut self.encryption_key, value),
            b'a' => self.attributes.push(value),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_and_media_fields() {
        let body = b"v=0\r\no=alice 1 1 IN IP4 10.0.0.1\r\ns=call\r\nc=IN IP4 10.0.0.1\r\n\
            b=AS:64\r\nt=1 2\r\nr=3 4\r\nt=5 6\r\na=sendrecv\r\n\
            m=audio 4000 RTP/AVP 0\r\ni=voice\r\na=rtpmap:0 PCMU/8000\r\nm=video 5000 RTP/AVP 31\r\n";
        let s = parse(body).unwrap();
        assert_eq!(s.origin.as_deref(), Some(&b"alice 1 1 IN IP4 10.0.0.1"[..]));
        assert_eq!(s.session_name.as_deref(), Some(&b"call"[..]));
        assert_eq!(s.bandwidths, [b"AS:64".to_vec()]);
        assert_eq!(s.time_descriptions.len(), 2);
        assert_eq!(
            s.time_descriptions[0].repeat_time.as_deref(),
            Some(&b"3 4"[..])
        );
        assert_eq!(s.time_descriptions[1].repeat_time, None);
        assert_eq!(s.attributes, [b"sendrecv".to_vec()]);
        assert_eq!(s.media.len(), 2);
        assert_eq!(s.media[0].media_info.as_deref(), Some(&b"voice"[..]));
        assert_eq!(s.media[0].attributes, [b"rtpmap:0 PCMU/8000".to_vec()]);
        assert_eq!(s.media[1].media, b"video 5000 RTP/AVP 31");
    }

    #[test]
    fn a_body_without_a_version_line_is_not_sdp() {
        assert_eq!(parse(b"o=x\r\n"), None);
        assert_eq!(parse(b""), None);
        assert!(parse(b"v=0\n").is_some());
        // Malformed lines are passed over.
        assert_eq!(
            parse(b"v=0\r\n=\r\nx\r\ns=n\r\n")
                .unwrap()
                .session_name
                .unwrap(),
            b"n"
        );
    }
}
