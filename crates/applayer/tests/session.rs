//! A flow's protocol: found by its bytes, with a fallback for a flow whose port names
//! one (DNS on TCP port 53) when the bytes name none.

use netsieve_applayer::Direction;
use netsieve_applayer::http::Limits;
use netsieve_applayer::{AppProto, Parser, Session};

/// A DNS query for `a.b` behind its TCP length prefix.
fn dns_over_tcp() -> Vec<u8> {
    let mut m = vec![0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    m.extend_from_slice(&[1, b'a', 1, b'b', 0, 0, 1, 0, 1]);
    let mut framed = (m.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(&m);
    framed
}

#[test]
fn content_wins_over_the_port_and_the_port_is_the_fallback() {
    // HTTP on port 53 is HTTP.
    let mut s = Session::probing_or(Limits::default(), AppProto::Dns);
    assert!(s.feed(Direction::ToServer, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert_eq!(s.proto, Some(AppProto::Http));
    assert_eq!(s.http().map(|h| h.txs.len()), Some(1));
    // DNS bytes there are DNS, the probed bytes included, in any split.
    let q = dns_over_tcp();
    for cut in 1..q.len() {
        let mut s = Session::probing_or(Limits::default(), AppProto::Dns);
        s.feed(Direction::ToServer, &q[..cut]);
        s.feed(Direction::ToServer, &q[cut..]);
        assert_eq!(s.proto, Some(AppProto::Dns), "cut {cut}");
        let Some(Parser::Dns(d)) = &s.parser else {
            panic!("a DNS parser")
        };
        assert_eq!(d.txs.len(), 1, "cut {cut}");
        assert_eq!(d.txs[0].msg.questions[0].name, b"a.b");
    }
    // Without a fallback, such bytes name no protocol.
    let mut s = Session::new(Limits::default());
    s.feed(Direction::ToServer, &q);
    assert_eq!(s.proto, None);
}
