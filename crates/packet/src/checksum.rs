//! The Internet checksum (RFC 1071) over IPv4 headers and TCP/UDP/ICMP segments.

use std::net::IpAddr;

/// The ones'-complement sum of `data` folded to 16 bits, added to `init`.
pub fn sum(data: &[u8], init: u32) -> u32 {
    let mut acc = init as u64;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u64) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u32
}

/// Whether `data` (a header or segment with its checksum field in place) sums to
/// 0xffff, that is, its checksum is right.
pub fn valid(data: &[u8], init: u32) -> bool {
    sum(data, init) == 0xffff
}

/// The sum of the TCP/UDP pseudo-header for a segment of `len` bytes.
pub fn pseudo(src: IpAddr, dst: IpAddr, proto: u8, len: usize) -> u32 {
    let mut acc = 0u32;
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            acc = sum(&s.octets(), acc);
            acc = sum(&d.octets(), acc);
        }
        (s, d) => {
            acc = sum(&v6(s), acc);
            acc = sum(&v6(d), acc);
        }
    }
    sum(
        &[
            (len >> 24) as u8,
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
            0,
            0,
            0,
            proto,
        ],
        acc,
    )
}

fn v6(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_header_example() {
        // An IPv4 header with a correct checksum (0xb861).
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert!(valid(&h, 0));
        let mut bad = h;
        bad[11] ^= 1;
        assert!(!valid(&bad, 0));
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(sum(&[0x12], 0), 0x1200);
        assert_eq!(sum(&[0xff, 0xff, 0x00, 0x01], 0), 0x0001);
    }
}
