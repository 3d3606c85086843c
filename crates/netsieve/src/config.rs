//! The parts of a suricata.yaml that `netsieve scan` honours, read as flat dotted keys.
//!
//! The file is parsed as YAML (yaml-rust2's event parser; a syntax error names its line
//! and column) and flattened: nested maps become dotted keys (`stream.reassembly.depth`),
//! a list's map items name levels under the list's key (`outputs: - eve-log: types: -
//! alert: payload: yes` gives `outputs.eve-log.types.alert.payload`), and its scalar
//! items are joined with commas under its key (`action-order: [drop, pass]` gives
//! `action-order = drop,pass`). A key given twice keeps its last value, as Suricata does.
//! Honoured keys are those of the table in `scan/settings.rs` (`netsieve scan
//! --dump-config` prints them with their values); others are reported once as ignored.

use std::collections::BTreeMap;
use std::fmt;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A YAML syntax error: where, and what.
#[derive(Debug)]
pub struct ConfigError {
    line: usize,
    column: usize,
    message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Flattened `a.b.c -> value` scalars of a YAML document.
pub fn flatten(text: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut f = Flattener::default();
    Parser::new_from_str(text)
        .load(&mut f, false)
        .map_err(|e| ConfigError {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        })?;
    Ok(f.out)
}

/// An open collection while flattening.
enum Open {
    /// A map, and its key whose value is being read.
    Map { key: Option<String> },
    /// A sequence (its items belong to the key that opened it).
    Seq,
}

#[derive(Default)]
struct Flattener {
    out: BTreeMap<String, String>,
    /// The keys leading to the collection being read.
    path: Vec<String>,
    /// Open collections, innermost last, and whether each added a key to `path`.
    open: Vec<(Open, bool)>,
}

impl Flattener {
    /// A collection starts: it takes the pending key of the map it is a value of.
    fn start(&mut self, kind: Open) {
        let named = match self.open.last_mut() {
            Some((Open::Map { key }, _)) => key.take().map(|k| self.path.push(k)).is_some(),
            _ => false,
        };
        self.open.push((kind, named));
    }

    fn end(&mut self) {
        if let Some((_, true)) = self.open.pop() {
            self.path.pop();
        }
    }

    fn scalar(&mut self, value: String, style: TScalarStyle) {
        match self.open.last_mut() {
            Some((Open::Map { key: key @ None }, _)) => *key = Some(value),
            Some((Open::Map { key }, _)) => {
                let key = key.take().unwrap_or_default();
                if style == TScalarStyle::Plain && matches!(value.as_str(), "" | "~") {
                    // A list item that is a key with no value (`- dns:`, its options
                    // all commented out) names itself, as `- dns` does; elsewhere a key
                    // with no value sets nothing.
                    let in_list = matches!(self.open.iter().rev().nth(1), Some((Open::Seq, _)));
                    if in_list {
                        self.list_item(key);
                    }
                    return;
                }
                let full = self.full(&key);
                self.out.insert(full, value);
            }
            Some((Open::Seq, _)) => self.list_item(value),
            None => {}
        }
    }

    /// An item of the list being read, joined to the others with commas.
    fn list_item(&mut self, value: String) {
        let full = self.path.join(".");
        let v = self.out.entry(full).or_default();
        if !v.is_empty() {
            v.push(',');
        }
        v.push_str(&value);
    }

    fn full(&self, key: &str) -> String {
        let mut full = self.path.join(".");
        if !full.is_empty() {
            full.push('.');
        }
        full.push_str(key);
        full
    }
}

impl MarkedEventReceiver for Flattener {
    fn on_event(&mut self, ev: Event, _mark: Marker) {
        match ev {
            Event::MappingStart(..) => self.start(Open::Map { key: None }),
            Event::SequenceStart(..) => self.start(Open::Seq),
            Event::MappingEnd | Event::SequenceEnd => self.end(),
            Event::Scalar(v, style, ..) => self.scalar(v, style),
            // An alias stands for a value netsieve does not follow: it sets nothing.
            Event::Alias(_) => {
                if let Some((Open::Map { key }, _)) = self.open.last_mut() {
                    key.take();
                }
            }
            _ => {}
        }
    }
}

/// A size as suricata.yaml writes it: `1048576`, `64kb`, `1mb`, `2gb`, `64 MiB`, `1GiB`
/// (case and spaces aside; every unit is a power of 1024, as in Suricata).
pub fn parse_size(v: &str) -> Option<u64> {
    let v: String = v
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let units = [
        ("kib", 10),
        ("kb", 10),
        ("mib", 20),
        ("mb", 20),
        ("gib", 30),
        ("gb", 30),
    ];
    let (num, shift) = units
        .iter()
        .find_map(|(u, sh)| v.strip_suffix(u).map(|n| (n, *sh)))
        .unwrap_or((v.as_str(), 0));
    let n: u64 = num.parse().ok()?;
    n.checked_mul(1 << shift)
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
        let m = flatten(y).unwrap();
        assert_eq!(m["vars.address-groups.HOME_NET"], "[10.0.0.0/8]");
        assert_eq!(m["vars.port-groups.HTTP_PORTS"], "80");
        assert_eq!(m["stream.midstream"], "true");
        assert_eq!(parse_size(&m["stream.reassembly.depth"]), Some(1 << 20));
        assert_eq!(m["outputs.eve-log.enabled"], "yes");
        let y = "outputs:\n  - eve-log:\n      types:\n        - alert:\n            payload: yes\n            packet: no\n        - flow\n";
        let m = flatten(y).unwrap();
        assert_eq!(m["outputs.eve-log.types.alert.payload"], "yes");
        assert_eq!(m["outputs.eve-log.types.alert.packet"], "no");
        assert_eq!(m["outputs.eve-log.types"], "flow");
        // A list item with its options all commented out (`- dns:`) names itself, as
        // Suricata's stock suricata.yaml writes its DNS logger; a bare key elsewhere
        // sets nothing.
        let y = "outputs:
  - eve-log:
      types:
        - alert
        - dns:
            #version: 3
        - tls:
            extended: yes
a:
  b:
";
        let m = flatten(y).unwrap();
        assert_eq!(m["outputs.eve-log.types"], "alert,dns");
        assert_eq!(m["outputs.eve-log.types.tls.extended"], "yes");
        assert!(!m.contains_key("a.b") && !m.contains_key("a"), "{m:?}");
        let m = flatten("action-order:\n  - drop\n  - pass\nstream:\n  midstream: true\n").unwrap();
        assert_eq!(m["action-order"], "drop,pass");
        assert_eq!(m["stream.midstream"], "true");
        // Flow style, a key given twice (the last wins), quoted values.
        let m = flatten("a: {b: 1, c: [x, 'y z']}\nd: 1\nd: 2\n").unwrap();
        assert_eq!(m["a.b"], "1");
        assert_eq!(m["a.c"], "x,y z");
        assert_eq!(m["d"], "2");
    }

    #[test]
    fn sizes_in_every_unit() {
        for (text, want) in [
            ("1048576", 1 << 20),
            ("64kb", 64 << 10),
            ("1mb", 1 << 20),
            ("2gb", 2 << 30),
            ("64 MiB", 64 << 20),
            ("1GiB", 1 << 30),
            ("128 mb", 128 << 20),
        ] {
            assert_eq!(parse_size(text), Some(want), "{text}");
        }
        for bad in ["", "mb", "-1mb", "1tb", "1.5mb", "99999999999999999999gb"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e =
            flatten("vars:\n  address-groups:\n    HOME_NET: \"[10.0.0.0/8]\n  port-groups: {\n")
                .unwrap_err()
                .to_string();
        assert!(
            e.starts_with("3:") || e.starts_with("4:") || e.starts_with("5:"),
            "{e}"
        );
        let e = flatten("a:\n  b: 1\n c: 2\n").unwrap_err().to_string();
        assert!(e.starts_with("3:"), "{e}");
    }

    #[test]
    fn the_stock_suricata_yaml_reads() {
        let p = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/ref/suricata-8.0.6/etc/suricata.yaml"
        );
        let Ok(text) = std::fs::read_to_string(p) else {
            eprintln!("SKIPPED: no {p}");
            return;
        };
        let m = flatten(&text).unwrap();
        assert!(m["vars.address-groups.HOME_NET"].contains("192.168.0.0/16"));
        assert_eq!(m["outputs.eve-log.filename"], "eve.json");
    }
}
