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

/// Completes the TCP or UDP checksum of an Ethernet frame that a host sent with its
/// checksum left to the network card (a live capture marks such frames "checksum not
/// ready": the field holds only the pseudo-header's sum). Returns whether a checksum was
/// written. Frames of other kinds, IPv6 with extension headers and fragments are left
/// as they are.
pub fn complete_l4(frame: &mut [u8]) -> bool {
    let mut at = 12;
    // VLAN tags (802.1Q, 802.1ad).
    while frame.len() >= at + 2 && matches!(frame[at..at + 2], [0x81, 0x00] | [0x88, 0xa8]) {
        at += 4;
    }
    let Some(et) = frame.get(at..at + 2) else {
        return false;
    };
    let ip = at + 2;
    let (src, dst, proto, l4, end) = match (et[0], et[1]) {
        (0x08, 0x00) => {
            let Some(h) = frame.get(ip..ip + 20) else {
                return false;
            };
            let ihl = usize::from(h[0] & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
            let fragment = u16::from_be_bytes([h[6], h[7]]) & 0x3fff != 0;
            if ihl < 20 || total < ihl || fragment {
                return false;
            }
            let s: [u8; 4] = h[12..16].try_into().unwrap();
            let d: [u8; 4] = h[16..20].try_into().unwrap();
            (IpAddr::from(s), IpAddr::from(d), h[9], ip + ihl, ip + total)
        }
        (0x86, 0xdd) => {
            let Some(h) = frame.get(ip..ip + 40) else {
                return false;
            };
            let plen = usize::from(u16::from_be_bytes([h[4], h[5]]));
            let s: [u8; 16] = h[8..24].try_into().unwrap();
            let d: [u8; 16] = h[24..40].try_into().unwrap();
            (
                IpAddr::from(s),
                IpAddr::from(d),
                h[6],
                ip + 40,
                ip + 40 + plen,
            )
        }
        _ => return false,
    };
    match frame.get_mut(l4..end) {
        Some(seg) => set_l4(seg, src, dst, proto),
        None => false,
    }
}

/// Writes the checksum of a whole TCP (`proto` 6) or UDP (17) segment from `src` to
/// `dst` into its checksum field. False, and nothing written, for other protocols or a
/// segment too short to hold its header's checksum field.
pub fn set_l4(seg: &mut [u8], src: IpAddr, dst: IpAddr, proto: u8) -> bool {
    let field = match proto {
        6 => 16,
        17 => 6,
        _ => return false,
    };
    if seg.len() < field + 2 {
        return false;
    }
    seg[field..field + 2].fill(0);
    let mut c = !(sum(seg, pseudo(src, dst, proto, seg.len())) as u16);
    // UDP sends an all-zero sum as all ones (zero means "no checksum").
    if proto == 17 && c == 0 {
        c = 0xffff;
    }
    seg[field..field + 2].copy_from_slice(&c.to_be_bytes());
    true
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

    #[test]
    fn a_partial_checksum_is_completed() {
        // Ethernet, IPv4 10.0.0.1 -> 10.0.0.2, UDP 1000 -> 2000 with "hello".
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&[
            0x45, 0, 0, 33, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ]);
        f.extend_from_slice(&[0x03, 0xe8, 0x07, 0xd0, 0, 13, 0, 0]);
        f.extend_from_slice(b"hello");
        let pseudo_sum = pseudo([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 17, 13);
        let udp = 14 + 20;
        // As a sender with checksum offload leaves it: the pseudo-header's sum.
        f[udp + 6..udp + 8].copy_from_slice(&(pseudo_sum as u16).to_be_bytes());
        assert!(!valid(&f[udp..], pseudo_sum));
        assert!(complete_l4(&mut f));
        assert!(valid(&f[udp..], pseudo_sum));
        // Not IP, or cut short: left alone.
        let mut arp = vec![0u8; 12];
        arp.extend_from_slice(&[0x08, 0x06, 0, 1]);
        assert!(!complete_l4(&mut arp));
        assert!(!complete_l4(&mut f[..40]));
    }
}
