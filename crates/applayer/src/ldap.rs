//! LDAP over TCP and UDP (CLDAP), read with rusticata's `ldap-parser` (the crate
//! Suricata's own parser uses).
//!
//! A request begins a transaction; the responses with its message ID join it, and the
//! one that ends the operation (anything but a search entry, a search reference or an
//! intermediate response) completes it. A response that answers no request begins a
//! transaction of its own; an unbind or abandon request, which has no answer, is
//! complete at once.
//!
//! StartTLS (RFC 4511 4.14): once a StartTLS request is sent, the client's bytes wait;
//! a success response hands the connection over to TLS ([`Ldap::take_handover`]: the
//! bytes of each side after it), any other lets LDAP go on with them.

use crate::held::Held;
use crate::txs::{Numbered, Txs};
use ldap_parser::FromBer;
use ldap_parser::asn1_rs::ToStatic;
use ldap_parser::ldap::{LdapMessage, ProtocolOp};
use netsieve_wire::Direction;

/// The crate's message types, which transactions hold.
pub use ldap_parser::filter;
pub use ldap_parser::ldap as proto;

/// Transactions kept per flow.
const MAX_TXS: usize = 256;
/// Responses kept per transaction (a search may answer with many entries).
const MAX_RESPONSES: usize = 1024;
/// A message longer than this ends the reading of its direction.
const MAX_MESSAGE: usize = 1 << 20;

/// A message as the crate reads it, owning its fields.
pub type Message = LdapMessage<'static>;

/// One operation: its request and the responses to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    pub request: Option<Message>,
    pub responses: Vec<Message>,
    /// Its last response came (or it expects none).
    pub complete: bool,
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// A flow's LDAP state.
#[derive(Clone, Debug, Default)]
pub struct Ldap {
    pub txs: Txs<Tx, MAX_TXS>,
    held: Held,
    start_tls: StartTls,
}

/// The StartTLS extended operation's name.
const START_TLS: &str = "1.3.6.1.4.1.1466.20037";

/// How far a StartTLS exchange went.
#[derive(Clone, Debug, Default)]
enum StartTls {
    #[default]
    No,
    /// The request with this message ID was sent: the client's next bytes (kept here)
    /// are TLS if the server agrees.
    Asked { id: u32, client: Vec<u8> },
    /// The server agreed: each side's bytes after the exchange, for TLS.
    Agreed(netsieve_wire::PerDir<Vec<u8>>),
    /// Handed over: nothing more is LDAP.
    Done,
}

/// The operation's code (`search_request` 3, see `netsieve_wire::ldap::OPERATIONS`).
pub fn operation(m: &Message) -> u32 {
    m.protocol_op.tag().0
}

/// A request expects no response.
fn unanswered(op: &ProtocolOp<'_>) -> bool {
    matches!(
        op,
        ProtocolOp::UnbindRequest | ProtocolOp::AbandonRequest(_)
    )
}

/// A response that more responses to the same request follow.
fn partial(op: &ProtocolOp<'_>) -> bool {
    matches!(
        op,
        ProtocolOp::SearchResultEntry(_)
            | ProtocolOp::SearchResultReference(_)
            | ProtocolOp::IntermediateResponse(_)
    )
}

/// The length of the BER element that starts `b` (its header included), once its
/// header is whole; `Err` when it is no SEQUENCE of definite length.
fn element_len(b: &[u8]) -> Result<Option<usize>, ()> {
    let (Some(&tag), Some(&first)) = (b.first(), b.get(1)) else {
        return Ok(None);
    };
    if tag != 0x30 || first == 0x80 {
        return Err(());
    }
    if first < 0x80 {
        return Ok(Some(2 + usize::from(first)));
    }
    let n = usize::from(first & 0x7f);
    if n > 4 {
        return Err(());
    }
    let Some(len) = b.get(2..2 + n) else {
        return Ok(None);
    };
    let len = len.iter().fold(0usize, |v, &x| (v << 8) | usize::from(x));
    Ok(Some(2 + n + len))
}

impl Ldap {
    /// A UDP datagram: its messages. Returns whether one parsed.
    pub fn datagram(&mut self, dir: Direction, mut data: &[u8]) -> bool {
        let mut parsed = false;
        while !data.is_empty() {
            let Ok((rest, m)) = LdapMessage::from_ber(data) else {
                break;
            };
            self.message(dir, m.to_static());
            parsed = true;
            data = rest;
        }
        parsed
    }

    /// In-order TCP bytes of one direction: BER messages, one after another.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        match &mut self.start_tls {
            // After the handover, nothing is LDAP; while StartTLS waits for its answer,
            // the client's bytes wait with it.
            StartTls::Done => return false,
            StartTls::Agreed(rest) => {
                rest[dir].extend_from_slice(bytes);
                return false;
            }
            StartTls::Asked { client, .. } if dir == Direction::ToServer => {
                let room = MAX_MESSAGE.saturating_sub(client.len());
                client.extend_from_slice(&bytes[..bytes.len().min(room)]);
                return false;
            }
            _ => {}
        }
        let Some(held) = self.held.take(dir, bytes) else {
            return false;
        };
        let mut used = 0;
        let mut progress = false;
        loop {
            let len = match element_len(&held[used..]) {
                Ok(Some(len)) if len <= MAX_MESSAGE => len,
                Ok(None) => break,
                Ok(Some(_)) | Err(()) => {
                    self.held.give_up(dir);
                    return progress;
                }
            };
            let Some(m) = held.get(used..used + len) else {
                break;
            };
            used += len;
            // A message the crate cannot read is passed over.
            if let Ok((_, m)) = LdapMessage::from_ber(m) {
                let m = m.to_static();
                let handed = self.start_tls_step(dir, &m, &held[used..]);
                self.message(dir, m);
                progress = true;
                if handed {
                    return true;
                }
            }
        }
        self.held.keep(dir, held, used);
        progress
    }

    /// Message `m` of direction `dir`, with `rest` after it: a StartTLS request holds
    /// the client's bytes back; its answer hands them, and the server's `rest`, over to
    /// TLS on success, or gives them back to LDAP. True when LDAP stops reading this
    /// feed (the bytes after `m` went elsewhere).
    fn start_tls_step(&mut self, dir: Direction, m: &Message, rest: &[u8]) -> bool {
        match (&self.start_tls, dir, &m.protocol_op) {
            (StartTls::No, Direction::ToServer, ProtocolOp::ExtendedRequest(x))
                if x.request_name.0 == START_TLS =>
            {
                self.start_tls = StartTls::Asked {
                    id: m.message_id.0,
                    client: rest.to_vec(),
                };
                true
            }
            (StartTls::Asked { id, .. }, Direction::ToClient, ProtocolOp::ExtendedResponse(x))
                if m.message_id.0 == *id =>
            {
                let StartTls::Asked { client, .. } = std::mem::take(&mut self.start_tls) else {
                    return false;
                };
                if x.result.result_code == proto::ResultCode::Success {
                    let sides = netsieve_wire::PerDir::new(client, rest.to_vec());
                    self.start_tls = StartTls::Agreed(sides);
                    return true;
                }
                // Refused: the client's bytes were LDAP after all.
                self.feed(Direction::ToServer, &client);
                false
            }
            _ => false,
        }
    }

    /// After a StartTLS the server agreed to: each side's bytes after the exchange, to
    /// be read as TLS; LDAP reads nothing more.
    pub fn take_handover(&mut self) -> Option<netsieve_wire::PerDir<Vec<u8>>> {
        match std::mem::replace(&mut self.start_tls, StartTls::Done) {
            StartTls::Agreed(rest) => Some(rest),
            other => {
                self.start_tls = other;
                None
            }
        }
    }

    /// One message: a request begins a transaction, a response joins its request's.
    fn message(&mut self, dir: Direction, m: Message) {
        if dir == Direction::ToServer {
            let complete = unanswered(&m.protocol_op);
            self.txs.begin(|id| Tx {
                id,
                request: Some(m),
                responses: Vec::new(),
                complete,
            });
            return;
        }
        let done = !partial(&m.protocol_op);
        let open = self.txs.iter_mut().rev().find(|t| {
            !t.complete && t.request.as_ref().map(|r| r.message_id) == Some(m.message_id)
        });
        let tx = match open {
            Some(t) => t,
            None => self.txs.begin(|id| Tx {
                id,
                request: None,
                responses: Vec::new(),
                complete: false,
            }),
        };
        if tx.responses.len() < MAX_RESPONSES {
            tx.responses.push(m);
        }
        tx.complete = done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // searchRequest(2) "dc=example,dc=com" wholeSubtree, attributes "*" and "+";
    // searchResEntry(2) with objectClass: top; searchResDone(2) success.
    const REQUEST: &[u8] = &[
        0x30, 0x3d, 0x02, 0x01, 0x02, 0x63, 0x38, 0x04, 0x11, b'd', b'c', b'=', b'e', b'x', b'a',
        b'm', b'p', b'l', b'e', b',', b'd', b'c', b'=', b'c', b'o', b'm', 0x0a, 0x01, 0x02, 0x0a,
        0x01, 0x00, 0x02, 0x02, 0x03, 0xe8, 0x02, 0x01, 0x1e, 0x01, 0x01, 0x00, 0x87, 0x0b, b'o',
        b'b', b'j', b'e', b'c', b't', b'C', b'l', b'a', b's', b's', 0x30, 0x06, 0x04, 0x01, b'*',
        0x04, 0x01, b'+',
    ];
    const ENTRY: &[u8] = &[
        0x30, 0x30, 0x02, 0x01, 0x02, 0x64, 0x2b, 0x04, 0x11, b'd', b'c', b'=', b'e', b'x', b'a',
        b'm', b'p', b'l', b'e', b',', b'd', b'c', b'=', b'c', b'o', b'm', 0x30, 0x16, 0x30, 0x14,
        0x04, 0x0b, b'o', b'b', b'j', b'e', b'c', b't', b'C', b'l', b'a', b's', b's', 0x31, 0x05,
        0x04, 0x03, b't', b'o', b'p',
    ];
    const DONE: &[u8] = &[
        0x30, 0x0c, 0x02, 0x01, 0x02, 0x65, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
    ];

    // extendedReq(1) StartTLS; extendedResp(1) success, and the same refused
    // (operationsError).
    const START_TLS_REQ: &[u8] = &[
        0x30, 0x1d, 0x02, 0x01, 0x01, 0x77, 0x18, 0x80, 0x16, b'1', b'.', b'3', b'.', b'6', b'.',
        b'1', b'.', b'4', b'.', b'1', b'.', b'1', b'4', b'6', b'6', b'.', b'2', b'0', b'0', b'3',
        b'7',
    ];
    const START_TLS_OK: &[u8] = &[
        0x30, 0x0c, 0x02, 0x01, 0x01, 0x78, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
    ];
    const START_TLS_REFUSED: &[u8] = &[
        0x30, 0x0c, 0x02, 0x01, 0x01, 0x78, 0x07, 0x0a, 0x01, 0x01, 0x04, 0x00, 0x04, 0x00,
    ];

    /// StartTLS (ldap-starttls): the client's bytes after the request wait for the
    /// answer; a success hands both sides' bytes after the exchange over to TLS, a
    /// refusal gives the client's back to LDAP.
    #[test]
    fn start_tls_hands_the_connection_over() {
        let mut l = Ldap::default();
        let hello = b"\x16\x03\x01 a client hello";
        l.feed(Direction::ToServer, &[START_TLS_REQ, &hello[..5]].concat());
        l.feed(Direction::ToServer, &hello[5..]);
        assert!(l.take_handover().is_none(), "not answered yet");
        l.feed(
            Direction::ToClient,
            &[START_TLS_OK, b"\x16\x03\x03"].concat(),
        );
        assert!(l.txs.iter().all(|t| t.complete));
        l.feed(Direction::ToClient, b" a server hello");
        let rest = l.take_handover().expect("agreed");
        assert_eq!(rest[Direction::ToServer], hello);
        assert_eq!(rest[Direction::ToClient], b"\x16\x03\x03 a server hello");
        assert!(
            !l.feed(Direction::ToServer, REQUEST),
            "nothing more is LDAP"
        );
        assert_eq!(l.txs.begun(), 1);

        let mut l = Ldap::default();
        l.feed(Direction::ToServer, &[START_TLS_REQ, REQUEST].concat());
        assert_eq!(l.txs.begun(), 1);
        l.feed(Direction::ToClient, START_TLS_REFUSED);
        assert!(l.take_handover().is_none());
        assert_eq!(
            l.txs.begun(),
            2,
            "the request after the refused one is LDAP"
        );
    }

    #[test]
    fn a_search_and_its_answers_make_one_transaction() {
        let mut l = Ldap::default();
        // The request arrives cut in two.
        assert!(!l.feed(Direction::ToServer, &REQUEST[..10]));
        assert!(l.feed(Direction::ToServer, &REQUEST[10..]));
        assert_eq!(l.txs.len(), 1);
        assert_eq!(operation(l.txs[0].request.as_ref().unwrap()), 3);
        assert!(l.feed(Direction::ToClient, ENTRY));
        assert!(!l.txs[0].complete);
        assert!(l.feed(Direction::ToClient, DONE));
        let t = &l.txs[0];
        assert!(t.complete);
        assert_eq!(
            t.responses.iter().map(operation).collect::<Vec<_>>(),
            [4, 5]
        );
        // An answer to no request is a transaction of its own.
        assert!(l.feed(Direction::ToClient, DONE));
        assert_eq!(l.txs.len(), 2);
        assert!(l.txs[1].request.is_none() && l.txs[1].complete);
    }

    #[test]
    fn datagrams_and_bad_bytes() {
        let mut l = Ldap::default();
        assert!(l.datagram(Direction::ToServer, REQUEST));
        assert!(!l.datagram(Direction::ToServer, b"\x30\x03junk"));
        // Not a SEQUENCE: the direction is read no further.
        assert!(!l.feed(Direction::ToClient, b"GET / HTTP/1.1\r\n"));
        assert!(!l.feed(Direction::ToClient, DONE));
        // A length past the cap gives up too.
        assert!(!l.feed(Direction::ToServer, &[0x30, 0x84, 0x7f, 0xff, 0xff, 0xff]));
    }
}
