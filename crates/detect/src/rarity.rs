//! How likely bytes are in traffic: a coarse model, not fitted to any capture, that the
//! prefilter uses to choose a rule's fast pattern and the content search to choose the
//! byte it looks for first.

/// An estimate of how unlikely `pat` is at a given place in traffic, in tenths of a bit:
/// the sum over its bytes of -log2 of the byte's share of typical payloads (zeros, text
/// and protocol punctuation common, other binary bytes rare), a byte that repeats the one
/// before it counting as likelier (runs of zeros, padding), and a letter of a `nocase`
/// pattern as either case.
pub(crate) fn rarity(pat: &[u8], nocase: bool) -> u32 {
    let t = &BITS[usize::from(nocase)];
    pat.iter()
        .enumerate()
        .map(|(i, &b)| t[usize::from(i > 0 && pat[i - 1] == b)][b as usize])
        .sum()
}

/// The place in `pat` of its rarest byte (the first of the rarest), a letter of a
/// `nocase` pattern counted as either case: where a search for `pat` looks first.
pub(crate) fn rarest_byte(pat: &[u8], nocase: bool) -> usize {
    let t = &BITS[usize::from(nocase)][0];
    let mut best = 0;
    for (k, &b) in pat.iter().enumerate() {
        if t[b as usize] > t[pat[best] as usize] {
            best = k;
        }
    }
    best
}

/// Tenths of a bit per byte: by `nocase`, then by whether it repeats the byte before it.
static BITS: std::sync::LazyLock<[[[u32; 256]; 2]; 2]> = std::sync::LazyLock::new(|| {
    let mut t = [[[0; 256]; 2]; 2];
    for (nocase, by_repeat) in t.iter_mut().enumerate() {
        for (repeat, row) in by_repeat.iter_mut().enumerate() {
            for (b, bits) in row.iter_mut().enumerate() {
                let b = b as u8;
                let mut p = byte_share(b);
                if nocase == 1 && b.is_ascii_alphabetic() {
                    p = byte_share(b.to_ascii_lowercase()) + byte_share(b.to_ascii_uppercase());
                }
                if repeat == 1 {
                    p = (p * 8.0).min(0.6);
                }
                *bits = (-p.log2() * 10.0) as u32;
            }
        }
    }
    t
});

/// A byte's share of typical payloads (a coarse model, not fitted to any capture).
fn byte_share(b: u8) -> f64 {
    match b {
        0x00 => 0.08,
        0xff => 0.015,
        b' ' => 0.025,
        b'\r' | b'\n' => 0.012,
        b'a'..=b'z' => 0.016,
        b'0'..=b'9' => 0.009,
        b'A'..=b'Z' => 0.006,
        b'/' | b'.' | b':' | b'=' | b'-' | b'_' | b',' | b'"' => 0.007,
        0x21..=0x7e => 0.003,
        0x01..=0x1f => 0.004,
        _ => 0.0015,
    }
}
