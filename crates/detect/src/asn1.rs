//! `asn1`: BER objects decoded from a buffer and checked for encodings known to overflow
//! decoders, as Suricata's keyword checks them (Snort's before it).
//!
//! The objects are read one after another from the start offset, each whole (with the
//! objects inside it) and then checked, as Suricata 8 reads them (measured with random
//! BER against it): the first object a check finds matches; reading stops at an object
//! that runs past the buffer or is malformed, after [`MAX_FRAMES`] objects side by side,
//! or nesting deeper than that. The walk is written here rather than
//! with `der-parser`: the checks read what a decoder normalises away or rejects first
//! (the raw unused-bits octet of a BIT STRING, a REAL's first octet, declared lengths).

use netsieve_rules::Asn1;

/// Objects read side by side at most, and the deepest nesting read.
const MAX_FRAMES: usize = 30;

/// Why reading stopped.
enum Stop {
    /// An object runs past the buffer.
    Short,
    /// Not BER, or too deep.
    Bad,
}

/// Whether `buf`, read from `a`'s offset (`prev` is the detection pointer), holds an
/// object one of `a`'s checks finds.
pub fn matches(a: &Asn1, buf: &[u8], prev: usize) -> bool {
    let start = match (a.absolute_offset, a.relative_offset) {
        (Some(o), _) => i64::from(o),
        (_, Some(r)) => prev as i64 + i64::from(r),
        _ => 0,
    };
    let Some(mut rest) = usize::try_from(start).ok().and_then(|s| buf.get(s..)) else {
        return false;
    };
    if rest.is_empty() {
        return false;
    }
    for _ in 0..MAX_FRAMES {
        if rest.is_empty() {
            break;
        }
        match object(a, rest, 0) {
            Ok((true, _)) => return true,
            Ok((false, used)) => rest = &rest[used..],
            Err(_) => break,
        }
    }
    false
}

/// The object at the start of `d` (at nesting `depth`): whether it or one inside it is
/// found by a check, and its encoded size.
fn object(a: &Asn1, d: &[u8], depth: usize) -> Result<(bool, usize), Stop> {
    if depth > MAX_FRAMES {
        return Err(Stop::Bad);
    }
    let id = *d.first().ok_or(Stop::Short)?;
    let constructed = id & 0x20 != 0;
    let universal = id >> 6 == 0;
    let mut at = 1;
    let mut tag = u32::from(id & 0x1f);
    if tag == 0x1f {
        // A tag over 30: base 128, at most four octets.
        tag = 0;
        loop {
            let b = *d.get(at).ok_or(Stop::Short)?;
            at += 1;
            tag = (tag << 7) | u32::from(b & 0x7f);
            if b & 0x80 == 0 {
                break;
            }
            if at > 5 {
                return Err(Stop::Bad);
            }
        }
    }
    let first = *d.get(at).ok_or(Stop::Short)?;
    at += 1;
    let declared = match first {
        0..=0x7f => Some(usize::from(first)),
        0x80 if constructed => None,
        0x80 => return Err(Stop::Bad),
        _ => {
            let n = usize::from(first & 0x7f);
            if n > 4 {
                return Err(Stop::Bad);
            }
            let bytes = d.get(at..at + n).ok_or(Stop::Short)?;
            at += n;
            Some(bytes.iter().fold(0usize, |v, &b| (v << 8) | usize::from(b)))
        }
    };
    let mut hit = false;
    let (content, size) = match declared {
        Some(len) => {
            let end = at.checked_add(len).ok_or(Stop::Bad)?;
            let content = d.get(at..end).ok_or(Stop::Short)?;
            // Only a universal SEQUENCE or SET is read inside; another constructed
            // object (an application's or a context's tag) is taken whole.
            if constructed && universal && matches!(tag, 16 | 17) {
                let mut inner = content;
                while !inner.is_empty() {
                    // Inside a definite length, running out is malformed.
                    let (h, used) = object(a, inner, depth + 1).map_err(|_| Stop::Bad)?;
                    hit |= h;
                    inner = &inner[used..];
                }
            }
            (content, end)
        }
        None => {
            // Indefinite: objects up to the end-of-contents octets.
            let mut p = at;
            loop {
                match d.get(p..p + 2) {
                    Some([0, 0]) => break,
                    Some(_) => {}
                    None => return Err(Stop::Short),
                }
                let (h, used) = object(a, &d[p..], depth + 1)?;
                hit |= h;
                p += used;
            }
            (&d[at..p], p + 2)
        }
    };
    let len = content.len();
    if universal && !constructed && !well_formed(tag, content) {
        return Err(Stop::Bad);
    }
    // An indefinite length has no length to compare.
    hit |= declared.is_some() && a.oversize_length.is_some_and(|n| len > n as usize);
    if universal && !constructed {
        let lead = content.first().copied();
        // BIT STRING: more unused bits than its content has bits (its unused-bits
        // octet counted), as measured on Suricata 8.
        hit |= a.bitstring_overflow && tag == 3 && lead.is_some_and(|u| usize::from(u) > len * 8);
        // REAL in decimal form (first octet 00xxxxxx) longer than 256 bytes.
        hit |= a.double_overflow && tag == 9 && len > 256 && lead.is_some_and(|f| f & 0xc0 == 0);
    }
    Ok((hit, size))
}

/// A universal type's content as a BER decoder accepts it (measured on Suricata 8, whose
/// decoder refuses these and reads no further; it takes a NULL with content and an empty
/// INTEGER): a BOOLEAN of one octet, a UTF8String that is UTF-8, a NumericString of digits and spaces, a
/// PrintableString of its characters, a BMPString of whole characters.
fn well_formed(tag: u32, content: &[u8]) -> bool {
    let printable = |c: &u8| c.is_ascii_alphanumeric() || b" '()+,-./:=?".contains(c);
    match tag {
        1 => content.len() == 1,
        12 => std::str::from_utf8(content).is_ok(),
        18 => content.iter().all(|c| c.is_ascii_digit() || *c == b' '),
        19 => content.iter().all(printable),
        30 => content.len().is_multiple_of(2),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(oversize: Option<u32>) -> Asn1 {
        Asn1 {
            bitstring_overflow: true,
            double_overflow: true,
            oversize_length: oversize,
            ..Asn1::default()
        }
    }

    #[test]
    fn each_check_finds_its_encoding() {
        let a = checks(None);
        // A SEQUENCE holding a BIT STRING of 16 bits, 3 unused, then 17 unused.
        assert!(!matches(&a, &[0x30, 0x04, 0x03, 0x02, 0x03, 0xf8], 0));
        assert!(matches(&a, &[0x30, 0x04, 0x03, 0x02, 0x11, 0xf8], 0));
        assert!(matches(&a, &[0x03, 0x01, 0x09], 0));
        assert!(!matches(&a, &[0x03, 0x01, 0x08], 0));
        // A decimal REAL of 300 bytes (long-form length), and a binary one.
        let mut real = vec![0x09, 0x82, 0x01, 0x2c, 0x03];
        real.resize(5 + 299, b'1');
        assert!(matches(&a, &real, 0));
        real[4] = 0x80;
        assert!(!matches(&a, &real, 0));
        // Lengths over the limit, also inside an indefinite-length object (which itself
        // has no length to compare).
        let b = checks(Some(3));
        assert!(matches(&b, &[0x04, 0x04, 1, 2, 3, 4], 0));
        assert!(!matches(&b, &[0x04, 0x03, 1, 2, 3], 0));
        assert!(matches(&b, &[0x30, 0x80, 0x04, 0x04, 1, 2, 3, 4, 0, 0], 0));
        assert!(!matches(
            &b,
            &[0x30, 0x80, 0x04, 0x02, 1, 2, 0x05, 0x00, 0, 0],
            0
        ));
    }

    #[test]
    fn offsets_and_bad_input() {
        let mut a = checks(None);
        a.relative_offset = Some(-1);
        assert!(matches(&a, &[0xff, 0x03, 0x01, 0x09], 2));
        assert!(!matches(&a, &[0x03, 0x01, 0x09], 0));
        a.relative_offset = None;
        a.absolute_offset = Some(1);
        assert!(matches(&a, &[0xff, 0x03, 0x01, 0x09], 0));
        assert!(!matches(&a, &[0xff], 0));
        // Objects are checked as they are read: one found before an object cut short
        // or malformed matches; after it, reading has stopped.
        let b = checks(None);
        assert!(matches(&b, &[0x03, 0x01, 0x09, 0x04, 0x20, 1], 0));
        assert!(!matches(&b, &[0x04, 0x20, 1, 0x03, 0x01, 0x09], 0));
        assert!(!matches(&b, &[0x04, 0x80, 0, 0, 0x03, 0x01, 0x09], 0));
        assert!(!matches(&b, &[0x1e, 0x01, 0x41, 0x03, 0x01, 0x09], 0));
        let long = [0x04, 0x89, 1, 1, 1, 1, 1, 1, 1, 1, 1];
        assert!(!matches(&b, &[&long[..], &[0x03, 0x01, 0x09]].concat(), 0));
        // Another constructed tag is taken whole, its content unread.
        assert!(matches(&b, &[0xa0, 0x02, 0xff, 0xff, 0x03, 0x01, 0x09], 0));
        // Nesting past the limit, and more objects than the limit, match nothing.
        let mut deep = [0x30u8, 0x80].repeat(40);
        deep.extend([0x03, 0x01, 0x09]);
        assert!(!matches(&b, &deep, 0));
        let many = [0x05, 0x00].repeat(30);
        assert!(!matches(&b, &[&many[..], &[0x03, 0x01, 0x09]].concat(), 0));
        assert!(matches(&b, &[&many[..2], &[0x03, 0x01, 0x09]].concat(), 0));
    }
}
