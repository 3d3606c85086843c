//! Packet header fields: `dsize`, `ttl`, `itype`, `icode`, `icmp_id`, `icmp_seq`, `id`,
//! `seq`, `ack`, `ip_proto`, `flags`, `sameip`, `ipopts`.

use netsieve_wire::ip_proto;

use super::{Builder, Opt, ParseError, parse_cmp};
use crate::rule::{Cmp, Cond, CsumLayer, FlagsMode, RawOption, TCP_FLAGS, VlanLayer};

/// `tcpv4-csum:valid|invalid` and the other checksum keywords (`o.name` says which).
pub(super) fn checksum(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let layer = CsumLayer::by_name(o.name).ok_or_else(|| o.bad("unknown checksum"))?;
    let valid = match o.need()?.trim() {
        "valid" => true,
        "invalid" => false,
        _ => return Err(o.bad("expected valid or invalid")),
    };
    b.rule.conds.push(Cond::Checksum { layer, valid });
    Ok(())
}

pub(super) fn dsize(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::Dsize(cmp(o)?));
    Ok(())
}

pub(super) fn ttl(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::Ttl(cmp(o)?));
    Ok(())
}

/// `tcp.mss:<536`: the value of the TCP header's MSS option.
pub(super) fn tcp_mss(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::TcpMss(cmp(o)?));
    Ok(())
}

/// `window:[!]N` (`tcp.window`).
pub(super) fn window(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?.trim();
    let (negated, v) = match v.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, v),
    };
    let size = v.parse().map_err(|_| o.bad("not a number 0-65535"))?;
    b.rule.conds.push(Cond::TcpWindow { negated, size });
    Ok(())
}

pub(super) fn icmpv6_mtu(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::Icmpv6Mtu(cmp(o)?));
    Ok(())
}

/// `vlan.id:cmp[,layer|all]`.
pub(super) fn vlan_id(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?;
    let (c, layer) = match v.rsplit_once(',') {
        Some((c, l)) => (c, l.trim()),
        None => (v, ""),
    };
    let layer = match layer {
        "" => VlanLayer::Any,
        "all" => VlanLayer::All,
        n => VlanLayer::At(
            n.parse::<i8>()
                .ok()
                .filter(|n| (-3..3).contains(n))
                .ok_or_else(|| o.bad("the layer must be -3 to 2, or all"))?,
        ),
    };
    let cmp = parse_cmp(c).ok_or_else(|| o.bad("expected N, <N, >N, !N or N-M"))?;
    b.rule.conds.push(Cond::VlanId { cmp, layer });
    Ok(())
}

/// `vlan.layers:cmp`.
pub(super) fn vlan_layers(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::VlanLayers(cmp(o)?));
    Ok(())
}

pub(super) fn itype(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::Itype(cmp(o)?));
    Ok(())
}

pub(super) fn icode(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::Icode(cmp(o)?));
    Ok(())
}

pub(super) fn icmp_id(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule
        .conds
        .push(Cond::IcmpId(o.number("not a number 0-65535")?));
    Ok(())
}

pub(super) fn icmp_seq(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule
        .conds
        .push(Cond::IcmpSeq(o.number("not a number 0-65535")?));
    Ok(())
}

pub(super) fn ip_id(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule
        .conds
        .push(Cond::IpId(o.number("not a number 0-65535")?));
    Ok(())
}

pub(super) fn seq(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule
        .conds
        .push(Cond::TcpSeq(o.number("not a number 0-4294967295")?));
    Ok(())
}

pub(super) fn ack(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    b.rule
        .conds
        .push(Cond::TcpAck(o.number("not a number 0-4294967295")?));
    Ok(())
}

/// `ip_proto:[!]N`, a comparison, or a protocol's name.
pub(super) fn ip_proto(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?.trim();
    let (negated, v) = match v.strip_prefix('!') {
        Some(r) => (true, r),
        None => (false, v),
    };
    let cmp = match ip_proto::by_name(v) {
        Some(n) => Cmp::Eq(i64::from(n)),
        None => parse_cmp(v).ok_or_else(|| o.bad("not a protocol"))?,
    };
    b.rule.conds.push(Cond::IpProto { negated, cmp });
    Ok(())
}

/// `flags:[+*!]bits[,ignored]`, bits by letter (`S`, `A`, ...; `0` for none).
pub(super) fn flags(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?.trim();
    let (set, ignore) = match v.split_once(',') {
        Some((s, i)) => (s.trim(), i.trim()),
        None => (v, ""),
    };
    let bit = |c: char| flag_bit(c).ok_or_else(|| o.bad(&format!("unknown flag '{c}'")));
    let mut mode = FlagsMode::Exact;
    let mut bits = 0u8;
    for c in set.chars() {
        match c {
            '+' => mode = FlagsMode::All,
            '*' => mode = FlagsMode::Any,
            '!' => mode = FlagsMode::Not,
            '0' => {}
            c => bits |= bit(c)?,
        }
    }
    let mut ign = 0u8;
    for c in ignore.chars() {
        ign |= bit(c)?;
    }
    b.rule.conds.push(Cond::Flags {
        mode,
        bits,
        ignore: ign,
    });
    Ok(())
}

pub(super) fn sameip(b: &mut Builder, _: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::SameIp);
    Ok(())
}

/// `ftpbounce`.
pub(super) fn ftpbounce(b: &mut Builder, _: &Opt<'_>) -> Result<(), ParseError> {
    b.rule.conds.push(Cond::FtpBounce);
    Ok(())
}

/// `ipopts:rr` and the other IPv4 option names.
pub(super) fn ipopts(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?.trim();
    if !matches!(
        v,
        "rr" | "eol" | "nop" | "ts" | "sec" | "esec" | "lsrr" | "lsrre" | "ssrr" | "satid" | "any"
    ) {
        return Err(o.bad("unknown IP option"));
    }
    b.rule.conds.push(Cond::IpOpts(v.to_string()));
    Ok(())
}

/// `decode-event:ipv6.frag_overlap` (Suricata also accepts the `decoder.` prefix).
pub(super) fn decode_event(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?.trim();
    let name = v.strip_prefix("decoder.").unwrap_or(v);
    let e = netsieve_wire::DecodeEvent::by_name(name)
        .ok_or_else(|| o.bad("a decoder event netsieve does not raise"))?;
    b.rule.conds.push(Cond::DecodeEvent(e));
    Ok(())
}

/// `app-layer-event:dns.z_flag_set`. An event netsieve does not raise leaves the rule
/// not inspected (as an unsupported keyword does), since Suricata has many more.
pub(super) fn app_layer_event(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?.trim();
    match netsieve_wire::AppEvent::by_name(v) {
        Some(e) => b.rule.conds.push(Cond::AppEvent(e)),
        None => b.rule.unsupported.push(RawOption {
            name: o.name.to_string(),
            value: o.value.map(str::to_string),
        }),
    }
    Ok(())
}

/// `stream-event:reassembly_depth_reached` (or `stream.…`). An event netsieve does not
/// raise leaves the rule not inspected, as for `app-layer-event`.
pub(super) fn stream_event(b: &mut Builder, o: &Opt<'_>) -> Result<(), ParseError> {
    let v = o.need()?.trim();
    match netsieve_wire::StreamEvent::by_name(v.strip_prefix("stream.").unwrap_or(v)) {
        Some(e) => b.rule.conds.push(Cond::StreamEvent(e)),
        None => b.rule.unsupported.push(RawOption {
            name: o.name.to_string(),
            value: o.value.map(str::to_string),
        }),
    }
    Ok(())
}

fn cmp(o: &Opt<'_>) -> Result<Cmp, ParseError> {
    parse_cmp(o.need()?).ok_or_else(|| o.bad("expected N, <N, >N, !N or N<>M"))
}

/// The bit of a TCP flag letter, in either case.
fn flag_bit(c: char) -> Option<u8> {
    let c = match c {
        '1' => 'C',
        '2' => 'E',
        c => c.to_ascii_uppercase(),
    };
    TCP_FLAGS.iter().find(|(l, _)| *l == c).map(|(_, b)| *b)
}
