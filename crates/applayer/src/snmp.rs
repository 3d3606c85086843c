//! SNMP v1, v2c and v3 over UDP, read with rusticata's `snmp-parser` (the crate
//! Suricata's own parser uses).
//!
//! Each datagram is a message and a transaction of its own direction, as Suricata's
//! are: its version, its PDU's type (or `encrypted`, for an SNMPv3 message whose PDU
//! is), the variables it names, and the community (v1, v2c) or USM user name (v3).

use crate::txs::{Numbered, Txs};
use netsieve_wire::Direction;
use snmp_parser::asn1_rs::FromBer;
use snmp_parser::{
    PduType, ScopedPduData, SecurityParameters, SnmpGenericMessage, SnmpMessage, SnmpPdu,
};

/// Messages kept per flow.
const MAX_TXS: usize = 256;
/// Variables kept per message.
const MAX_VARS: usize = 64;

/// `Tx::pdu_type` of an SNMPv3 message whose PDU is encrypted.
pub const ENCRYPTED: u32 = u32::MAX;

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    pub dir: Direction,
    /// 1, 2 (v2c) or 3.
    pub version: u32,
    /// The PDU's type (`GetRequest` 0 ... `Report` 8), or [`ENCRYPTED`].
    pub pdu_type: u32,
    /// The variables' OIDs, dotted.
    pub vars: Vec<String>,
    pub community: Option<String>,
    pub usm: Option<String>,
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// A PDU type's name as Suricata writes it (`get_next_request`).
pub fn pdu_type_name(t: u32) -> String {
    if t == ENCRYPTED {
        return "encrypted".into();
    }
    // The crate names them in CamelCase (`GetNextRequest`).
    let camel = format!("{:?}", PduType(t));
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A flow's SNMP state.
#[derive(Clone, Debug, Default)]
pub struct Snmp {
    pub txs: Txs<Tx, MAX_TXS>,
}

/// The type and variables of a PDU.
fn pdu(p: &SnmpPdu<'_>) -> (u32, Vec<String>) {
    let (t, vars) = match p {
        SnmpPdu::Generic(g) => (g.pdu_type.0, &g.var),
        SnmpPdu::Bulk(b) => (PduType::GetBulkRequest.0, &b.var),
        SnmpPdu::TrapV1(t) => (PduType::TrapV1.0, &t.var),
    };
    (
        t,
        vars.iter()
            .take(MAX_VARS)
            .map(|v| v.oid.to_id_string())
            .collect(),
    )
}

impl Snmp {
    /// A UDP datagram: one message. Returns whether it parsed.
    pub fn datagram(&mut self, dir: Direction, data: &[u8]) -> bool {
        let Ok((_, m)) = SnmpGenericMessage::from_ber(data) else {
            return false;
        };
        let v1v2 = |m: &SnmpMessage<'_>| {
            let (pdu_type, vars) = pdu(&m.pdu);
            (
                m.version + 1,
                pdu_type,
                vars,
                Some(m.community.clone()),
                None,
            )
        };
        let (version, pdu_type, vars, community, usm) = match &m {
            SnmpGenericMessage::V1(m) | SnmpGenericMessage::V2(m) => v1v2(m),
            SnmpGenericMessage::V3(m) => {
                let usm = match &m.security_params {
                    SecurityParameters::USM(u) => Some(u.msg_user_name.clone()),
                    SecurityParameters::Raw(_) => None,
                };
                let (t, vars) = match &m.data {
                    ScopedPduData::Plaintext(s) => pdu(&s.data),
                    ScopedPduData::Encrypted(_) => (ENCRYPTED, Vec::new()),
                };
                (3, t, vars, None, usm)
            }
        };
        self.txs.begin(|id| Tx {
            id,
            dir,
            version,
            pdu_type,
            vars,
            community,
            usm,
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v2c_get_request() {
        // version 1 (v2c), community "public", GetRequest id 1 for 1.3.6.1.2.1.1.3.0.
        let m = [
            0x30, 0x29, 0x02, 0x01, 0x01, 0x04, 0x06, b'p', b'u', b'b', b'l', b'i', b'c', 0xa0,
            0x1c, 0x02, 0x04, 0, 0, 0, 1, 0x02, 0x01, 0, 0x02, 0x01, 0, 0x30, 0x0e, 0x30, 0x0c,
            0x06, 0x08, 0x2b, 6, 1, 2, 1, 1, 3, 0, 0x05, 0x00,
        ];
        let mut s = Snmp::default();
        assert!(s.datagram(Direction::ToServer, &m));
        let t = &s.txs[0];
        assert_eq!((t.version, t.pdu_type), (2, 0));
        assert_eq!(t.community.as_deref(), Some("public"));
        assert_eq!(t.vars, ["1.3.6.1.2.1.1.3.0"]);
        assert_eq!(pdu_type_name(1), "get_next_request");
        assert_eq!(pdu_type_name(ENCRYPTED), "encrypted");
        assert!(!s.datagram(Direction::ToServer, &m[..20]));
        assert!(!s.datagram(Direction::ToServer, b"\x30\x80garbage"));
    }
}
