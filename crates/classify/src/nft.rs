//! `nft list ruleset` read as the `iptables-save` dump it stands for, so that nftables
//! rule sets (the default on current distributions) go through the same parser, the same
//! flattening and the same refusals as iptables ones.
//!
//! What is read: the tables of the family asked for (`ip` or `inet` for IPv4, `ip6` or
//! `inet` for IPv6), their base chains of `type filter` (named after their hook: `hook
//! input` is `INPUT`, as `--chain` names it) with their policies, their regular chains,
//! and in rules the matches that iptables-save also has: addresses, protocols, ports
//! (ranges and `{ }` lists), `ct state`, interfaces, ICMP types, `limit rate`, and the
//! verdicts `accept`, `drop`, `reject`, `jump`, `goto`, `return`; `counter`, `comment`
//! and `log` change no verdict. Anything else (named sets, `meta mark`, NAT chains'
//! rules...) makes its rule an error naming the line and column, as an unreadable
//! iptables rule is; chains of other types are skipped whole.
//!
//! The dump keeps the nft file's line numbers: each rule's iptables form is on the
//! line of the nft rule, so that errors name the nft line.

use crate::iptables::Family;
use crate::iptables::ParseError;

/// Whether `text` looks like `nft list ruleset` output (it starts with a `table`).
pub fn is_nft(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("table "))
}

/// The iptables-save dump of `text`'s filter chains for `family`, line for line, and
/// the errors of rules that have no iptables form (those lines are left empty).
pub fn to_iptables(text: &str, family: Family) -> (String, Vec<ParseError>) {
    let mut out: Vec<String> = Vec::new();
    let mut errors = Vec::new();
    // Where we are: in a table of the family, in a chain (its dump name, and whether
    // its rules are read: a filter or regular chain).
    let mut in_table = false;
    let mut reading_table = false;
    let mut chain: Option<(String, bool)> = None;
    let mut depth = 0usize;
    let mut started = false;
    for (n, raw) in text.lines().enumerate() {
        let ln = n + 1;
        let line = raw.trim();
        let mut emit = String::new();
        let opens = line.ends_with('{');
        if line.is_empty() || line.starts_with('#') {
        } else if !in_table {
            if let Some(rest) = line.strip_prefix("table ") {
                let fam = rest.split_whitespace().next().unwrap_or("");
                in_table = true;
                reading_table = match family {
                    Family::V4 => matches!(fam, "ip" | "inet"),
                    Family::V6 => matches!(fam, "ip6" | "inet"),
                };
                if reading_table && !started {
                    emit = "*filter".into();
                    started = true;
                }
            }
        } else if chain.is_none() && depth == 1 && line.starts_with("chain ") {
            let name = line["chain ".len()..]
                .trim_end_matches('{')
                .trim()
                .to_string();
            chain = Some((name.clone(), reading_table));
            if reading_table {
                emit = format!(":{name} -");
            }
        } else if chain.is_none() && depth == 1 && opens {
            // A set, a map, a flowtable: not read.
        } else if line == "}" {
            if depth == 1 {
                in_table = false;
            }
        } else if let Some((name, read)) = chain.as_mut() {
            if !*read || depth != 2 {
            } else if let Some(rest) = line.strip_prefix("type ") {
                // `type filter hook input priority filter; policy drop;`
                let words: Vec<&str> = rest
                    .split(|c: char| c.is_whitespace() || c == ';')
                    .filter(|w| !w.is_empty())
                    .collect();
                let hook = words
                    .iter()
                    .position(|w| *w == "hook")
                    .and_then(|i| words.get(i + 1));
                let policy = words
                    .iter()
                    .position(|w| *w == "policy")
                    .and_then(|i| words.get(i + 1))
                    .map_or("ACCEPT", |p| if *p == "drop" { "DROP" } else { "ACCEPT" });
                if words.first() != Some(&"filter") {
                    // A NAT or route chain: its rules decide no filtering.
                    *read = false;
                } else if let Some(hook) = hook {
                    *name = hook.to_ascii_uppercase();
                    emit = format!(":{name} {policy}");
                }
            } else if line.starts_with("policy ") {
            } else {
                match rule(line) {
                    Ok(opts) => emit = format!("-A {name} {opts}"),
                    Err((col, msg)) => {
                        let col = raw.len() - raw.trim_start().len() + col;
                        errors.push(ParseError::line_error(ln, col, msg));
                    }
                }
            }
        }
        if opens {
            depth += 1;
        } else if line == "}" {
            depth = depth.saturating_sub(1);
            if depth == 1 {
                chain = None;
            }
        }
        out.push(emit);
    }
    if started {
        out.push("COMMIT".into());
    }
    (out.join("\n"), errors)
}

/// One nft rule as iptables options, or the column (from 1) and why it has none.
fn rule(line: &str) -> Result<String, (usize, String)> {
    let words = words(line);
    let mut out: Vec<String> = Vec::new();
    let mut target: Option<String> = None;
    let mut i = 0;
    let at = |i: usize| {
        words
            .get(i)
            .map_or(line.len() + 1, |w: &(String, usize)| w.1)
    };
    let word = |i: usize| words.get(i).map_or("", |w| w.0.as_str());
    while i < words.len() {
        let w = word(i);
        let col = at(i);
        // `X != V`: the match negated.
        let negated = word(i + 2) == "!=";
        let value_at = if negated { i + 3 } else { i + 2 };
        let (value, next) = value(&words, value_at);
        let not = if negated { "! " } else { "" };
        match (w, word(i + 1)) {
            ("ip" | "ip6", "saddr") => out.push(format!("{not}-s {}", value.join(","))),
            ("ip" | "ip6", "daddr") => out.push(format!("{not}-d {}", value.join(","))),
            ("ip", "protocol") | ("ip6", "nexthdr") | ("meta", "l4proto") => {
                out.push(format!("{not}-p {}", value.join(",")))
            }
            ("tcp" | "udp", "dport" | "sport") => {
                let proto = w;
                if !out.iter().any(|o| o == &format!("-p {proto}")) {
                    out.push(format!("-p {proto}"));
                }
                let ports: Vec<String> = value.iter().map(|p| p.replace('-', ":")).collect();
                let dir = word(i + 1);
                if ports.len() == 1 {
                    out.push(format!("{not}--{dir} {}", ports[0]));
                } else {
                    out.push(format!("-m multiport {not}--{dir}s {}", ports.join(",")));
                }
            }
            ("ct", "state") => {
                let states: Vec<String> = value.iter().map(|s| s.to_ascii_uppercase()).collect();
                out.push(format!("-m conntrack {not}--ctstate {}", states.join(",")));
            }
            ("iif" | "iifname", _) | ("oif" | "oifname", _) => {
                let (value, next) =
                    self::value(&words, if word(i + 1) == "!=" { i + 2 } else { i + 1 });
                let not = if word(i + 1) == "!=" { "! " } else { "" };
                let flag = if w.starts_with('i') { "-i" } else { "-o" };
                out.push(format!("{not}{flag} {}", value.join(",")));
                i = next;
                continue;
            }
            ("icmp", "type") => out.push(format!("-p icmp {not}--icmp-type {}", value.join(","))),
            ("icmpv6", "type") => out.push(format!(
                "-p ipv6-icmp {not}--icmpv6-type {}",
                value.join(",")
            )),
            ("limit", "rate") => {
                let rate = word(i + 2);
                out.push(format!("-m limit --limit {rate}"));
                i += 3;
                if word(i) == "burst" {
                    out.push(format!("--limit-burst {}", word(i + 1)));
                    i += 3; // `burst N packets`
                }
                continue;
            }
            ("counter", _) => {
                // `counter` or `counter packets N bytes M`.
                i += if word(i + 1) == "packets" { 5 } else { 1 };
                continue;
            }
            ("comment", _) => {
                i += 2;
                continue;
            }
            ("log", _) => {
                target.get_or_insert_with(|| "LOG".into());
                // `log prefix "..." level ...`: the rest of its words are its options.
                i += 1;
                while i < words.len() && matches!(word(i), "prefix" | "level" | "flags") {
                    i += 2;
                }
                continue;
            }
            ("accept" | "drop" | "return", _) => {
                target = Some(w.to_ascii_uppercase());
                i += 1;
                continue;
            }
            ("reject", _) => {
                target = Some("REJECT".into());
                // `reject with icmp type port-unreachable`.
                i = words.len();
                continue;
            }
            ("jump", _) => {
                target = Some(word(i + 1).to_string());
                i += 2;
                continue;
            }
            ("goto", _) => {
                out.push(format!("-g {}", word(i + 1)));
                i += 2;
                continue;
            }
            _ => {
                return Err((
                    col,
                    format!("`{w}`: no iptables form (not read by netsieve)"),
                ));
            }
        }
        if value.is_empty() {
            return Err((col, format!("`{w} {}` without a value", word(i + 1))));
        }
        i = next;
    }
    if out.iter().any(|o| o.starts_with("-g ")) {
        return Ok(out.join(" "));
    }
    match target {
        Some(t) => {
            out.push(format!("-j {t}"));
            Ok(out.join(" "))
        }
        None => Err((line.len() + 1, "a rule without a verdict".into())),
    }
}

/// The value at word `i`: one word, or a `{ a, b }` list; and the word after it.
fn value(words: &[(String, usize)], i: usize) -> (Vec<String>, usize) {
    match words.get(i).map(|w| w.0.as_str()) {
        Some("{") => {
            let mut v = Vec::new();
            let mut j = i + 1;
            while j < words.len() && words[j].0 != "}" {
                if words[j].0 != "," {
                    v.push(words[j].0.clone());
                }
                j += 1;
            }
            (v, j + 1)
        }
        Some(w) => {
            // `established,related`: words joined by commas.
            let mut v = vec![w.to_string()];
            let mut j = i + 1;
            while j + 1 < words.len() && words[j].0 == "," {
                v.push(words[j + 1].0.clone());
                j += 2;
            }
            (v, j)
        }
        None => (Vec::new(), i),
    }
}

/// A rule's words with their columns (from 1): `{`, `}` and `,` are words of their own,
/// and a quoted string is one word without its quotes.
fn words(line: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' => i += 1,
            b'{' | b'}' | b',' => {
                out.push(((b[i] as char).to_string(), i + 1));
                i += 1;
            }
            b'"' => {
                let end = line[i + 1..].find('"').map_or(line.len(), |e| i + 1 + e);
                out.push((line[i + 1..end].to_string(), i + 1));
                i = end + 1;
            }
            _ => {
                let start = i;
                while i < b.len() && !matches!(b[i], b' ' | b'\t' | b'{' | b'}' | b',') {
                    i += 1;
                }
                out.push((line[start..i].to_string(), start + 1));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULESET: &str = r#"table inet filter {
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		iifname "lo" accept
		ip saddr 10.0.0.0/8 tcp dport { 22, 80 } counter packets 0 bytes 0 accept
		tcp dport 1000-2000 jump web
		icmp type echo-request limit rate 5/second accept
		meta mark 0x1 accept
	}
	chain web {
		ip daddr != 192.168.1.1 drop
		return
	}
}
table ip nat {
	chain prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		tcp dport 8080 dnat to 10.0.0.2:80
	}
}
"#;

    #[test]
    fn a_ruleset_becomes_its_dump_line_for_line() {
        assert!(is_nft(RULESET));
        let (dump, errors) = to_iptables(RULESET, Family::V4);
        let lines: Vec<&str> = dump.lines().collect();
        assert_eq!(lines[0], "*filter");
        assert_eq!(lines[1], ":input -");
        assert_eq!(lines[2], ":INPUT DROP");
        assert_eq!(
            lines[3],
            "-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"
        );
        assert_eq!(lines[4], "-A INPUT -i lo -j ACCEPT");
        assert_eq!(
            lines[5],
            "-A INPUT -s 10.0.0.0/8 -p tcp -m multiport --dports 22,80 -j ACCEPT"
        );
        assert_eq!(lines[6], "-A INPUT -p tcp --dport 1000:2000 -j web");
        assert_eq!(
            lines[7],
            "-A INPUT -p icmp --icmp-type echo-request -m limit --limit 5/second -j ACCEPT"
        );
        assert_eq!(lines[8], "", "meta mark has no form");
        assert_eq!(lines[11], "-A web ! -d 192.168.1.1 -j DROP");
        assert_eq!(lines[12], "-A web -j RETURN");
        // The NAT table's rules are not filter rules.
        assert!(!dump.contains("8080"), "{dump}");
        assert_eq!(lines.last(), Some(&"COMMIT"));
        assert_eq!(errors.len(), 1);
        assert_eq!((errors[0].line(), errors[0].column()), (9, 3));
    }

    #[test]
    fn the_dump_parses_and_flattens() {
        let (dump, _) = to_iptables(RULESET, Family::V4);
        let p = crate::iptables::parse(&dump, Family::V4, "INPUT", "r.nft").unwrap();
        assert_eq!(p.set.policy, crate::Action::Drop);
        // 4 rules of INPUT (the mark rule left out), the jump flattened into web's one
        // rule (its RETURN ends it).
        assert_eq!(p.set.rules.len(), 5, "{:?}", p.set.rules);
        assert!(
            p.set.rules[3].origin.ends_with(":12"),
            "{:?}",
            p.set.rules[3]
        );
        assert_eq!(p.set.rules[3].chain, ["INPUT", "web"]);
    }
}
