//! Input workloads of the paper's evaluation (section 5.1), as lists of packet payloads.

use crate::data::{PatternSet, Payloads, Rng};

/// A named list of payloads to search, one search call each.
#[derive(Clone, Debug)]
pub struct Workload {
    pub name: String,
    pub payloads: Payloads,
}

/// Real payloads from the nDPI captures.
pub fn real(real: &Payloads) -> Workload {
    Workload {
        name: "real".into(),
        payloads: real.clone(),
    }
}

/// Random bytes in payloads of the same sizes as the real ones.
pub fn random(real: &Payloads, seed: u64) -> Workload {
    let mut rng = Rng::new(seed);
    let mut p = Payloads::default();
    let mut buf = Vec::new();
    for payload in real.iter() {
        buf.clear();
        buf.extend((0..payload.len()).map(|_| rng.next_u64() as u8));
        p.push(&buf);
    }
    Workload {
        name: "random".into(),
        payloads: p,
    }
}

/// Real payloads with a random pattern of the set inserted at a random place in
/// `percent`% of them (the paper's "malicious traffic", figure 13).
pub fn malicious(real: &Payloads, set: &PatternSet, percent: usize, seed: u64) -> Workload {
    let mut rng = Rng::new(seed);
    let mut p = Payloads::default();
    let mut buf = Vec::new();
    for payload in real.iter() {
        buf.clear();
        buf.extend_from_slice(payload);
        if rng.below(100) < percent && !set.patterns.is_empty() {
            let pat = &set.patterns[rng.below(set.patterns.len())].0;
            let at = rng.below(buf.len() + 1);
            buf.splice(at..at, pat.iter().copied());
        }
        p.push(&buf);
    }
    Workload {
        name: format!("malicious {percent}%"),
        payloads: p,
    }
}

/// Payloads of `size` bytes, `total` bytes in all, filled by `next`.
fn packets(total: usize, size: usize, mut next: impl FnMut(&mut Vec<u8>)) -> Payloads {
    let mut p = Payloads::default();
    let mut buf = Vec::new();
    while p.bytes() < total {
        buf.clear();
        while buf.len() < size {
            next(&mut buf);
        }
        buf.truncate(size);
        p.push(&buf);
    }
    p
}

/// Text made only of the 2-byte windows that pass DFC's initial filter for this set, in
/// random order (the paper's pathological input, figure 14): every window reaches the
/// progressive filters.
pub fn pathological(windows: &[u32], total: usize, seed: u64) -> Workload {
    let mut rng = Rng::new(seed);
    let payloads = packets(total, 1460, |buf| {
        let w = windows[rng.below(windows.len())];
        buf.extend_from_slice(&[w as u8, (w >> 8) as u8]);
    });
    Workload {
        name: "pathological".into(),
        payloads,
    }
}

/// Random patterns of the set, each missing its last byte, back to back: every window
/// looks like a match until the end (the paper's near-miss worst case).
pub fn near_miss(set: &PatternSet, total: usize, seed: u64) -> Workload {
    let mut rng = Rng::new(seed);
    let long: Vec<&Vec<u8>> = set
        .patterns
        .iter()
        .map(|p| &p.0)
        .filter(|p| p.len() > 1)
        .collect();
    let payloads = packets(total, 1460, |buf| {
        let p = long[rng.below(long.len())];
        buf.extend_from_slice(&p[..p.len() - 1]);
    });
    Workload {
        name: "near-miss".into(),
        payloads,
    }
}

/// Random patterns of the set back to back: every byte is part of a match (the paper's
/// all-malicious worst case).
pub fn all_matches(set: &PatternSet, total: usize, seed: u64) -> Workload {
    let mut rng = Rng::new(seed);
    let payloads = packets(total, 1460, |buf| {
        buf.extend_from_slice(&set.patterns[rng.below(set.patterns.len())].0);
    });
    Workload {
        name: "all patterns".into(),
        payloads,
    }
}
