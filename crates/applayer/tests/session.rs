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

/// An HTTP/1 connection that asks for WebSocket and is answered `101` goes on as
/// WebSocket, its frames numbered after HTTP/1's transaction; the server's first frame
/// may come in the answer's segment and the client's wait for the answer. Any other
/// answer leaves it HTTP/1.
#[test]
fn an_upgrade_to_websocket_switches_on_101_only() {
    let request =
        b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
    let client_frame = [0x81, 0x82, 1, 2, 3, 4, b'h' ^ 1, b'i' ^ 2];
    let mut answer = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n".to_vec();
    answer.extend_from_slice(&[0x81, 0x02, b'o', b'k']);
    let mut s = Session::new(Limits::default());
    s.feed(Direction::ToServer, request);
    s.feed(Direction::ToServer, &client_frame);
    s.feed(Direction::ToClient, &answer);
    assert_eq!(s.proto, Some(AppProto::WebSocket));
    assert_eq!(s.orig(), Some(AppProto::Http));
    let Some(Parser::WebSocket(w)) = &s.parser else {
        panic!("a WebSocket parser")
    };
    let got: Vec<(u64, Direction, &[u8])> = w
        .txs
        .iter()
        .map(|t| (t.id, t.dir, &t.payload[..]))
        .collect();
    assert_eq!(
        got,
        [
            (1, Direction::ToClient, &b"ok"[..]),
            (2, Direction::ToServer, &b"hi"[..])
        ]
    );
    // Refused: still HTTP/1, the client's bytes read as HTTP.
    let mut s = Session::new(Limits::default());
    s.feed(Direction::ToServer, request);
    s.feed(
        Direction::ToClient,
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(s.proto, Some(AppProto::Http));
}
