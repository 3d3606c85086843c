//! Digests through the RustCrypto crates: MD5 (`ja3.hash`, `ja3s.hash`), and MD5, SHA-1
//! and SHA-256 of buffers and files (the `to_md5` transforms, `filemd5` and its twins,
//! `fileinfo`'s `force-hash`).

/// A digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    Md5,
    Sha1,
    Sha256,
}

impl Hash {
    pub const ALL: [Hash; 3] = [Hash::Md5, Hash::Sha1, Hash::Sha256];

    /// Its name as `force-hash` and EVE's `fileinfo` write it.
    pub fn name(self) -> &'static str {
        match self {
            Hash::Md5 => "md5",
            Hash::Sha1 => "sha1",
            Hash::Sha256 => "sha256",
        }
    }

    pub fn by_name(name: &str) -> Option<Hash> {
        Hash::ALL.into_iter().find(|h| h.name() == name)
    }

    /// Its bit in a set of digests (`LogTypes::file_hashes`).
    pub fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The digest of `data`.
    pub fn bytes(self, data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Md5 => {
                use md5::Digest;
                md5::Md5::digest(data).to_vec()
            }
            Hash::Sha1 => {
                use sha1::Digest;
                sha1::Sha1::digest(data).to_vec()
            }
            Hash::Sha256 => {
                use sha2::Digest;
                sha2::Sha256::digest(data).to_vec()
            }
        }
    }

    /// The digest of `data` in lower-case hex.
    pub fn hex(self, data: &[u8]) -> String {
        netsieve_wire::hex::lower(&self.bytes(data))
    }
}

#[cfg(test)]
mod tests {
    use super::Hash;

    #[test]
    fn known_vectors() {
        // RFC 1321, RFC 3174 and FIPS 180-2's "abc".
        assert_eq!(Hash::Md5.hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(Hash::Md5.hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            Hash::Sha1.hex(b"abc"),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            Hash::Sha256.hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Hash::by_name("sha1"), Some(Hash::Sha1));
        assert_eq!(Hash::ALL.map(Hash::bit), [1, 2, 4]);
    }
}
