//! Datasets: named sets of values (strings, hashes, addresses) that rules test and
//! change with `dataset` and `datarep`. As in Suricata they belong to the process, not
//! to a rule set: every rule and thread naming a set shares it, and a reload keeps it.
//!
//! A set is made by the first rule that names it, which also loads its file (relative
//! to that rule's file): one value per line (`csv`: strings in base64, hashes in hex,
//! addresses as text, each with an optional `,reputation`), or JSON objects (`json`, an
//! array; `ndjson`, one per line) whose `value_key` gives the value and which the alert
//! carries as its `context`. A later rule naming the set with another type is refused.
//! Bounded: [`MAX_VALUES`] values and [`MAX_BYTES`] bytes of values and contexts per set
//! (adding past them fails, as past Suricata's memcap), a value at most [`MAX_VALUE`]
//! bytes, a file at most [`MAX_FILE`] bytes and a regular file, [`MAX_SETS`] sets.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, RwLock};

use netsieve_rules::{DataFormat, DataType, DatasetCmd};

/// Values a set holds at most (adding past it fails, as Suricata's memcap does).
pub const MAX_VALUES: usize = 1 << 20;
/// The longest value kept.
pub const MAX_VALUE: usize = 1 << 16;
/// Bytes of values and contexts a set holds at most.
pub const MAX_BYTES: usize = 64 << 20;
/// Sets a process holds at most.
pub const MAX_SETS: usize = 4096;
/// The largest file a set loads.
pub const MAX_FILE: u64 = 256 << 20;

/// A set's values, and the bytes they (and their contexts) take.
#[derive(Debug, Default)]
struct Values {
    map: HashMap<Vec<u8>, Entry>,
    bytes: usize,
}

impl Values {
    /// Adds `key` unless it is there or the set is full; whether it was added.
    fn add(&mut self, key: Vec<u8>, e: Entry) -> bool {
        let size = key.len() + e.context.as_ref().map_or(0, |c| c.len());
        let full = self.map.len() >= MAX_VALUES || self.bytes + size > MAX_BYTES;
        if full || key.len() > MAX_VALUE || self.map.contains_key(&key) {
            return false;
        }
        self.bytes += size;
        self.map.insert(key, e);
        true
    }

    fn remove(&mut self, key: &[u8]) -> bool {
        match self.map.remove(key) {
            Some(e) => {
                self.bytes -= key.len() + e.context.as_ref().map_or(0, |c| c.len());
                true
            }
            None => false,
        }
    }
}

/// What a set keeps with a value.
#[derive(Clone, Debug, Default)]
struct Entry {
    reputation: Option<i64>,
    /// The JSON object the value came with, as text.
    context: Option<Arc<str>>,
}

/// A named set.
#[derive(Debug)]
pub struct DataSet {
    kind: DataType,
    values: RwLock<Values>,
    /// Where it is written at exit.
    save: Mutex<Option<PathBuf>>,
}

static SETS: LazyLock<Mutex<HashMap<String, Arc<DataSet>>>> = LazyLock::new(Default::default);

/// Where `save` and `state` files go (`--data-dir`), when given.
static DATA_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Sets the directory of `save` and `state` files (Suricata's `--data-dir`).
pub fn set_data_dir(dir: Option<PathBuf>) {
    *DATA_DIR.lock().unwrap_or_else(|e| e.into_inner()) = dir;
}

/// Resolves a rule's set files: `load` relative to the directory of the rule's file
/// `rule_file`, `save` (and a `state` file, loaded and saved) relative to the data
/// directory when one is given, else to the rule's.
pub fn resolve(rule_file: &str, load: &mut Option<String>, save: &mut Option<String>) {
    let rule_dir = Path::new(rule_file).parent().unwrap_or(Path::new(""));
    let data_dir = DATA_DIR.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let state = load.is_some() && load == save;
    let join = |dir: &Path, f: &mut String| {
        if Path::new(f.as_str()).is_relative() {
            *f = dir.join(&*f).to_string_lossy().into_owned();
        }
    };
    let save_dir = data_dir.as_deref().unwrap_or(rule_dir);
    if let Some(f) = load.as_mut() {
        join(if state { save_dir } else { rule_dir }, f);
    }
    if let Some(f) = save.as_mut() {
        join(save_dir, f);
    }
}

/// How a rule declares a set: its type and the file it loads.
pub struct Declared<'a> {
    pub name: &'a str,
    pub kind: DataType,
    pub load: Option<&'a str>,
    pub save: Option<&'a str>,
    pub format: DataFormat,
    pub value_key: Option<&'a str>,
    pub array_key: Option<&'a str>,
    pub remove_key: bool,
    /// The directory of the rule's file, where relative paths start.
    pub dir: &'a Path,
}

/// The set named `name`, if a rule (or the settings) made it.
pub fn named(name: &str) -> Option<Arc<DataSet>> {
    let sets = SETS.lock().unwrap_or_else(|e| e.into_inner());
    sets.get(name).cloned()
}

/// The set `d` names, made (and loaded) if no rule named it before.
pub fn open(d: &Declared<'_>) -> Result<Arc<DataSet>, String> {
    let mut sets = SETS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = sets.get(d.name) {
        if s.kind != d.kind {
            return Err(format!(
                "dataset '{}' was declared with another type",
                d.name
            ));
        }
        if let Some(f) = d.save {
            *s.save.lock().unwrap_or_else(|e| e.into_inner()) = Some(d.dir.join(f));
        }
        return Ok(s.clone());
    }
    if sets.len() >= MAX_SETS {
        return Err(format!("dataset '{}': over {MAX_SETS} sets", d.name));
    }
    let mut values = Values::default();
    if let Some(f) = d.load {
        let path = d.dir.join(f);
        match read(&path) {
            Ok(text) => load(d, &text, &mut values)
                .map_err(|e| format!("dataset '{}': {}: {e}", d.name, path.display()))?,
            // A state file not written yet starts the set empty.
            Err(_) if d.save == d.load => {}
            Err(e) => return Err(format!("dataset '{}': {}: {e}", d.name, path.display())),
        }
    }
    let set = Arc::new(DataSet {
        kind: d.kind,
        values: RwLock::new(values),
        save: Mutex::new(d.save.map(|f| d.dir.join(f))),
    });
    sets.insert(d.name.to_string(), set.clone());
    Ok(set)
}

/// A set's file as text: a regular file of at most [`MAX_FILE`] bytes.
fn read(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, Read};
    let f = std::fs::File::open(path)?;
    if !f.metadata()?.is_file() {
        return Err(Error::other("not a regular file"));
    }
    let mut text = String::new();
    f.take(MAX_FILE + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_FILE {
        return Err(Error::other(format!("over {MAX_FILE} bytes")));
    }
    Ok(text)
}

/// Reads a set's file into `values`.
fn load(d: &Declared<'_>, text: &str, values: &mut Values) -> Result<(), String> {
    let mut add = |key: Vec<u8>, e: Entry| {
        values.add(key, e);
    };
    match d.format {
        DataFormat::Csv => {
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let (value, rep) = match line.split_once(',') {
                    Some((v, r)) => {
                        let r = r
                            .trim()
                            .parse()
                            .map_err(|_| format!("line {}: bad reputation", n + 1))?;
                        (v.trim(), Some(r))
                    }
                    None => (line, None),
                };
                let key = from_text(d.kind, value, true)
                    .ok_or_else(|| format!("line {}: bad value '{value}'", n + 1))?;
                add(
                    key,
                    Entry {
                        reputation: rep,
                        context: None,
                    },
                );
            }
        }
        DataFormat::Json | DataFormat::Ndjson => {
            let objects: Vec<serde_json::Value> = if d.format == DataFormat::Json {
                let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
                let v = match d.array_key {
                    Some(k) => path(&v, k).cloned().unwrap_or_default(),
                    None => v,
                };
                match v {
                    serde_json::Value::Array(a) => a,
                    _ => return Err("no array of objects".into()),
                }
            } else {
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(serde_json::from_str)
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.to_string())?
            };
            let key = d.value_key.unwrap_or("");
            for mut o in objects {
                let Some(value) = path(&o, key).and_then(|v| v.as_str()).map(str::to_string) else {
                    continue;
                };
                let Some(k) = from_text(d.kind, &value, false) else {
                    continue;
                };
                if d.remove_key {
                    remove(&mut o, key);
                }
                let context = Some(Arc::from(o.to_string()));
                add(
                    k,
                    Entry {
                        reputation: None,
                        context,
                    },
                );
            }
        }
    }
    Ok(())
}

/// The value at dotted path `p` in `v`.
fn path<'a>(v: &'a serde_json::Value, p: &str) -> Option<&'a serde_json::Value> {
    p.split('.').try_fold(v, |v, k| v.get(k))
}

/// Removes the value at dotted path `p` from `v`.
fn remove(v: &mut serde_json::Value, p: &str) {
    let (parent, last) = match p.rsplit_once('.') {
        Some((a, b)) => (a.split('.').try_fold(&mut *v, |v, k| v.get_mut(k)), b),
        None => (Some(v), p),
    };
    if let Some(serde_json::Value::Object(m)) = parent {
        m.remove(last);
    }
}

/// A value written as text in a set's file: a string in base64 (`csv`) or as it is
/// (JSON), a hash in hex, an address.
fn from_text(kind: DataType, s: &str, base64: bool) -> Option<Vec<u8>> {
    match kind {
        DataType::String if base64 => {
            let v = crate::eval::base64_decode(s.as_bytes());
            (!v.is_empty() || s.is_empty()).then_some(v)
        }
        DataType::String => Some(s.as_bytes().to_vec()),
        DataType::Md5 | DataType::Sha1 | DataType::Sha256 => {
            let n = digest_len(kind);
            if s.len() != 2 * n || !s.is_ascii() {
                return None;
            }
            (0..n)
                .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok())
                .collect()
        }
        DataType::Ipv4 => match s.parse::<IpAddr>().ok()? {
            IpAddr::V4(a) => Some(a.octets().to_vec()),
            IpAddr::V6(a) => a.to_ipv4_mapped().map(|a| a.octets().to_vec()),
        },
        DataType::Ip => Some(v6(s.parse().ok()?).octets().to_vec()),
    }
}

/// The bytes of a digest type's values.
fn digest_len(kind: DataType) -> usize {
    match kind {
        DataType::Md5 => 16,
        DataType::Sha1 => 20,
        _ => 32,
    }
}

fn v6(a: IpAddr) -> Ipv6Addr {
    match a {
        IpAddr::V4(a) => a.to_ipv6_mapped(),
        IpAddr::V6(a) => a,
    }
}

impl DataSet {
    /// The set's key for buffer `b`, if it is a value of the set's type (an address as
    /// its 4 or 16 bytes, a hash as its bytes).
    fn key(&self, b: &[u8]) -> Option<Vec<u8>> {
        let ok = match self.kind {
            DataType::String => b.len() <= MAX_VALUE,
            DataType::Md5 | DataType::Sha1 | DataType::Sha256 => b.len() == digest_len(self.kind),
            DataType::Ipv4 => b.len() == 4,
            DataType::Ip => {
                return match b.len() {
                    4 => Some(
                        v6(IpAddr::from(<[u8; 4]>::try_from(b).ok()?))
                            .octets()
                            .to_vec(),
                    ),
                    16 => Some(b.to_vec()),
                    _ => None,
                };
            }
        };
        ok.then(|| b.to_vec())
    }

    /// Applies `cmd` to buffer `b`: whether it matches, and the context of the value it
    /// found (JSON sets).
    pub fn apply(&self, cmd: DatasetCmd, b: &[u8]) -> (bool, Option<Arc<str>>) {
        let Some(k) = self.key(b) else {
            return (cmd == DatasetCmd::IsNotSet, None);
        };
        match cmd {
            DatasetCmd::IsSet | DatasetCmd::IsNotSet => {
                let values = self.values.read().unwrap_or_else(|e| e.into_inner());
                let found = values.map.get(&k);
                let context = found.and_then(|e| e.context.clone());
                ((cmd == DatasetCmd::IsSet) == found.is_some(), context)
            }
            DatasetCmd::Set => {
                let mut values = self.values.write().unwrap_or_else(|e| e.into_inner());
                (values.add(k, Entry::default()), None)
            }
            DatasetCmd::Unset => {
                let mut values = self.values.write().unwrap_or_else(|e| e.into_inner());
                (values.remove(&k), None)
            }
        }
    }

    /// The reputation the set gives buffer `b`, if it holds it with one.
    pub fn reputation(&self, b: &[u8]) -> Option<i64> {
        let k = self.key(b)?;
        let values = self.values.read().unwrap_or_else(|e| e.into_inner());
        values.map.get(&k)?.reputation
    }

    /// Writes the set to its `save` file, in the form `load` reads.
    fn write(&self) -> std::io::Result<()> {
        let Some(path) = self.save.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return Ok(());
        };
        let values = self.values.read().unwrap_or_else(|e| e.into_inner());
        let mut lines: Vec<String> = values.map.keys().map(|k| to_text(self.kind, k)).collect();
        lines.sort();
        let mut text = lines.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        std::fs::write(path, text)
    }
}

/// A value as a set's file writes it.
fn to_text(kind: DataType, k: &[u8]) -> String {
    match kind {
        DataType::String => base64(k),
        DataType::Md5 | DataType::Sha1 | DataType::Sha256 => netsieve_wire::hex::lower(k),
        DataType::Ipv4 => {
            <[u8; 4]>::try_from(k).map_or_else(|_| String::new(), |a| IpAddr::from(a).to_string())
        }
        DataType::Ip => <[u8; 16]>::try_from(k)
            .map_or_else(|_| String::new(), |a| Ipv6Addr::from(a).to_string()),
    }
}

fn base64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Writes every set that has a `save` file (at the end of a run). Returns the errors,
/// one per set that could not be written.
pub fn save_all() -> Vec<String> {
    let sets = SETS.lock().unwrap_or_else(|e| e.into_inner());
    sets.iter()
        .filter_map(|(name, s)| s.write().err().map(|e| format!("dataset '{name}': {e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared<'a>(name: &'a str, kind: DataType, dir: &'a Path) -> Declared<'a> {
        Declared {
            name,
            kind,
            load: None,
            save: None,
            format: DataFormat::Csv,
            value_key: None,
            array_key: None,
            remove_key: false,
            dir,
        }
    }

    #[test]
    fn commands_and_types() {
        let dir = tempdir();
        let s = open(&declared("t-cmds", DataType::String, &dir)).unwrap();
        assert!(!s.apply(DatasetCmd::IsSet, b"a").0);
        assert!(s.apply(DatasetCmd::IsNotSet, b"a").0);
        assert!(s.apply(DatasetCmd::Set, b"a").0);
        assert!(!s.apply(DatasetCmd::Set, b"a").0);
        assert!(s.apply(DatasetCmd::IsSet, b"a").0);
        assert!(s.apply(DatasetCmd::Unset, b"a").0);
        assert!(!s.apply(DatasetCmd::Unset, b"a").0);
        // The same name with another type is refused; with its own, it is the same set.
        assert!(open(&declared("t-cmds", DataType::Ip, &dir)).is_err());
        s.apply(DatasetCmd::Set, b"b");
        let again = open(&declared("t-cmds", DataType::String, &dir)).unwrap();
        assert!(again.apply(DatasetCmd::IsSet, b"b").0);
        // An IPv4 address in an `ip` set is held mapped.
        let ip = open(&declared("t-ip", DataType::Ip, &dir)).unwrap();
        ip.apply(DatasetCmd::Set, &[10, 0, 0, 1]);
        let mapped = std::net::Ipv4Addr::new(10, 0, 0, 1)
            .to_ipv6_mapped()
            .octets();
        assert!(ip.apply(DatasetCmd::IsSet, &mapped).0);
        assert!(!ip.apply(DatasetCmd::IsSet, &[10, 0, 0, 2]).0);
    }

    #[test]
    fn files_load_and_save() {
        let dir = tempdir();
        std::fs::write(dir.join("s.csv"), "Y3VybC83LjQzLjA=\n# note\nYQ==,7\n").unwrap();
        std::fs::write(
            dir.join("j.json"),
            r#"{"list": [{"v": {"h": "x.example"}, "tag": 1}, {"tag": 2}]}"#,
        )
        .unwrap();
        let mut d = declared("t-load", DataType::String, &dir);
        d.load = Some("s.csv");
        d.save = Some("out.csv");
        let s = open(&d).unwrap();
        assert!(s.apply(DatasetCmd::IsSet, b"curl/7.43.0").0);
        assert_eq!(s.reputation(b"a"), Some(7));
        let mut j = declared("t-json", DataType::String, &dir);
        j.load = Some("j.json");
        j.format = DataFormat::Json;
        j.array_key = Some("list");
        j.value_key = Some("v.h");
        j.remove_key = true;
        let js = open(&j).unwrap();
        let (hit, ctx) = js.apply(DatasetCmd::IsSet, b"x.example");
        assert!(hit);
        assert_eq!(ctx.as_deref(), Some(r#"{"tag":1,"v":{}}"#));
        assert!(save_all().is_empty());
        let saved = std::fs::read_to_string(dir.join("out.csv")).unwrap();
        assert_eq!(saved, "Y3VybC83LjQzLjA=\nYQ==\n");
        // Not a regular file: refused, not read without end.
        let mut z = declared("t-dev", DataType::String, Path::new("/dev"));
        z.load = Some("zero");
        assert!(open(&z).unwrap_err().contains("regular"));
        // A file that does not parse is an error naming it.
        std::fs::write(dir.join("bad.csv"), "not base64 ***\n").unwrap();
        let mut b = declared("t-bad", DataType::Md5, &dir);
        b.load = Some("bad.csv");
        assert!(open(&b).unwrap_err().contains("bad.csv"));
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("netsieve-dataset-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
