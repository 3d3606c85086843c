//! MD5 as hex, for `ja3.hash` and `ja3s.hash` (through the `md-5` crate).

use md5::{Digest, Md5};

/// The lower-case hex MD5 of `data`.
pub fn hex(data: &[u8]) -> String {
    Md5::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc1321_vectors() {
        assert_eq!(super::hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(super::hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
