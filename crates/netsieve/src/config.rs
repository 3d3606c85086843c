//! The parts of a suricata.yaml that `netsieve scan` honours, read as flat dotted keys.
//!
//! This is a small reader for the block-style YAML that suricata.yaml files use (nested
//! maps by indentation, `key: value` scalars, `- name:` list items as map levels, other
//! list items skipped). It does not
//! implement YAML; keys it cannot place are ignored. Honoured keys: `vars.address-groups.*`,
//! `vars.port-groups.*`, `stream.midstream`, `stream.reassembly.depth`,
//! `stream.reassembly.to{server,client}-chunk-size`, `host-os-policy.*`,
//! `classification-file`, `threshold-file`, `action-order`, `exception-policy`,
//! `stream.midstream-policy`,
//! `outputs.eve-log.types.alert.*`. Others are reported once as ignored.

use std::collections::BTreeMap;

/// Flattened `a.b.c -> value` scalars.
pub fn flatten(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let no_comment = strip_comment(line);
        if no_comment.trim().is_empty() || no_comment.trim_start().starts_with("%YAML") {
            continue;
        }
        let mut indent = no_comment.len() - no_comment.trim_start().len();
        let mut t = no_comment.trim();
        if t == "---" {
            continue;
        }
        // A list item that opens a map (`- eve-log:`, `- alert:`) names a level, as in
        // `outputs.eve-log.types.alert.payload`; scalar items are joined with commas
        // under their list's key (`action-order: drop,pass,reject,alert`).
        if let Some(item) = t.strip_prefix("- ") {
            if !item.trim_end().ends_with(':') {
                while stack.last().is_some_and(|(i, _)| *i > indent) {
                    stack.pop();
                }
                if !stack.is_empty() {
                    let full = stack.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>();
                    let v: &mut String = out.entry(full.join(".")).or_default();
                    if !v.is_empty() {
                        v.push(',');
                    }
                    v.push_str(unquote(item));
                }
                continue;
            }
            indent += 2;
            t = item.trim();
        } else if t.starts_with('-') {
            continue;
        }
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let key = k.trim().trim_matches('"').to_string();
        let v = v.trim();
        let full = stack
            .iter()
            .map(|(_, k)| k.as_str())
            .chain(std::iter::once(key.as_str()))
            .collect::<Vec<_>>()
            .join(".");
        if v.is_empty() {
            stack.push((indent, key));
        } else {
            out.insert(full, unquote(v).to_string());
        }
    }
    out
}

fn strip_comment(line: &str) -> &str {
    let mut in_q = None;
    for (i, c) in line.char_indices() {
        match c {
            '"' | '\'' if in_q.is_none() => in_q = Some(c),
            c if Some(c) == in_q => in_q = None,
            '#' if in_q.is_none() => return &line[..i],
            _ => {}
        }
    }
    line
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// A size such as `1mb`, `64kb`, `1048576`.
pub fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(n) = v.strip_suffix("gb") {
        (n, 1 << 30)
    } else if let Some(n) = v.strip_suffix("mb") {
        (n, 1 << 20)
    } else if let Some(n) = v.strip_suffix("kb") {
        (n, 1 << 10)
    } else {
        (v.as_str(), 1)
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

pub fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "yes" | "true" | "on" | "1" => Some(true),
        "no" | "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_nested_maps() {
        let y = "%YAML 1.1\n---\nvars:\n  address-groups:\n    HOME_NET: \"[10.0.0.0/8]\" # c\n  port-groups:\n    HTTP_PORTS: \"80\"\nstream:\n  midstream: true\n  reassembly:\n    depth: 1mb\noutputs:\n  - eve-log:\n      enabled: yes\n";
        let m = flatten(y);
        assert_eq!(m["vars.address-groups.HOME_NET"], "[10.0.0.0/8]");
        assert_eq!(m["vars.port-groups.HTTP_PORTS"], "80");
        assert_eq!(m["stream.midstream"], "true");
        assert_eq!(parse_size(&m["stream.reassembly.depth"]), Some(1 << 20));
        assert_eq!(m["outputs.eve-log.enabled"], "yes");
        let y = "outputs:\n  - eve-log:\n      types:\n        - alert:\n            payload: yes\n            packet: no\n        - flow\n";
        let m = flatten(y);
        assert_eq!(m["outputs.eve-log.types.alert.payload"], "yes");
        assert_eq!(m["outputs.eve-log.types.alert.packet"], "no");
        assert_eq!(m["outputs.eve-log.types"], "flow");
        let m = flatten("action-order:\n  - drop\n  - pass\nstream:\n  midstream: true\n");
        assert_eq!(m["action-order"], "drop,pass");
        assert_eq!(m["stream.midstream"], "true");
    }
}
