//! IP reputation (Suricata's `reputation-categories-file`, `reputation-files` and the
//! `iprep` keyword): a score from 0 to 127 per host (or network) and category, loaded
//! once per process before the rules, which name categories by their short name.
//!
//! The categories file has lines `id,short name,description` (ids 1 to 60); a
//! reputation file has lines `address[/prefix],category id,score`. A bad line is
//! reported with its file and line and skipped. Bounded: [`MAX_ENTRIES`] entries.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, RwLock};

use netsieve_rules::{Cmp, IpRepSide};

/// Entries kept at most (a line past it is reported and skipped).
pub const MAX_ENTRIES: usize = 1 << 22;

/// The reputation of the process.
#[derive(Debug, Default)]
pub struct Reputation {
    /// Category ids by short name.
    categories: HashMap<String, u8>,
    /// Hosts: (category, score) pairs.
    hosts: HashMap<IpAddr, Vec<(u8, u8)>>,
    /// Networks: (network, prefix length, category, score), most specific first.
    nets: Vec<(IpAddr, u8, u8, u8)>,
}

static REPUTATION: RwLock<Option<Arc<Reputation>>> = RwLock::new(None);

/// Reads the categories file and the reputation files, and makes them the process's
/// reputation. Returns the lines skipped, each as `file:line: why`; `Err` when a file
/// cannot be read.
pub fn load(categories: &Path, files: &[impl AsRef<Path>]) -> Result<Vec<String>, String> {
    let mut rep = Reputation::default();
    let mut skipped = Vec::new();
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    for (n, line) in read(categories)?.lines().enumerate() {
        let at = || format!("{}:{}", categories.display(), n + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut f = line.splitn(3, ',');
        match (f.next().map(str::parse::<u8>), f.next()) {
            (Some(Ok(id @ 1..=60)), Some(name)) if !name.trim().is_empty() => {
                rep.categories.insert(name.trim().to_string(), id);
            }
            _ => skipped.push(format!("{}: not `id,name,description`", at())),
        }
    }
    let known: Vec<u8> = rep.categories.values().copied().collect();
    for file in files {
        let file = file.as_ref();
        for (n, line) in read(file)?.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = || format!("{}:{}", file.display(), n + 1);
            if rep.len() >= MAX_ENTRIES {
                skipped.push(format!("{}: more than {MAX_ENTRIES} entries", at()));
                break;
            }
            match entry(line) {
                Some((ip, prefix, cat, score)) if known.contains(&cat) => {
                    rep.add(ip, prefix, cat, score)
                }
                Some(_) => skipped.push(format!("{}: unknown category", at())),
                None => skipped.push(format!("{}: not `address,category,score`", at())),
            }
        }
    }
    rep.nets.sort_by_key(|n| std::cmp::Reverse(n.1));
    *REPUTATION.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(rep));
    Ok(skipped)
}

/// `address[/prefix],category,score` (score 0 to 127).
fn entry(line: &str) -> Option<(IpAddr, u8, u8, u8)> {
    let mut f = line.split(',').map(str::trim);
    let (addr, cat, score) = (f.next()?, f.next()?, f.next()?);
    let (ip, prefix) = match addr.split_once('/') {
        Some((a, p)) => (a.parse::<IpAddr>().ok()?, p.parse::<u8>().ok()?),
        None => {
            let ip = addr.parse::<IpAddr>().ok()?;
            (ip, if ip.is_ipv4() { 32 } else { 128 })
        }
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let score = score.parse::<u8>().ok().filter(|&s| s <= 127)?;
    (prefix <= max && f.next().is_none()).then_some((ip, prefix, cat.parse().ok()?, score))
}

impl Reputation {
    fn len(&self) -> usize {
        self.hosts.len() + self.nets.len()
    }

    fn add(&mut self, ip: IpAddr, prefix: u8, cat: u8, score: u8) {
        let host = prefix == if ip.is_ipv4() { 32 } else { 128 };
        if !host {
            self.nets.push((mask(ip, prefix), prefix, cat, score));
            return;
        }
        let scores = self.hosts.entry(ip).or_default();
        // A later line for the same host and category replaces the earlier.
        scores.retain(|e| e.0 != cat);
        scores.push((cat, score));
    }

    /// The score of `ip` in category `cat`: its own, else its most specific network's.
    fn score(&self, ip: IpAddr, cat: u8) -> Option<u8> {
        let own = self
            .hosts
            .get(&ip)
            .and_then(|v| v.iter().find(|e| e.0 == cat));
        if let Some(e) = own {
            return Some(e.1);
        }
        self.nets
            .iter()
            .find(|n| n.2 == cat && n.0.is_ipv4() == ip.is_ipv4() && mask(ip, n.1) == n.0)
            .map(|n| n.3)
    }
}

/// `ip` with all but its first `prefix` bits cleared.
fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let m = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::from(std::net::Ipv4Addr::from(u32::from(a) & m))
        }
        IpAddr::V6(a) => {
            let m = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::from(std::net::Ipv6Addr::from(u128::from(a) & m))
        }
    }
}

/// The id of category `name`, if the process's reputation has it.
pub fn category(name: &str) -> Option<u8> {
    let rep = REPUTATION.read().unwrap_or_else(|e| e.into_inner());
    rep.as_ref()?.categories.get(name).copied()
}

/// `iprep`: the score of the side's address in category `cat` meets `cmp`; a host
/// with no score in the category never matches.
pub fn matches(side: IpRepSide, cat: u8, cmp: Cmp, src: IpAddr, dst: IpAddr) -> bool {
    let rep = REPUTATION.read().unwrap_or_else(|e| e.into_inner());
    let Some(rep) = rep.as_ref() else {
        return false;
    };
    let ok = |ip| rep.score(ip, cat).is_some_and(|s| cmp.test(i64::from(s)));
    match side {
        IpRepSide::Src => ok(src),
        IpRepSide::Dst => ok(dst),
        IpRepSide::Any => ok(src) || ok(dst),
        IpRepSide::Both => ok(src) && ok(dst),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_and_networks_cover_their_hosts() {
        assert_eq!(
            entry("10.0.0.0/8, 1, 50"),
            Some(("10.0.0.0".parse().unwrap(), 8, 1, 50))
        );
        assert_eq!(entry("10.0.0.1,1,128"), None);
        assert_eq!(entry("10.0.0.1/33,1,1"), None);
        assert_eq!(entry("nonsense"), None);
        let mut r = Reputation::default();
        r.add("10.0.0.0".parse().unwrap(), 8, 1, 50);
        r.add("10.1.2.3".parse().unwrap(), 32, 1, 7);
        assert_eq!(r.score("10.1.2.3".parse().unwrap(), 1), Some(7));
        assert_eq!(r.score("10.9.9.9".parse().unwrap(), 1), Some(50));
        assert_eq!(r.score("11.0.0.1".parse().unwrap(), 1), None);
        assert_eq!(r.score("10.9.9.9".parse().unwrap(), 2), None);
    }
}
