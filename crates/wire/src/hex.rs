//! Bytes as lower-case hex, the way Suricata writes digests, MAC addresses, UUIDs and
//! fingerprints. One table lookup per nibble: `format!("{b:02x}")` per byte cost about
//! 500 instructions, and digests are written per transaction inspected.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lower-case hex, two digits each.
pub fn lower(bytes: &[u8]) -> String {
    joined(bytes, None)
}

/// `bytes` as lower-case hex, two digits each, with `sep` between bytes (`aa:bb:cc`).
pub fn lower_sep(bytes: &[u8], sep: char) -> String {
    joined(bytes, Some(sep))
}

fn joined(bytes: &[u8], sep: Option<char>) -> String {
    let mut s = String::with_capacity(3 * bytes.len());
    for (k, &b) in bytes.iter().enumerate() {
        if let Some(c) = sep.filter(|_| k > 0) {
            s.push(c);
        }
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_format() {
        let all: Vec<u8> = (0..=255).collect();
        let want: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(lower(&all), want);
        let want: Vec<String> = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(lower_sep(&all, ':'), want.join(":"));
        assert_eq!(lower(&[]), "");
        assert_eq!(lower_sep(&[], ':'), "");
        assert_eq!(lower_sep(&[0xab], '-'), "ab");
    }
}
