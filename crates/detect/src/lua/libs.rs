//! Suricata's Lua libraries (`require("suricata.dns")`), as rule scripts use them.
//!
//! A library's functions that read the traffic (`packet.get()`, `tx:rrname()`) are in
//! [`READERS`]: each reads the [`Env`] of the call running, which the sandbox hands
//! them through a reader function it puts in the registry for the length of the call
//! ([`ENV_KEY`]). The objects they return (a packet, a transaction, a flowint) are tables
//! of such functions, so that `p:payload()` works on them. Functions that need no
//! traffic (`base64.encode`, `hashlib.sha256()`, `log.notice`) are plain functions.
//!
//! To add a function: write a [`Reader`] and list it in [`READERS`] under its library
//! and place; or, for one that reads no traffic, add it in [`module`].

use std::net::IpAddr;
use std::sync::Arc;

use mlua::{
    AnyUserData, Function, IntoLua, IntoLuaMulti, Lua, MultiValue, Table, UserData,
    UserDataMethods, Value,
};
use netsieve_applayer::{dns, tls};
use netsieve_packet::Direction;
use netsieve_packet::L4;
use netsieve_rules::{Base64Mode, DatasetCmd};

use super::Env;
use crate::app::TxRef;
use crate::digest::Hash;

/// The registry key of the reader function of the call running.
pub(super) const ENV_KEY: &str = "netsieve.env";
/// The registry keys of the byte variables `init` mapped and the flowints it
/// registered.
pub(super) const BYTEVARS_KEY: &str = "netsieve.bytevars";
pub(super) const FLOWINTS_KEY: &str = "netsieve.flowints";

/// A function that reads (or changes) what a call sees: its arguments as Lua passed
/// them (an object's methods get the object first).
type Reader = fn(&Lua, &mut Env<'_>, MultiValue) -> mlua::Result<MultiValue>;

/// Where a reader goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A function of the library's module (`packet.get`).
    Module,
    /// A method of the objects of this kind (`p:payload`).
    Object(&'static str),
}

use Place::{Module, Object};

const TS: Direction = Direction::ToServer;
const TC: Direction = Direction::ToClient;

/// Every reader: its library, its place and its name there.
const READERS: &[(&str, Place, &str, Reader)] = &[
    ("packet", Module, "get", |lua, _, _| object(lua, "packet")),
    ("packet", Object("packet"), "timestamp", packet_timestamp),
    (
        "packet",
        Object("packet"),
        "timestring_legacy",
        |l, e, _| packet_timestring(l, e, false),
    ),
    (
        "packet",
        Object("packet"),
        "timestring_iso8601",
        |l, e, _| packet_timestring(l, e, true),
    ),
    ("packet", Object("packet"), "tuple", packet_tuple),
    ("packet", Object("packet"), "sp", |l, e, _| {
        packet_port(l, e, true)
    }),
    ("packet", Object("packet"), "dp", |l, e, _| {
        packet_port(l, e, false)
    }),
    ("packet", Object("packet"), "payload", |l, e, _| {
        let p = packet(e)?;
        ret(l, l.create_string(p.payload())?)
    }),
    ("packet", Object("packet"), "packet", |l, e, _| {
        ret(l, l.create_string(&packet(e)?.data)?)
    }),
    ("packet", Object("packet"), "pcap_cnt", |l, e, _| {
        ret(l, packet(e)?.num)
    }),
    ("flow", Module, "get", |lua, e, _| match e.flow {
        Some(_) => object(lua, "flow"),
        None => ret(lua, Value::Nil),
    }),
    ("flow", Object("flow"), "timestamps", flow_timestamps),
    ("flow", Object("flow"), "tuple", flow_tuple),
    ("flow", Object("flow"), "app_layer_proto", |l, e, _| {
        let app = flow(e)?.info.app.unwrap_or("unknown");
        (app, app, app, app, app).into_lua_multi(l)
    }),
    ("flow", Object("flow"), "has_alerts", |l, e, _| {
        ret(l, flow(e)?.info.alerted)
    }),
    ("flow", Object("flow"), "stats", |l, e, _| {
        let i = &flow(e)?.info;
        let (ts, tc) = (Direction::ToServer, Direction::ToClient);
        (i.pkts[ts], i.bytes[ts], i.pkts[tc], i.bytes[tc]).into_lua_multi(l)
    }),
    ("flow", Object("flow"), "id", |l, e, _| {
        ret(l, flow(e)?.info.id)
    }),
    ("flowint", Object("flowint"), "value", flowint_value),
    ("flowint", Object("flowint"), "set", flowint_set),
    ("flowint", Object("flowint"), "incr", |l, e, a| {
        flowint_add(l, e, a, 1)
    }),
    ("flowint", Object("flowint"), "decr", |l, e, a| {
        flowint_add(l, e, a, -1)
    }),
    ("flowvar", Object("flowvar"), "value", flowvar_value),
    ("flowvar", Object("flowvar"), "set", flowvar_set),
    ("bytevar", Object("bytevar"), "value", bytevar_value),
    ("dns", Module, "get_tx", |l, e, _| get_tx(l, e, "dns")),
    ("dns", Object("dns"), "txid", |l, e, _| {
        ret(l, dns_tx(e)?.msg.id)
    }),
    ("dns", Object("dns"), "rrname", |l, e, _| {
        let t = dns_tx(e)?;
        match t.msg.questions.first() {
            Some(q) => ret(l, l.create_string(&q.name)?),
            None => ret(l, Value::Nil),
        }
    }),
    ("dns", Object("dns"), "rcode", |l, e, _| {
        ret(l, dns_tx(e)?.msg.rcode)
    }),
    ("dns", Object("dns"), "rcode_string", |l, e, _| {
        ret(l, dns::rcode_name(dns_tx(e)?.msg.rcode))
    }),
    ("dns", Object("dns"), "recursion_desired", |l, e, _| {
        ret(l, dns_tx(e)?.msg.flags & 0x0100 != 0)
    }),
    ("dns", Object("dns"), "queries", |l, e, _| {
        records(l, &dns_tx(e)?.msg.questions, false)
    }),
    ("dns", Object("dns"), "answers", |l, e, _| {
        records(l, &dns_tx(e)?.msg.answers, true)
    }),
    ("dns", Object("dns"), "authorities", |l, e, _| {
        records(l, &dns_tx(e)?.msg.authorities, true)
    }),
    ("dns", Object("dns"), "additionals", |l, e, _| {
        records(l, &dns_tx(e)?.msg.additionals, true)
    }),
    ("ntp", Module, "get_tx", |l, e, _| get_tx(l, e, "ntp")),
    ("ntp", Object("ntp"), "version", |l, e, _| {
        ret(l, ntp_tx(e)?.version)
    }),
    ("ntp", Object("ntp"), "mode", |l, e, _| {
        ret(l, ntp_tx(e)?.mode)
    }),
    ("ntp", Object("ntp"), "stratum", |l, e, _| {
        ret(l, ntp_tx(e)?.stratum)
    }),
    ("ntp", Object("ntp"), "reference_id", |l, e, _| {
        ret(l, l.create_string(ntp_tx(e)?.reference_id)?)
    }),
    ("ssh", Module, "get_tx", |l, e, _| get_tx(l, e, "ssh")),
    ("ssh", Object("ssh"), "server_proto", |l, e, _| {
        ssh_banner(l, e, Direction::ToClient, true)
    }),
    ("ssh", Object("ssh"), "server_software", |l, e, _| {
        ssh_banner(l, e, Direction::ToClient, false)
    }),
    ("ssh", Object("ssh"), "client_proto", |l, e, _| {
        ssh_banner(l, e, Direction::ToServer, true)
    }),
    ("ssh", Object("ssh"), "client_software", |l, e, _| {
        ssh_banner(l, e, Direction::ToServer, false)
    }),
    ("ssh", Object("ssh"), "client_hassh", |l, e, _| {
        ssh_hassh(l, e, Direction::ToServer, true)
    }),
    ("ssh", Object("ssh"), "client_hassh_string", |l, e, _| {
        ssh_hassh(l, e, Direction::ToServer, false)
    }),
    ("ssh", Object("ssh"), "server_hassh", |l, e, _| {
        ssh_hassh(l, e, Direction::ToClient, true)
    }),
    ("ssh", Object("ssh"), "server_hassh_string", |l, e, _| {
        ssh_hassh(l, e, Direction::ToClient, false)
    }),
    ("tls", Module, "get_tx", |l, e, _| get_tx(l, e, "tls")),
    ("tls", Object("tls"), "get_client_version", |l, e, _| {
        let t = tls_tx(e)?;
        let v = match (&t.server_hello, &t.client_hello) {
            (Some(s), _) => Some(s.version),
            (None, Some(c)) => Some(c.version),
            (None, None) => None,
        };
        ret(l, v.map(tls::version_name))
    }),
    ("tls", Object("tls"), "get_sni", |l, e, _| {
        let sni = tls_tx(e)?
            .client_hello
            .as_ref()
            .and_then(|c| c.sni.as_ref());
        match sni {
            Some(s) => ret(l, l.create_string(s)?),
            None => ret(l, Value::Nil),
        }
    }),
    ("tls", Object("tls"), "get_server_serial", |l, e, _| {
        ret(l, tls_tx(e)?.certs.first().map(|c| c.serial.clone()))
    }),
    ("tls", Object("tls"), "get_client_serial", |l, e, _| {
        ret(l, tls_tx(e)?.client_certs.first().map(|c| c.serial.clone()))
    }),
    ("tls", Object("tls"), "get_server_cert_info", |l, e, _| {
        cert_info(l, tls_tx(e)?.certs.first())
    }),
    ("tls", Object("tls"), "get_client_cert_info", |l, e, _| {
        cert_info(l, tls_tx(e)?.client_certs.first())
    }),
    ("http", Module, "get_tx", |l, e, _| get_tx(l, e, "http")),
    ("http", Object("http"), "request_line", |l, e, _| {
        opt_bytes(l, http_msg(e, TS)?.map(|m| &m.line[..]))
    }),
    ("http", Object("http"), "response_line", |l, e, _| {
        opt_bytes(l, http_msg(e, TC)?.map(|m| &m.line[..]))
    }),
    ("http", Object("http"), "request_header", |l, e, a| {
        http_header(l, e, &a, TS)
    }),
    ("http", Object("http"), "response_header", |l, e, a| {
        http_header(l, e, &a, TC)
    }),
    ("http", Object("http"), "request_uri_raw", |l, e, _| {
        let r = http_tx(e)?.request.as_ref();
        opt_bytes(l, r.map(|r| &r.uri[..]))
    }),
    (
        "http",
        Object("http"),
        "request_uri_normalized",
        |l, e, _| {
            let r = http_tx(e)?.request.as_ref();
            let uri = r.map(|r| netsieve_applayer::uri::normalize(&r.uri));
            opt_bytes(l, uri.as_deref())
        },
    ),
    ("http", Object("http"), "request_host", |l, e, _| {
        let r = http_tx(e)?.request.as_ref();
        let host = r
            .and_then(|r| r.msg.header("Host"))
            .map(|h| h.to_ascii_lowercase());
        opt_bytes(l, host.as_deref())
    }),
    ("http", Object("http"), "request_headers_raw", |l, e, _| {
        opt_bytes(l, http_msg(e, TS)?.map(|m| &m.raw_headers[..]))
    }),
    ("http", Object("http"), "response_headers_raw", |l, e, _| {
        opt_bytes(l, http_msg(e, TC)?.map(|m| &m.raw_headers[..]))
    }),
    ("http", Object("http"), "request_headers", |l, e, _| {
        headers(l, http_msg(e, TS)?)
    }),
    ("http", Object("http"), "response_headers", |l, e, _| {
        headers(l, http_msg(e, TC)?)
    }),
    ("http", Object("http"), "request_body", |l, e, _| {
        let r = http_tx(e)?.request.as_ref();
        body(l, r.map(|r| &r.msg.body[..]))
    }),
    ("http", Object("http"), "response_body", |l, e, _| {
        let r = http_tx(e)?.response.as_ref();
        body(l, r.map(|r| &r.file_data[..]))
    }),
    ("smtp", Module, "get_tx", |l, e, _| get_tx(l, e, "smtp")),
    ("smtp", Object("smtp"), "get_mail_from", |l, e, _| {
        opt_bytes(l, smtp_tx(e)?.mail_from.as_deref())
    }),
    ("smtp", Object("smtp"), "get_rcpt_list", |l, e, _| {
        let t = smtp_tx(e)?;
        let list = l.create_table()?;
        for r in &t.rcpt_to {
            list.push(l.create_string(r)?)?;
        }
        ret(l, list)
    }),
    ("smtp", Object("smtp"), "get_mime_list", |l, e, _| {
        let t = smtp_tx(e)?;
        let list = l.create_table()?;
        for h in t.mime.iter().flat_map(|m| m.headers.iter()) {
            list.push(l.create_string(&h.name)?)?;
        }
        ret(l, list)
    }),
    ("smtp", Object("smtp"), "get_mime_field", |l, e, a| {
        let name = arg_str(&a, 1)?;
        let t = smtp_tx(e)?;
        let h = t.mime.iter().flat_map(|m| m.headers.iter());
        let v = h
            .filter(|h| h.name.eq_ignore_ascii_case(name.as_bytes()))
            .map(|h| &h.value[..])
            .next();
        opt_bytes(l, v)
    }),
];

/// `require`: Suricata's libraries by name; the others, in a sandbox without the
/// package library, are not found.
pub(super) fn require_fn(lua: &Lua) -> mlua::Result<Function> {
    let original: Option<Function> = lua.globals().get("require")?;
    lua.create_function(move |lua, name: String| {
        let cache_key = format!("netsieve.module.{name}");
        if let Value::Table(t) = lua.named_registry_value::<Value>(&cache_key)? {
            return Ok(Value::Table(t));
        }
        if let Some(m) = module(lua, &name)? {
            lua.set_named_registry_value(&cache_key, &m)?;
            return Ok(Value::Table(m));
        }
        match &original {
            Some(f) => f.call(name),
            None => Err(mlua::Error::runtime(format!("module '{name}' not found"))),
        }
    })
}

/// Library `name`, if it is one of Suricata's.
fn module(lua: &Lua, name: &str) -> mlua::Result<Option<Table>> {
    let Some(lib) = name.strip_prefix("suricata.") else {
        return Ok(None);
    };
    let m = lua.create_table()?;
    for (i, (l, place, fname, _)) in READERS.iter().enumerate() {
        if *l == lib && *place == Module {
            m.set(*fname, bound(lua, i)?)?;
        }
    }
    match lib {
        "log" => {
            for (level, shown) in [
                ("debug", false),
                ("info", false),
                ("config", false),
                ("notice", true),
                ("warning", true),
                ("error", true),
            ] {
                let f = lua.create_function(move |_, msg: String| {
                    if shown {
                        eprintln!("netsieve scan: lua {level}: {msg}");
                    }
                    Ok(())
                })?;
                m.set(level, f)?;
            }
        }
        "flowint" | "flowvar" | "bytevar" => handles(lua, kind_static(lib), &m)?,
        "base64" => base64_lib(lua, &m)?,
        "hashlib" => hashlib(lua, &m)?,
        "dataset" => m.set("new", lua.create_function(|lua, ()| dataset_handle(lua))?)?,
        "util" => m.set(
            "thread_info",
            lua.create_function(|lua, ()| {
                let t = lua.create_table()?;
                t.set("id", 1)?;
                t.set("name", "W#01")?;
                t.set("group_name", "worker")?;
                Ok(t)
            })?,
        )?,
        // HASSH is always computed.
        "ssh" => m.set("enable_hassh", lua.create_function(|_, ()| Ok(()))?)?,
        "packet" | "flow" | "dns" | "ntp" | "tls" | "http" | "smtp" => {}
        _ => return Ok(None),
    }
    Ok(Some(m))
}

/// Reader `i` as a Lua function: it calls the call's reader function.
fn bound(lua: &Lua, i: usize) -> mlua::Result<Function> {
    lua.create_function(move |lua, args: MultiValue| {
        match lua.named_registry_value::<Value>(ENV_KEY)? {
            Value::Function(reader) => reader.call::<MultiValue>((i, args)),
            _ => Err(mlua::Error::runtime(
                "no packet: this function works only while the script's match runs",
            )),
        }
    })
}

/// Runs reader `i` (the sandbox's reader function calls this).
pub(super) fn dispatch(
    lua: &Lua,
    env: &mut Env<'_>,
    i: usize,
    args: MultiValue,
) -> mlua::Result<MultiValue> {
    match READERS.get(i) {
        Some((_, _, _, f)) => f(lua, env, args),
        None => Err(mlua::Error::runtime("no such function")),
    }
}

/// A new object of `kind`: a table of its methods (shared, through its metatable).
fn object(lua: &Lua, kind: &str) -> mlua::Result<MultiValue> {
    ret(lua, new_object(lua, kind)?)
}

fn new_object(lua: &Lua, kind: &str) -> mlua::Result<Table> {
    let key = format!("netsieve.methods.{kind}");
    let methods = match lua.named_registry_value::<Value>(&key)? {
        Value::Table(t) => t,
        _ => {
            let t = lua.create_table()?;
            for (i, (_, place, name, _)) in READERS.iter().enumerate() {
                if *place == Object(kind_static(kind)) {
                    t.set(*name, bound(lua, i)?)?;
                }
            }
            lua.set_named_registry_value(&key, &t)?;
            t
        }
    };
    let meta = lua.create_table()?;
    meta.set("__index", methods)?;
    let o = lua.create_table()?;
    o.set_metatable(Some(meta))?;
    Ok(o)
}

/// The kinds of objects, as [`Place::Object`] names them.
fn kind_static(kind: &str) -> &'static str {
    const KINDS: &[&str] = &[
        "packet", "flow", "flowint", "flowvar", "bytevar", "dns", "ntp", "ssh", "tls", "http",
        "smtp",
    ];
    KINDS.iter().find(|k| **k == kind).copied().unwrap_or("")
}

fn ret(lua: &Lua, v: impl IntoLua) -> mlua::Result<MultiValue> {
    v.into_lua(lua).map(|v| MultiValue::from_vec(vec![v]))
}

/// `nil, why`: how the libraries report what is not there.
fn none(lua: &Lua, why: &str) -> mlua::Result<MultiValue> {
    (Value::Nil, why).into_lua_multi(lua)
}

fn opt_bytes(lua: &Lua, b: Option<&[u8]>) -> mlua::Result<MultiValue> {
    match b {
        Some(b) => ret(lua, lua.create_string(b)?),
        None => ret(lua, Value::Nil),
    }
}

/// Argument `i` (after the object) as text.
fn arg_str(args: &MultiValue, i: usize) -> mlua::Result<String> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.to_string_lossy().to_string()),
        Some(Value::Integer(n)) => Ok(n.to_string()),
        _ => Err(mlua::Error::runtime(format!(
            "argument {i}: expected a string"
        ))),
    }
}

fn packet<'e>(e: &'e Env<'_>) -> mlua::Result<&'e netsieve_packet::Packet> {
    e.packet.ok_or_else(|| mlua::Error::runtime("no packet"))
}

fn flow<'e, 'a>(e: &'e mut Env<'a>) -> mlua::Result<&'e mut super::FlowEnv<'a>> {
    e.flow
        .as_mut()
        .ok_or_else(|| mlua::Error::runtime("no flow"))
}

fn ip_version(ip: IpAddr) -> u8 {
    if ip.is_ipv4() { 4 } else { 6 }
}

fn packet_timestamp(lua: &Lua, e: &mut Env<'_>, _: MultiValue) -> mlua::Result<MultiValue> {
    let ts = packet(e)?.ts;
    (ts.as_secs(), ts.subsec_micros()).into_lua_multi(lua)
}

fn packet_timestring(lua: &Lua, e: &mut Env<'_>, iso: bool) -> mlua::Result<MultiValue> {
    let ts = packet(e)?.ts;
    let clock = lua
        .app_data_ref::<super::Clock>()
        .map_or(super::epoch_clock as super::Clock, |c| *c);
    ret(lua, clock(ts, iso))
}

/// `ipver, src, dst, proto, sp, dp` (ICMP: its type and code for the ports).
fn packet_tuple(lua: &Lua, e: &mut Env<'_>, _: MultiValue) -> mlua::Result<MultiValue> {
    let p = packet(e)?;
    let Some(ip) = &p.ip else {
        return none(lua, "no IP header");
    };
    let (a, b) = match p.l4 {
        L4::Icmp { itype, icode, .. } => (u16::from(itype), u16::from(icode)),
        ref l4 => l4.ports(),
    };
    let (src, dst) = (ip.src.to_string(), ip.dst.to_string());
    (ip_version(ip.src), src, dst, ip.proto, a, b).into_lua_multi(lua)
}

fn packet_port(lua: &Lua, e: &mut Env<'_>, source: bool) -> mlua::Result<MultiValue> {
    let p = packet(e)?;
    match p.l4 {
        L4::Tcp(_) | L4::Udp { .. } | L4::Sctp { .. } => {
            let (sp, dp) = p.l4.ports();
            ret(lua, if source { sp } else { dp })
        }
        _ => {
            let which = if source { "sp" } else { "dp" };
            none(
                lua,
                &format!("{which} only available for tcp, udp and sctp"),
            )
        }
    }
}

fn flow_timestamps(lua: &Lua, e: &mut Env<'_>, _: MultiValue) -> mlua::Result<MultiValue> {
    let i = &flow(e)?.info;
    let (s, l) = (i.start, i.last);
    (
        s.as_secs(),
        s.subsec_micros(),
        l.as_secs(),
        l.subsec_micros(),
    )
        .into_lua_multi(lua)
}

/// The flow's `ipver, client, server, proto, client port, server port`.
fn flow_tuple(lua: &Lua, e: &mut Env<'_>, _: MultiValue) -> mlua::Result<MultiValue> {
    let i = &flow(e)?.info;
    let (c, s) = (i.client, i.server);
    (
        ip_version(c.0),
        c.0.to_string(),
        s.0.to_string(),
        i.proto,
        c.1,
        s.1,
    )
        .into_lua_multi(lua)
}

/// The name a handle (`flowint.get("x")`) was made for.
fn handle_name(args: &MultiValue) -> mlua::Result<String> {
    match args.front() {
        Some(Value::Table(t)) => t.get("name"),
        _ => Err(mlua::Error::runtime("expected a handle (call it with ':')")),
    }
}

/// The id of flowint `name` in the rule set.
fn int_id(e: &Env<'_>, name: &str) -> Option<u32> {
    e.int_names.iter().position(|n| n == name).map(|i| i as u32)
}

fn flowint_value(lua: &Lua, e: &mut Env<'_>, a: MultiValue) -> mlua::Result<MultiValue> {
    let name = handle_name(&a)?;
    let id = int_id(e, &name);
    let f = flow(e)?;
    let v = id.and_then(|id| f.ints.iter().find(|(i, _)| *i == id).map(|(_, v)| *v));
    ret(lua, v)
}

fn set_int(ints: &mut Vec<(u32, u64)>, id: u32, v: u64) {
    match ints.iter_mut().find(|(i, _)| *i == id) {
        Some(slot) => slot.1 = v,
        None => ints.push((id, v)),
    }
}

fn flowint_set(lua: &Lua, e: &mut Env<'_>, a: MultiValue) -> mlua::Result<MultiValue> {
    let name = handle_name(&a)?;
    let v = match a.get(1) {
        Some(Value::Integer(n)) => *n as u64,
        Some(Value::Number(n)) => *n as u64,
        _ => return Err(mlua::Error::runtime("flowint set: expected a number")),
    };
    let id = int_id(e, &name).ok_or_else(|| mlua::Error::runtime("unknown flowint"))?;
    set_int(flow(e)?.ints, id, v);
    ret(lua, Value::Nil)
}

fn flowint_add(lua: &Lua, e: &mut Env<'_>, a: MultiValue, by: i64) -> mlua::Result<MultiValue> {
    let name = handle_name(&a)?;
    let id = int_id(e, &name).ok_or_else(|| mlua::Error::runtime("unknown flowint"))?;
    let f = flow(e)?;
    let old = f.ints.iter().find(|(i, _)| *i == id).map(|(_, v)| *v);
    let new = match old {
        Some(v) => v.wrapping_add_signed(by),
        None if by > 0 => by as u64,
        None => 0,
    };
    set_int(f.ints, id, new);
    ret(lua, new)
}

fn flowvar_value(lua: &Lua, e: &mut Env<'_>, a: MultiValue) -> mlua::Result<MultiValue> {
    let name = handle_name(&a)?;
    let f = flow(e)?;
    let v = f
        .vars
        .vars
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.clone());
    opt_bytes(lua, v.as_deref())
}

fn flowvar_set(lua: &Lua, e: &mut Env<'_>, a: MultiValue) -> mlua::Result<MultiValue> {
    let name = handle_name(&a)?;
    let value = match a.get(1) {
        Some(Value::String(s)) => s.as_bytes().to_vec(),
        _ => return Err(mlua::Error::runtime("flowvar set: expected a string")),
    };
    let len = match a.get(2) {
        Some(Value::Integer(n)) => usize::try_from(*n).unwrap_or(0).min(value.len()),
        _ => value.len(),
    };
    let f = flow(e)?;
    f.vars
        .vars
        .set(&Arc::from(name), crate::vars::kept(&value[..len]));
    ret(lua, Value::Nil)
}

fn bytevar_value(lua: &Lua, e: &mut Env<'_>, a: MultiValue) -> mlua::Result<MultiValue> {
    let name = handle_name(&a)?;
    let v = e.bytevars.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    ret(lua, v)
}

/// `register(name)`, `get(name)` and, for byte variables, `map(sig, name)`: handles of
/// library `lib`'s variables.
fn handles(lua: &Lua, lib: &'static str, m: &Table) -> mlua::Result<()> {
    let get = lua.create_function(move |lua, name: String| {
        let h = new_object(lua, lib)?;
        h.set("name", name)?;
        Ok(h)
    })?;
    m.set("get", get)?;
    let noted = |key: &'static str| {
        move |lua: &Lua, name: String| -> mlua::Result<()> {
            let list = match lua.named_registry_value::<Value>(key)? {
                Value::Table(t) => t,
                _ => {
                    let t = lua.create_table()?;
                    lua.set_named_registry_value(key, &t)?;
                    t
                }
            };
            list.push(name)
        }
    };
    match lib {
        "bytevar" => {
            let note = noted(BYTEVARS_KEY);
            let map =
                lua.create_function(move |lua, (_, name): (Value, String)| note(lua, name))?;
            m.set("map", map)?;
        }
        "flowint" => m.set("register", lua.create_function(noted(FLOWINTS_KEY))?)?,
        _ => m.set("register", lua.create_function(|_, _: String| Ok(()))?)?,
    }
    Ok(())
}

/// The argument `init` gets: the rule (for `bytevar.map`).
pub(super) fn sig_arg(lua: &Lua) -> mlua::Result<Value> {
    lua.create_table().map(Value::Table)
}

/// The names `init` noted under registry key `key` (byte variables, flowints).
pub(super) fn registered(lua: &Lua, key: &str) -> Vec<String> {
    match lua.named_registry_value::<Value>(key) {
        Ok(Value::Table(t)) => t
            .sequence_values::<String>()
            .filter_map(Result::ok)
            .collect(),
        _ => Vec::new(),
    }
}

/// `get_tx()`: the transaction being inspected when it is of protocol `lib`.
fn get_tx(lua: &Lua, e: &mut Env<'_>, lib: &str) -> mlua::Result<MultiValue> {
    let Some(tx) = &e.tx else {
        return none(lua, "no tx available");
    };
    if tx_lib(tx) != Some(lib) {
        return none(lua, &format!("not a {lib} tx"));
    }
    object(lua, lib)
}

/// The library that reads transactions of `tx`'s protocol, if there is one.
fn tx_lib(tx: &TxRef<'_>) -> Option<&'static str> {
    Some(match tx {
        TxRef::Dns(_) => "dns",
        TxRef::Ntp(_) => "ntp",
        TxRef::Ssh(_) => "ssh",
        TxRef::Tls(_) => "tls",
        TxRef::Http(_) => "http",
        TxRef::Smtp(_) => "smtp",
        _ => return None,
    })
}

/// `fn $name(env) -> &$ty`: the transaction being inspected, when it is a `TxRef::$v`.
macro_rules! tx_of {
    ($($name:ident: $v:ident => $ty:ty;)*) => {$(
        fn $name<'e>(e: &'e Env<'_>) -> mlua::Result<&'e $ty> {
            match e.tx {
                Some(TxRef::$v(t)) => Ok(t),
                _ => Err(mlua::Error::runtime("no transaction of this protocol")),
            }
        }
    )*};
}

tx_of! {
    dns_tx: Dns => dns::Tx;
    ntp_tx: Ntp => netsieve_applayer::ntp::Tx;
    ssh_tx: Ssh => netsieve_applayer::ssh::Ssh;
    tls_tx: Tls => tls::Tls;
    http_tx: Http => netsieve_applayer::http::Tx;
    smtp_tx: Smtp => netsieve_applayer::smtp::Tx;
}

/// A DNS section as a table from 0 (as Suricata's library numbers it) of tables with
/// `rrname` and `type` (and, for records, `ttl` and an address's `addr`).
fn records(lua: &Lua, rs: &[dns::Record], answers: bool) -> mlua::Result<MultiValue> {
    let t = lua.create_table()?;
    for (i, r) in rs.iter().enumerate() {
        let x = lua.create_table()?;
        x.set("rrname", lua.create_string(&r.name)?)?;
        x.set("type", dns::rtype_name(r.rtype))?;
        if answers {
            x.set("ttl", r.ttl)?;
            let addr = match r.data.len() {
                4 if r.rtype == 1 => <[u8; 4]>::try_from(&r.data[..]).ok().map(IpAddr::from),
                16 if r.rtype == 28 => <[u8; 16]>::try_from(&r.data[..]).ok().map(IpAddr::from),
                _ => None,
            };
            if let Some(a) = addr {
                x.set("addr", a.to_string())?;
            }
        }
        t.set(i, x)?;
    }
    ret(lua, t)
}

fn ssh_banner(lua: &Lua, e: &mut Env<'_>, d: Direction, proto: bool) -> mlua::Result<MultiValue> {
    let b = ssh_tx(e)?.banner[d].as_ref();
    let v = b.map(|b| {
        if proto {
            &b.proto_version
        } else {
            &b.software_version
        }
    });
    opt_bytes(lua, v.map(|v| &v[..]))
}

fn ssh_hassh(lua: &Lua, e: &mut Env<'_>, d: Direction, hash: bool) -> mlua::Result<MultiValue> {
    let h = ssh_tx(e)?.hassh[d].as_ref();
    match h {
        Some(h) if hash => ret(lua, Hash::Md5.hex(h)),
        Some(h) => ret(lua, lua.create_string(h)?),
        None => ret(lua, Value::Nil),
    }
}

/// `version, subject, issuer, fingerprint` of a certificate.
fn cert_info(lua: &Lua, c: Option<&tls::Cert>) -> mlua::Result<MultiValue> {
    let Some(c) = c else {
        return ret(lua, Value::Nil);
    };
    let fp = netsieve_wire::hex::lower_sep(&Hash::Sha1.bytes(&c.der), ':');
    (3, c.subject.clone(), c.issuer.clone(), fp).into_lua_multi(lua)
}

/// The HTTP message of direction `d` of the transaction, if it came.
fn http_msg<'e>(
    e: &'e Env<'_>,
    d: Direction,
) -> mlua::Result<Option<&'e netsieve_applayer::http::Message>> {
    let t = http_tx(e)?;
    Ok(match d {
        Direction::ToServer => t.request.as_ref().map(|r| &r.msg),
        Direction::ToClient => t.response.as_ref().map(|r| &r.msg),
    })
}

/// `request_header(name)`, `response_header(name)`: a header's value in the message of
/// direction `d`.
fn http_header(
    lua: &Lua,
    e: &mut Env<'_>,
    a: &MultiValue,
    d: Direction,
) -> mlua::Result<MultiValue> {
    let name = arg_str(a, 1)?;
    opt_bytes(lua, http_msg(e, d)?.and_then(|m| m.header(&name)))
}

/// A message's headers as a table by name.
fn headers(lua: &Lua, m: Option<&netsieve_applayer::http::Message>) -> mlua::Result<MultiValue> {
    let t = lua.create_table()?;
    for h in m.iter().flat_map(|m| m.headers.iter()) {
        t.set(lua.create_string(&h.name)?, lua.create_string(&h.value)?)?;
    }
    ret(lua, t)
}

/// A body as a table of its chunks (one here), with its first and last offsets.
fn body(lua: &Lua, b: Option<&[u8]>) -> mlua::Result<MultiValue> {
    let Some(b) = b.filter(|b| !b.is_empty()) else {
        return ret(lua, Value::Nil);
    };
    let t = lua.create_table()?;
    t.push(lua.create_string(b)?)?;
    (t, 0, b.len()).into_lua_multi(lua)
}

/// `suricata.base64`: encoding with and without padding, and decoding as RFC 4648
/// (stops at the first byte out of the alphabet) or RFC 2045 (skips them).
fn base64_lib(lua: &Lua, m: &Table) -> mlua::Result<()> {
    let enc = |pad: bool| {
        move |lua: &Lua, s: mlua::LuaString| lua.create_string(base64_encode(&s.as_bytes(), pad))
    };
    m.set("encode", lua.create_function(enc(true))?)?;
    m.set("encode_nopad", lua.create_function(enc(false))?)?;
    for (name, mode) in [
        ("decode", Base64Mode::Strict),
        ("decode_nopad", Base64Mode::Strict),
        ("decode_padopt", Base64Mode::Strict),
        ("decode_rfc2045", Base64Mode::Rfc2045),
        ("decode_rfc4648", Base64Mode::Rfc4648),
    ] {
        let f = lua.create_function(move |lua, s: mlua::LuaString| {
            match base64_decode(&s.as_bytes(), mode) {
                Some(out) => lua.create_string(out).map(Value::String),
                None => Ok(Value::Nil),
            }
        })?;
        m.set(name, f)?;
    }
    Ok(())
}

/// Base64 text decoded up to its padding: a byte out of the alphabet fails the whole
/// (strict), is skipped (RFC 2045) or ends the text (RFC 4648).
fn base64_decode(text: &[u8], mode: Base64Mode) -> Option<Vec<u8>> {
    let mut sextets = Vec::with_capacity(text.len());
    for &c in text {
        if c == b'=' {
            break;
        }
        match netsieve_applayer::mime::base64_value(c) {
            Some(v) => sextets.push(v),
            None => match mode {
                Base64Mode::Strict => return None,
                Base64Mode::Rfc2045 => {}
                Base64Mode::Rfc4648 => break,
            },
        }
    }
    let mut out = Vec::with_capacity(sextets.len() / 4 * 3 + 2);
    for q in sextets.chunks(4) {
        let n = q
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &v)| n | u32::from(v) << (18 - 6 * i));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..q.len()]);
    }
    Some(out)
}

fn base64_encode(b: &[u8], pad: bool) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..=c.len() {
            out.push(char::from(ABC[(n >> (18 - 6 * k) & 63) as usize]));
        }
        if pad {
            out.extend(std::iter::repeat_n('=', 3 - c.len()));
        }
    }
    out
}

/// A running digest (`hashlib.sha256()`): `update`, then `finalize` or
/// `finalize_to_hex`.
struct Hasher {
    hash: Hash,
    data: Vec<u8>,
}

impl UserData for Hasher {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("update", |_, h, data: mlua::LuaString| {
            h.data.extend_from_slice(&data.as_bytes());
            Ok(())
        });
        m.add_method("finalize", |lua, h, ()| {
            lua.create_string(h.hash.bytes(&h.data))
        });
        m.add_method("finalize_to_hex", |_, h, ()| Ok(h.hash.hex(&h.data)));
    }
}

/// `suricata.hashlib`: MD5, SHA-1 and SHA-256, at once or by parts.
fn hashlib(lua: &Lua, m: &Table) -> mlua::Result<()> {
    for hash in Hash::ALL {
        let name = hash.name();
        let digest = lua.create_function(move |lua, s: mlua::LuaString| {
            lua.create_string(hash.bytes(&s.as_bytes()))
        })?;
        m.set(format!("{name}_digest"), digest)?;
        let hex = lua.create_function(move |_, s: mlua::LuaString| Ok(hash.hex(&s.as_bytes())))?;
        m.set(format!("{name}_hexdigest"), hex)?;
        let new = lua.create_function(move |lua, ()| -> mlua::Result<AnyUserData> {
            lua.create_userdata(Hasher {
                hash,
                data: Vec::new(),
            })
        })?;
        m.set(name, new)?;
    }
    Ok(())
}

/// `dataset.new()`: a handle whose `get(name)` picks a set the rules or settings made,
/// and whose `add(value, len)` adds to it (1 when it was not there, 0 when it was).
fn dataset_handle(lua: &Lua) -> mlua::Result<Table> {
    let h = lua.create_table()?;
    let get = lua.create_function(|_, (h, name): (Table, String)| {
        if crate::dataset::named(&name).is_none() {
            return Ok((Value::Nil, Some(format!("dataset '{name}' not found"))));
        }
        h.set("name", name)?;
        Ok((Value::Integer(0), None))
    })?;
    let add = lua.create_function(
        |_, (h, value, len): (Table, mlua::LuaString, Option<i64>)| {
            let name: Option<String> = h.get("name")?;
            let set = name.as_deref().and_then(crate::dataset::named);
            let Some(set) = set else {
                return Ok((
                    Value::Integer(-1),
                    Some("no dataset (get it first)".to_string()),
                ));
            };
            let bytes = value.as_bytes();
            let n = len.map_or(bytes.len(), |n| {
                usize::try_from(n).unwrap_or(0).min(bytes.len())
            });
            let (added, _) = set.apply(DatasetCmd::Set, &bytes[..n]);
            Ok((Value::Integer(i64::from(added)), None))
        },
    )?;
    h.set("get", get)?;
    h.set("add", add)?;
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_as_each_mode_reads_what_is_not_base64() {
        let spaced = b"d3 d3 Ln N1 cm lj YX Rh LW lk cy 5v cm c=";
        let name = b"www.suricata-ids.org".to_vec();
        assert_eq!(
            base64_decode(spaced, Base64Mode::Rfc2045),
            Some(name.clone())
        );
        assert_eq!(
            base64_decode(spaced, Base64Mode::Rfc4648),
            Some(b"w".to_vec())
        );
        assert_eq!(base64_decode(spaced, Base64Mode::Strict), None);
        let padded = b"d3d3LnN1cmljYXRhLWlkcy5vcmc=";
        assert_eq!(
            base64_decode(padded, Base64Mode::Strict),
            Some(name.clone())
        );
        assert_eq!(base64_decode(&padded[..27], Base64Mode::Strict), Some(name));
    }

    #[test]
    fn base64_encodes_with_and_without_padding() {
        assert_eq!(
            base64_encode(b"www.suricata-ids.org", true),
            "d3d3LnN1cmljYXRhLWlkcy5vcmc="
        );
        assert_eq!(
            base64_encode(b"www.suricata-ids.org", false),
            "d3d3LnN1cmljYXRhLWlkcy5vcmc"
        );
        assert_eq!(base64_encode(b"", true), "");
        assert_eq!(base64_encode(b"ab", true), "YWI=");
    }

    #[test]
    fn every_object_kind_is_known() {
        for (_, place, name, _) in READERS {
            if let Object(k) = place {
                assert_eq!(kind_static(k), *k, "{name}");
            }
        }
    }
}
