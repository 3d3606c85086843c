//! ASCII case folding, letters only.
//!
//! Case-insensitive patterns follow Snort/Suricata `nocase`: only `A-Z` and `a-z` are
//! folded. `@` (0x40) and `` ` `` (0x60), `[` (0x5B) and `{` (0x7B) differ by the same
//! bit as a letter pair but are *not* folded together.

/// Lowercases the ASCII letters of each of the 8 bytes of `x`, leaving every other byte
/// untouched. Branch-free (SWAR).
#[inline(always)]
pub(crate) fn lower_u64(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Work on the low 7 bits of each byte so that adding cannot carry into the next byte.
    let low7 = x & !HIGH;
    // High bit set where low7 >= 'A' (0x41), resp. low7 >= 'Z' + 1 (0x5B).
    let ge_a = low7 + ONES * (0x80 - 0x41);
    let gt_z = low7 + ONES * (0x80 - 0x5B);
    // An upper-case letter: >= 'A', not > 'Z', and the original high bit clear.
    let upper = ge_a & !gt_z & !x & HIGH;
    x | (upper >> 2)
}

/// Calls `f` with every byte string that `bytes` matches: itself, and for a
/// case-insensitive pattern every combination of letter cases (at most `2^bytes.len()`).
pub(crate) fn for_each_variant(bytes: &[u8], nocase: bool, f: &mut impl FnMut(&[u8])) {
    assert!(
        bytes.len() <= MAX_VARIANT_LEN,
        "a filter window is at most 8 bytes"
    );
    let mut buf = [0u8; MAX_VARIANT_LEN];
    let buf = &mut buf[..bytes.len()];
    buf.copy_from_slice(bytes);
    if !nocase {
        f(buf);
        return;
    }
    let mut letters = [0usize; MAX_VARIANT_LEN];
    let mut n = 0;
    for (i, b) in bytes.iter().enumerate() {
        if b.is_ascii_alphabetic() {
            letters[n] = i;
            n += 1;
        }
    }
    let letters = &letters[..n];
    for combo in 0u32..(1 << letters.len()) {
        for (bit, &i) in letters.iter().enumerate() {
            buf[i] = if combo >> bit & 1 == 1 {
                bytes[i].to_ascii_uppercase()
            } else {
                bytes[i].to_ascii_lowercase()
            };
        }
        f(buf);
    }
}

/// The longest text [`for_each_variant`] takes: its variants are `2^letters`.
const MAX_VARIANT_LEN: usize = 8;

/// `text == pat` where `pat` is already lowercased and letters of `text` are folded.
#[inline]
pub(crate) fn eq_nocase(text: &[u8], pat_lower: &[u8]) -> bool {
    debug_assert_eq!(text.len(), pat_lower.len());
    let mut t = text.chunks_exact(8);
    let mut p = pat_lower.chunks_exact(8);
    for (a, b) in (&mut t).zip(&mut p) {
        let a = u64::from_le_bytes(a.try_into().unwrap());
        let b = u64::from_le_bytes(b.try_into().unwrap());
        if lower_u64(a) != b {
            return false;
        }
    }
    t.remainder()
        .iter()
        .zip(p.remainder())
        .all(|(&a, &b)| a.to_ascii_lowercase() == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_u64_matches_std_on_every_byte() {
        for b in 0..=255u8 {
            for filler in [0u8, 0x41, 0x5a, 0x80, 0xc1, 0xff] {
                let mut bytes = [filler; 8];
                bytes[3] = b;
                let got = lower_u64(u64::from_le_bytes(bytes)).to_le_bytes();
                let want = bytes.map(|x| x.to_ascii_lowercase());
                assert_eq!(got, want, "byte {b:#04x} with filler {filler:#04x}");
            }
        }
    }

    #[test]
    fn non_letters_are_not_folded() {
        for (a, b) in [(b'@', b'`'), (b'[', b'{'), (b']', b'}'), (b'^', b'~')] {
            assert!(!eq_nocase(&[a], &[b]));
            assert!(!eq_nocase(&[b], &[a]));
        }
    }

    #[test]
    fn variants_enumerate_letter_cases_only() {
        let mut seen = Vec::new();
        for_each_variant(b"a1@b", true, &mut |v| seen.push(v.to_vec()));
        seen.sort();
        assert_eq!(
            seen,
            vec![
                b"A1@B".to_vec(),
                b"A1@b".to_vec(),
                b"a1@B".to_vec(),
                b"a1@b".to_vec()
            ]
        );
    }
}
