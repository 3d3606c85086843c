//! Kerberos 5 (RFC 4120) over UDP and TCP, read into messages with rusticata's
//! `kerberos-parser` (the crate Suricata's own parser uses).
//!
//! Each message is a transaction of its own direction, as Suricata's are: a request
//! (AS-REQ, TGS-REQ) with the client and server names it asks about, an answer (AS-REP,
//! TGS-REP) with the names and the encryption of its part and of its ticket, or an
//! error with its code and the type of the request it answers. Over TCP every message
//! has a 4-byte length before it (RFC 4120 7.2.2).
//!
//! Bounded: a TCP record longer than [`MAX_RECORD`] ends the direction's parsing, and
//! 256 messages are kept.

use crate::held::Held;
use crate::txs::{Numbered, Txs};
use kerberos_parser::krb5::{EncryptionType, KrbError, MessageType, PrincipalName};
use kerberos_parser::krb5_parser;
use netsieve_wire::Direction;
use x509_parser::der_parser::asn1_rs::FromDer;

/// Messages kept per flow.
const MAX_TXS: usize = 256;
/// The largest TCP record read.
pub const MAX_RECORD: usize = 1 << 16;

/// Message types, as `krb5_msg_type` numbers them.
pub mod msg {
    pub const AS_REQ: u32 = 10;
    pub const AS_REP: u32 = 11;
    pub const TGS_REQ: u32 = 12;
    pub const TGS_REP: u32 = 13;
    pub const AP_REQ: u32 = 14;
    pub const AP_REP: u32 = 15;
    pub const ERROR: u32 = 30;
}

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    pub dir: Direction,
    pub msg_type: u32,
    /// The client's and the server's names, each as its parts.
    pub cname: Option<Vec<String>>,
    pub sname: Option<Vec<String>>,
    pub realm: Option<String>,
    /// An answer's encryption: of its part, and of its ticket.
    pub etype: Option<i32>,
    pub ticket_etype: Option<i32>,
    /// An error's code, and the type of the request before it.
    pub error_code: Option<i32>,
    pub failed_request: Option<u32>,
}

/// What a message says: a transaction without its number and direction.
#[derive(Default)]
struct Said {
    cname: Option<Vec<String>>,
    sname: Option<Vec<String>>,
    realm: Option<String>,
    etype: Option<i32>,
    ticket_etype: Option<i32>,
    error_code: Option<i32>,
    failed_request: Option<u32>,
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// A message type's name (`KRB_AS_REQ`).
pub fn msg_type_name(t: u32) -> String {
    format!("{:?}", MessageType(t))
}

/// An encryption type's name (`aes256-cts-hmac-sha1-96`).
pub fn etype_name(e: i32) -> String {
    format!("{:?}", EncryptionType(e))
}

/// An error code's name (`KDC_ERR_PREAUTH_REQUIRED`).
pub fn error_name(e: i32) -> String {
    format!("{:?}", kerberos_parser::krb5::ErrorCode(e))
}

/// Encryption that is weak: DES, and RC4 (Kerberoasting's target).
pub fn weak(e: i32) -> bool {
    matches!(e, 1..=7 | 23 | 24)
}

/// A flow's Kerberos state.
#[derive(Clone, Debug, Default)]
pub struct Krb5 {
    pub txs: Txs<Tx, MAX_TXS>,
    held: Held,
    /// The type of the last request, which an error answers.
    last_request: Option<u32>,
}

fn names(p: &PrincipalName) -> Vec<String> {
    p.name_string.clone()
}

impl Krb5 {
    /// A UDP datagram: one message. Returns whether it parsed.
    pub fn datagram(&mut self, dir: Direction, data: &[u8]) -> bool {
        self.message(dir, data)
    }

    /// In-order TCP bytes of one direction: records, each a length and a message.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        let Some(held) = self.held.take(dir, bytes) else {
            return false;
        };
        let mut used = 0;
        let mut progress = false;
        while held.len() - used >= 4 {
            let r = &held[used..];
            let len = u32::from_be_bytes([r[0], r[1], r[2], r[3]]) as usize;
            if len > MAX_RECORD {
                self.held.give_up(dir);
                return progress;
            }
            if r.len() < 4 + len {
                break;
            }
            progress |= self.message(dir, &r[4..4 + len]);
            used += 4 + len;
        }
        self.held.keep(dir, held, used);
        progress
    }

    /// One message, by its application tag.
    fn message(&mut self, dir: Direction, m: &[u8]) -> bool {
        let Some(&tag) = m.first() else { return false };
        // [APPLICATION n], constructed: 0x60 | n.
        let t = u32::from(tag & 0x1f);
        let said = match t {
            msg::AS_REQ | msg::TGS_REQ => {
                let parsed = if t == msg::AS_REQ {
                    krb5_parser::parse_as_req(m)
                } else {
                    krb5_parser::parse_tgs_req(m)
                };
                let Ok((_, r)) = parsed else { return false };
                self.last_request = Some(t);
                Said {
                    cname: r.req_body.cname.as_ref().map(names),
                    sname: r.req_body.sname.as_ref().map(names),
                    realm: Some(r.req_body.realm.0),
                    ..Said::default()
                }
            }
            msg::AS_REP | msg::TGS_REP => {
                let parsed = if t == msg::AS_REP {
                    krb5_parser::parse_as_rep(m)
                } else {
                    krb5_parser::parse_tgs_rep(m)
                };
                let Ok((_, r)) = parsed else { return false };
                Said {
                    cname: Some(names(&r.cname)),
                    sname: Some(names(&r.ticket.sname)),
                    realm: Some(r.crealm.0),
                    etype: Some(r.enc_part.etype.0),
                    ticket_etype: Some(r.ticket.enc_part.etype.0),
                    ..Said::default()
                }
            }
            msg::ERROR => {
                let Ok((_, e)) = KrbError::from_der(m) else {
                    return false;
                };
                Said {
                    cname: e.cname.as_ref().map(names),
                    sname: Some(names(&e.sname)),
                    realm: e.crealm.map(|r| r.0),
                    error_code: Some(e.error_code.0),
                    failed_request: self.last_request,
                    ..Said::default()
                }
            }
            _ => return false,
        };
        self.txs.begin(|id| Tx {
            id,
            dir,
            msg_type: t,
            cname: said.cname,
            sname: said.sname,
            realm: said.realm,
            etype: said.etype,
            ticket_etype: said.ticket_etype,
            error_code: said.error_code,
            failed_request: said.failed_request,
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DER element (contents under 128 bytes).
    fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut v = vec![tag, content.len() as u8];
        v.extend_from_slice(content);
        v
    }

    /// A KRB-ERROR with code `code` about server `krbtgt/EXAMPLE`.
    fn krb_error(code: u8) -> Vec<u8> {
        let int = |n: u8| tlv(0x02, &[n]);
        let string = |s: &str| tlv(0x1b, s.as_bytes());
        let names = [string("krbtgt"), string("EXAMPLE")].concat();
        let sname = tlv(
            0x30,
            &[tlv(0xa0, &int(2)), tlv(0xa1, &tlv(0x30, &names))].concat(),
        );
        let body = [
            tlv(0xa0, &int(5)),
            tlv(0xa1, &int(30)),
            tlv(0xa4, &tlv(0x18, b"20200101000000Z")),
            tlv(0xa5, &int(0)),
            tlv(0xa6, &int(code)),
            tlv(0xa9, &string("EXAMPLE")),
            tlv(0xaa, &sname),
        ]
        .concat();
        tlv(0x7e, &tlv(0x30, &body))
    }

    #[test]
    fn an_error_over_tcp_and_udp() {
        let m = krb_error(25);
        let mut k = Krb5::default();
        // Over TCP: a length, then the message, split across feeds.
        let mut rec = (m.len() as u32).to_be_bytes().to_vec();
        rec.extend_from_slice(&m);
        assert!(!k.feed(Direction::ToClient, &rec[..7]));
        assert!(k.feed(Direction::ToClient, &rec[7..]));
        assert!(k.datagram(Direction::ToClient, &m));
        for t in k.txs.iter() {
            assert_eq!(
                (t.msg_type, t.error_code, t.dir),
                (msg::ERROR, Some(25), Direction::ToClient)
            );
            assert_eq!(
                t.sname.as_deref(),
                Some(&["krbtgt".to_string(), "EXAMPLE".to_string()][..])
            );
        }
        assert_eq!(k.txs.len(), 2);
        assert_eq!(error_name(25), "KDC_ERR_PREAUTH_REQUIRED");
    }

    #[test]
    fn garbage_and_huge_records_stay_quiet() {
        let mut k = Krb5::default();
        assert!(!k.datagram(Direction::ToServer, b"\x6a\x03\x02\x01\x05"));
        assert!(!k.datagram(Direction::ToServer, b""));
        assert!(!k.feed(Direction::ToServer, &[0, 0, 0, 3, 0x6c, 0, 0]));
        assert!(!k.feed(Direction::ToClient, &[0x7f, 0xff, 0xff, 0xff]));
        assert!(!k.feed(Direction::ToClient, &[0, 0, 0, 1, 0x7e]));
        assert!(k.txs.is_empty());
        assert_eq!(msg_type_name(10), "KRB_AS_REQ");
        assert_eq!(etype_name(23), "rc4-hmac");
        assert!(weak(23) && !weak(18));
    }
}
