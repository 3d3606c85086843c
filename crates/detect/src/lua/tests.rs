use std::net::Ipv4Addr;

use netsieve_packet::decode::{Ip, Tcp};
use netsieve_packet::{L4, Packet};

use super::*;

/// Writes `text` as script `name` in a directory of its own; returns the path of a
/// rule file beside it (scripts are found next to their rule file).
fn script_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!(
        "netsieve-lua-{}-{}",
        std::process::id(),
        NEXT_ID.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
    dir.join("test.rules").to_string_lossy().into_owned()
}

fn load(text: &str, kind: Kind, cfg: Config) -> Result<Arc<Script>, String> {
    let rules = script_file("s.lua", text);
    Script::load_with("s.lua", &rules, kind, cfg)
}

fn matcher(body: &str) -> Arc<Script> {
    let text = format!("function init(args) return {{}} end\nfunction match(args)\n{body}\nend");
    load(&text, Kind::Match, Config::default()).unwrap()
}

fn http_packet() -> Packet {
    let mut data = vec![0u8; 54];
    data.extend_from_slice(b"GET /index.html HTTP/1.0\r\n\r\n");
    Packet {
        num: 7,
        ts: Duration::new(1_000, 5_000),
        ip: Some(Ip {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            proto: 6,
            ttl: 64,
            tos: 0,
            id: 1,
            opts: 0,
            fragment: false,
            reassembled: false,
        }),
        l4: L4::Tcp(Tcp {
            sport: 40000,
            dport: 80,
            seq: 1,
            ack: 1,
            flags: 0x18,
            window: 1024,
            fast_open: false,
            timestamp: None,
            urgent: 0,
        }),
        payload: 54..data.len(),
        data,
        ..Packet::default()
    }
}

/// The verdict of `match` on `p`, with no flow.
fn verdict(s: &Arc<Script>, p: &Packet) -> bool {
    let mut env = Env {
        packet: Some(p),
        ..Env::default()
    };
    s.matches(&mut env)
}

#[test]
fn the_packet_library_reads_the_packet_being_judged() {
    let p = http_packet();
    let s = matcher(
        r#"local packet = require("suricata.packet")
        local p = packet.get()
        local v, src, dst, proto, sp, dp = p:tuple()
        local sec, usec = p:timestamp()
        if p:payload():find("GET /index.html", 1, true) and v == 4 and src == "10.0.0.1"
            and dst == "10.0.0.2" and proto == 6 and sp == 40000 and dp == 80
            and p:pcap_cnt() == 7 and sec == 1000 and usec == 5 then
            return 1
        end
        return 0"#,
    );
    assert!(verdict(&s, &p));
    // The same script judges another packet by what it holds.
    let mut other = http_packet();
    other.num = 8;
    assert!(!verdict(&s, &other));
}

#[test]
fn ports_of_a_portless_packet_are_nil_with_why() {
    let mut p = http_packet();
    p.l4 = L4::Icmp {
        v6: false,
        itype: 8,
        icode: 0,
        id: 1,
        seq: 1,
    };
    let s = matcher(
        r#"local p = require("suricata.packet").get()
        local sp, err = p:sp()
        if sp == nil and err == "sp only available for tcp, udp and sctp" then return 1 end
        return 0"#,
    );
    assert!(verdict(&s, &p));
}

#[test]
fn flowints_and_flowvars_change_the_flow() {
    let p = http_packet();
    let s = load(
        r#"local fi = require("suricata.flowint")
        local fv = require("suricata.flowvar")
        function init(args) fi.register("count") return {} end
        function thread_init() c = fi.get("count"); v = fv.get("seen") end
        function match(args)
            local n = c:incr()
            v:set("yes", 3)
            return n == 2 and 1 or 0
        end"#,
        Kind::Match,
        Config::default(),
    )
    .unwrap();
    assert_eq!(s.flowints(), ["count"]);
    let names = vec!["other".to_string(), "count".to_string()];
    let (mut ints, mut vars) = (vec![(1, 1)], FlowVars::default());
    let mut env = Env {
        packet: Some(&p),
        flow: Some(FlowEnv {
            info: FlowInfo {
                id: 1,
                client: (IpAddr::V4(Ipv4Addr::LOCALHOST), 1),
                server: (IpAddr::V4(Ipv4Addr::LOCALHOST), 2),
                proto: 6,
                start: Duration::ZERO,
                last: Duration::ZERO,
                pkts: PerDir::splat(1),
                bytes: PerDir::splat(1),
                app: None,
                alerted: false,
            },
            ints: &mut ints,
            vars: &mut vars,
        }),
        int_names: &names,
        ..Env::default()
    };
    assert!(s.matches(&mut env));
    assert!(!s.matches(&mut env), "3 is not 2");
    drop(env);
    assert_eq!(ints, [(1, 3)]);
    assert_eq!(
        vars.vars.iter().collect::<Vec<_>>(),
        [("seen", &b"yes".to_vec())]
    );
}

#[test]
fn the_sandbox_blocks_and_limits_and_counts_each_failure() {
    let p = http_packet();
    let before = stats();
    let blocked = matcher("pcall(function() end) return 1");
    assert!(!verdict(&blocked, &p));
    let no_io = matcher("io.open('/dev/null') return 1");
    assert!(!verdict(&no_io, &p));
    let spin = matcher("local n = 0 for i = 1, 10000000 do n = n + 1 end return 1");
    assert!(!verdict(&spin, &p));
    let hog = matcher("local s = string.rep('B', 4000000) return 1");
    assert!(!verdict(&hog, &p));
    let after = stats();
    // Other tests may fail calls meanwhile: at least these.
    assert!(after.errors >= before.errors + 4);
    assert!(after.blocked_function_errors > before.blocked_function_errors);
    assert!(after.instruction_limit_errors > before.instruction_limit_errors);
    assert!(after.memory_limit_errors > before.memory_limit_errors);
}

#[test]
fn failures_say_what_failed() {
    let cfg = Config::default();
    let lua = sandbox::new(&cfg).unwrap();
    let run = |src: &str| sandbox::run_chunk(&lua, &cfg, "t.lua", src.as_bytes());
    assert_eq!(run("pcall(print)"), Err(Failure::Blocked("pcall".into())));
    assert_eq!(
        run("while true do end"),
        Err(Failure::Instructions),
        "an endless loop ends"
    );
    match run("io.open('x')") {
        Err(Failure::Error(m)) => assert!(
            m.ends_with("attempt to index a nil value (global 'io')"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        run("local t = {} for i = 1, 1e7 do t[i] = i end"),
        Err(Failure::Memory)
    );
    // Allowed: the libraries rule scripts use.
    assert_eq!(
        run("local x = string.upper(utf8.char(97)) .. table.concat({math.floor(1.5)})"),
        Ok(())
    );
}

#[test]
fn restricted_functions_can_be_allowed() {
    let cfg = Config {
        allow_restricted: true,
        ..Config::default()
    };
    let lua = sandbox::new(&cfg).unwrap();
    let ok = sandbox::run_chunk(
        &lua,
        &cfg,
        "t.lua",
        b"assert(getmetatable('x')) pcall(print)",
    );
    assert_eq!(ok, Ok(()));
}

#[test]
fn loading_reports_what_is_wrong_and_reads_init() {
    let missing = Script::load_with(
        "nope.lua",
        "/nonexistent/x.rules",
        Kind::Match,
        Config::default(),
    );
    assert!(missing.unwrap_err().contains("/nonexistent/nope.lua"));
    let bad = load(
        "function init( return {} end",
        Kind::Match,
        Config::default(),
    );
    assert!(bad.unwrap_err().starts_with("lua: s.lua: "));
    let no_match = load(
        "function init() return {} end",
        Kind::Match,
        Config::default(),
    );
    assert!(no_match.unwrap_err().contains("no match function"));
    let off = Config {
        allow_rules: false,
        ..Config::default()
    };
    assert!(load("function init() return {} end", Kind::Match, off).is_err());
    let needs = load(
        "function init() return {payload = tostring(true)} end function match() return 1 end",
        Kind::Match,
        Config::default(),
    )
    .unwrap();
    assert!(needs.needs().packet);
    assert!(!matcher("return 1").needs().packet);
}

#[test]
fn a_transform_gives_its_string_cut_to_its_length_or_leaves_the_buffer() {
    let upper = load(
        "function transform(input, args) return string.upper(input) .. args[1], #input end",
        Kind::Transform,
        Config::default(),
    )
    .unwrap();
    assert_eq!(
        upper.transform(b"abc", &["!".into()]),
        Some(b"ABC".to_vec())
    );
    let nothing = load(
        "function transform(i, a) return nil, 0 end",
        Kind::Transform,
        Config::default(),
    )
    .unwrap();
    assert_eq!(nothing.transform(b"abc", &[]), None);
    let no_len = load(
        "function transform(i, a) return i end",
        Kind::Transform,
        Config::default(),
    )
    .unwrap();
    assert_eq!(no_len.transform(b"abc", &[]), None);
}

#[test]
fn hashlib_and_base64_agree_with_known_values() {
    let p = http_packet();
    let s = matcher(
        r#"local h = require("suricata.hashlib")
        local b = require("suricata.base64")
        local x = h.sha256()
        x:update("www.") x:update("suricata-ids.org")
        if x:finalize_to_hex() ~= "080bdfdfcd8c2c7fce747f9be4603ced6253caac70894ad89d605309588c60f6" then return 0 end
        if h.md5_hexdigest("www.suricata-ids.org") ~= "27170ec0609347c6a158bb5b694822a5" then return 0 end
        if b.decode(b.encode("\0\1\2xyz")) ~= "\0\1\2xyz" then return 0 end
        return 1"#,
    );
    assert!(verdict(&s, &p));
}

#[test]
fn library_functions_outside_a_call_fail_instead_of_reading_stale_data() {
    let p = http_packet();
    let s = load(
        r#"local packet = require("suricata.packet")
        function init() return {} end
        function thread_init() ok = pcall ~= nil end
        function match() keep = packet.get() return 1 end"#,
        Kind::Match,
        Config::default(),
    )
    .unwrap();
    assert!(verdict(&s, &p));
    // The object kept from the last call finds no packet now.
    COPIES.with(|c| {
        let c = c.borrow();
        let (lua, _) = c[&s.id].state.as_ref().unwrap();
        let r = lua.load("return keep:payload()").eval::<Value>();
        assert!(r.is_err());
    });
}
