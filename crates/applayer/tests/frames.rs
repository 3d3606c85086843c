//! Frames: one table of streams, each with the frames its parser must mark (type,
//! stream offset, length), checked with the stream fed whole, byte by byte and in
//! uneven pieces: where a record lies does not depend on how its bytes arrived.

use netsieve_applayer::Direction::{self, ToClient, ToServer};
use netsieve_applayer::{AppProto, Session};
use netsieve_wire::FrameType::{self, *};

/// A TLS record of content type `ctype` with a `len`-byte body.
fn tls_record(ctype: u8, len: usize) -> Vec<u8> {
    let mut r = vec![ctype, 3, 3, (len >> 8) as u8, len as u8];
    r.resize(5 + len, 0xAA);
    r
}

/// A TLS stream: a ClientHello handshake record, then records past the handshake
/// (which the parser reads on only when frames are wanted).
fn tls() -> Vec<u8> {
    // ClientHello: version, random, empty session id, one suite, one compression.
    let mut hello = vec![3, 3];
    hello.extend_from_slice(&[0; 32]);
    hello.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
    let mut hs = vec![1, 0, 0, hello.len() as u8];
    hs.extend_from_slice(&hello);
    let mut s = vec![22, 3, 1, 0, hs.len() as u8];
    s.extend_from_slice(&hs);
    s.extend(tls_record(20, 1));
    s.extend(tls_record(23, 300));
    s.extend(tls_record(23, 7));
    s
}

/// A DCE/RPC bind of `len` bytes (16-byte header, little-endian lengths).
fn dcerpc_pdu(len: u16) -> Vec<u8> {
    let mut p = vec![5, 0, 11, 3, 0x10, 0, 0, 0];
    p.extend_from_slice(&len.to_le_bytes());
    p.extend_from_slice(&[0, 0, 1, 0, 0, 0]);
    p.resize(len as usize, 0);
    p
}

/// An NBSS record holding a compound of two SMB 2 messages (72 and 80 bytes).
fn smb2_compound() -> Vec<u8> {
    let msg = |len: usize, next: u32| {
        let mut m = b"\xfeSMB".to_vec();
        m.resize(64, 0);
        m[4] = 64;
        m[20..24].copy_from_slice(&next.to_le_bytes());
        m.resize(len, 0);
        m
    };
    let body = [msg(72, 72), msg(80, 0)].concat();
    let mut r = vec![0, 0, 0, body.len() as u8];
    r.extend_from_slice(&body);
    r
}

struct Case {
    name: &'static str,
    proto: AppProto,
    dir: Direction,
    stream: Vec<u8>,
    frames: Vec<(FrameType, u64, u64)>,
}

fn cases() -> Vec<Case> {
    let get = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
    let post = b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc".to_vec();
    let sip = b"REGISTER sip:x SIP/2.0\r\nVia: a\r\nContent-Length: 2\r\n\r\nhi".to_vec();
    // PINGRESP, then PUBACK of packet 1.
    let mqtt = [&[0xd0u8, 0][..], &[0x40, 2, 0, 1]].concat();
    let ssh = [
        &b"SSH-2.0-x\r\n"[..],
        // A key exchange offer (cookie, ten empty name lists, first-kex flag,
        // reserved word, four bytes of padding), then NEWKEYS.
        &[0, 0, 0, 67, 4, 20],
        &[0; 65],
        &[0, 0, 0, 12, 10, 21],
        &[0; 10],
    ]
    .concat();
    vec![
        Case {
            name: "two HTTP requests",
            proto: AppProto::Http,
            dir: ToServer,
            stream: [&get[..], &post].concat(),
            frames: vec![(Http1Request, 0, 28), (Http1Request, 28, 41)],
        },
        Case {
            name: "TLS records, to the stream's end",
            proto: AppProto::Tls,
            dir: ToServer,
            stream: tls(),
            frames: {
                let mut f = Vec::new();
                let mut at = 0;
                for len in [50, 6, 305, 12] {
                    f.push((TlsPdu, at, len));
                    f.push((TlsHdr, at, 5));
                    f.push((TlsData, at + 5, len - 5));
                    at += len;
                }
                f
            },
        },
        Case {
            name: "DCE/RPC PDUs",
            proto: AppProto::Dcerpc,
            dir: ToServer,
            stream: [dcerpc_pdu(24), dcerpc_pdu(16)].concat(),
            frames: vec![
                (DcerpcPdu, 0, 24),
                (DcerpcHdr, 0, 16),
                (DcerpcData, 16, 8),
                (DcerpcPdu, 24, 16),
                (DcerpcHdr, 24, 16),
            ],
        },
        Case {
            name: "an SMB 2 compound",
            proto: AppProto::Smb,
            dir: ToServer,
            stream: smb2_compound(),
            frames: vec![
                (SmbSmb2Pdu, 4, 72),
                (SmbSmb2Hdr, 4, 64),
                (SmbSmb2Data, 68, 8),
                (SmbSmb2Pdu, 76, 80),
                (SmbSmb2Hdr, 76, 64),
                (SmbSmb2Data, 140, 16),
            ],
        },
        Case {
            name: "MQTT packets",
            proto: AppProto::Mqtt,
            dir: ToClient,
            stream: mqtt,
            frames: vec![
                (MqttPdu, 0, 2),
                (MqttHeader, 0, 2),
                (MqttPdu, 2, 4),
                (MqttHeader, 2, 2),
                (MqttData, 4, 2),
            ],
        },
        Case {
            name: "SSH packets to NEWKEYS",
            proto: AppProto::Ssh,
            dir: ToServer,
            stream: ssh,
            frames: vec![
                (SshRecordHdr, 11, 6),
                (SshRecordData, 17, 65),
                (SshRecordPdu, 11, 71),
                (SshRecordHdr, 82, 6),
                (SshRecordData, 88, 10),
                (SshRecordPdu, 82, 16),
            ],
        },
        Case {
            name: "a SIP request over TCP",
            proto: AppProto::Sip,
            dir: ToServer,
            stream: sip,
            frames: vec![
                (SipPdu, 0, 55),
                (SipRequestLine, 0, 24),
                (SipRequestHeaders, 24, 27),
                (SipRequestBody, 53, 2),
            ],
        },
    ]
}

/// The frames of `c` with its stream fed in pieces of the sizes `cuts` cycles through.
fn frames_of(c: &Case, cuts: &[usize]) -> Vec<(FrameType, u64, u64)> {
    let mut s = Session::with(c.proto);
    s.want_frames();
    let mut rest = &c.stream[..];
    for &n in cuts.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, after) = rest.split_at(n.min(rest.len()));
        s.feed(c.dir, piece);
        rest = after;
    }
    let got: Vec<_> = s.take_frames(c.dir, true);
    for f in &got {
        assert_eq!(f.dir, c.dir, "{}", c.name);
        assert!(f.start + f.len <= c.stream.len() as u64, "{}", c.name);
    }
    got.iter().map(|f| (f.ty, f.start, f.len)).collect()
}

#[test]
fn parsers_mark_their_records_however_the_bytes_arrive() {
    for c in cases() {
        for cuts in [&[usize::MAX][..], &[1], &[3, 7, 1, 50]] {
            assert_eq!(
                frames_of(&c, cuts),
                c.frames,
                "{} in pieces {cuts:?}",
                c.name
            );
        }
    }
}

#[test]
fn no_frames_unless_wanted() {
    for c in cases() {
        let mut s = Session::with(c.proto);
        s.feed(c.dir, &c.stream);
        assert!(s.take_frames(c.dir, true).is_empty(), "{}", c.name);
    }
}
