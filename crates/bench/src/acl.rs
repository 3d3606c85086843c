//! DPDK's rte_acl as a peer for the firewall fast path (feature `dpdk`; needs Debian's
//! libdpdk-dev). rte_acl compiles a rule set into a multi-bit trie and classifies batches
//! of packets with SIMD; a rule change means rebuilding the whole trie.
//!
//! rte_acl allocates through DPDK's memory manager, so the environment layer is started
//! once, without huge pages or PCI devices.

use netsieve_classify::rule::{Header, Key};
use std::ffi::{CString, c_char, c_int, c_void};
use std::sync::OnceLock;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FieldDef {
    typ: u8,
    size: u8,
    field_index: u8,
    input_index: u8,
    offset: u32,
}

#[repr(C)]
struct Config {
    num_categories: u32,
    num_fields: u32,
    defs: [FieldDef; 64],
    max_size: usize,
}

#[repr(C)]
struct Param {
    name: *const c_char,
    socket_id: c_int,
    rule_size: u32,
    max_rule_num: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RuleData {
    category_mask: u32,
    priority: i32,
    userdata: u32,
}

/// A field value: the C union of u8/u16/u32/u64, little-endian, so a u64 holds them all.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Field {
    value: u64,
    mask_range: u64,
}

const FIELDS: usize = 9;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct AclRule {
    data: RuleData,
    field: [Field; FIELDS],
}

#[link(name = "rte_eal")]
unsafe extern "C" {
    fn rte_eal_init(argc: c_int, argv: *mut *mut c_char) -> c_int;
}

#[link(name = "rte_acl")]
unsafe extern "C" {
    fn rte_acl_create(param: *const Param) -> *mut c_void;
    fn rte_acl_add_rules(ctx: *mut c_void, rules: *const AclRule, num: u32) -> c_int;
    fn rte_acl_build(ctx: *mut c_void, cfg: *const Config) -> c_int;
    fn rte_acl_classify(
        ctx: *const c_void,
        data: *const *const u8,
        results: *mut u32,
        num: u32,
        categories: u32,
    ) -> c_int;
    fn rte_acl_free(ctx: *mut c_void);
}

const MASK: u8 = 0;
const RANGE: u8 = 1;
const BITMASK: u8 = 2;

/// The packed input rte_acl reads, fields in network byte order: protocol, source,
/// destination, ports, TCP flags.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct AclKey {
    proto: u8,
    _pad: [u8; 3],
    src: [u8; 4],
    dst: [u8; 4],
    sport: [u8; 2],
    dport: [u8; 2],
    flags: [u8; 2],
    _pad2: [u8; 2],
}

impl AclKey {
    pub fn new(k: &Key) -> AclKey {
        AclKey {
            proto: k.proto,
            src: (k.src as u32).to_be_bytes(),
            dst: (k.dst as u32).to_be_bytes(),
            sport: k.sport.to_be_bytes(),
            dport: k.dport.to_be_bytes(),
            flags: k.flags.to_be_bytes(),
            ..AclKey::default()
        }
    }
}

fn eal() -> Result<(), String> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| {
        let args: Vec<CString> = [
            "netsieve-bench",
            "--no-huge",
            "--no-pci",
            "-m",
            "8192",
            "--log-level=1",
        ]
        .iter()
        .map(|a| CString::new(*a).expect("no NUL"))
        .collect();
        let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
        // SAFETY: argv points to NUL-terminated strings that outlive the call (DPDK keeps
        // pointers into them, so `args` is leaked below); argc matches.
        let r = unsafe { rte_eal_init(argv.len() as c_int, argv.as_mut_ptr()) };
        std::mem::forget(args);
        if r < 0 {
            Err("rte_eal_init failed".into())
        } else {
            Ok(())
        }
    })
    .clone()
}

/// A built rte_acl context over IPv4 entries.
pub struct Acl {
    ctx: *mut c_void,
}

impl Drop for Acl {
    fn drop(&mut self) {
        // SAFETY: ctx came from rte_acl_create and is freed once.
        unsafe { rte_acl_free(self.ctx) };
    }
}

impl Acl {
    /// Builds from entries in priority order (lower first); IPv4 only, exact or any
    /// protocol.
    pub fn build(entries: &[(u32, Header)]) -> Result<Acl, String> {
        eal()?;
        let mut rules = Vec::with_capacity(entries.len());
        let n = entries.len() as i32;
        for (i, (prio, h)) in entries.iter().enumerate() {
            if h.src.len < 96 || h.dst.len < 96 || h.src.addr >> 32 != 0xffff {
                return Err("rte_acl peer: IPv4 entries only".into());
            }
            let proto = if h.proto.lo == h.proto.hi {
                Field {
                    value: h.proto.lo as u64,
                    mask_range: 0xff,
                }
            } else if h.proto.lo == 0 && h.proto.hi == 255 {
                Field::default()
            } else {
                return Err("rte_acl peer: protocol ranges are not supported".into());
            };
            rules.push(AclRule {
                data: RuleData {
                    category_mask: 1,
                    // rte_acl prefers the highest priority; earlier rules must win.
                    priority: n - i as i32,
                    userdata: prio + 1,
                },
                field: [
                    proto,
                    Field {
                        value: h.src.addr as u32 as u64,
                        mask_range: (h.src.len - 96) as u64,
                    },
                    Field {
                        value: h.dst.addr as u32 as u64,
                        mask_range: (h.dst.len - 96) as u64,
                    },
                    Field {
                        value: h.sport.lo as u64,
                        mask_range: h.sport.hi as u64,
                    },
                    Field {
                        value: h.dport.lo as u64,
                        mask_range: h.dport.hi as u64,
                    },
                    // TCP flags as two one-byte bit masks (high byte, low byte).
                    Field {
                        value: (h.flags >> 8) as u64,
                        mask_range: (h.flags_mask >> 8) as u64,
                    },
                    Field {
                        value: (h.flags & 0xff) as u64,
                        mask_range: (h.flags_mask & 0xff) as u64,
                    },
                    // rte_acl reads inputs of four bytes: two unused bytes complete the
                    // last one.
                    Field::default(),
                    Field::default(),
                ],
            });
        }
        // Names must be unique while contexts live: rte_acl_create returns the existing
        // context of a name.
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = CString::new(format!("netsieve{seq}")).expect("no NUL");
        let param = Param {
            name: name.as_ptr(),
            socket_id: -1,
            rule_size: std::mem::size_of::<AclRule>() as u32,
            max_rule_num: rules.len().max(1) as u32,
        };
        let mut defs = [FieldDef::default(); 64];
        let layout = [
            (BITMASK, 1, 0, 0),
            (MASK, 4, 1, 4),
            (MASK, 4, 2, 8),
            (RANGE, 2, 3, 12),
            (RANGE, 2, 3, 14),
            (BITMASK, 1, 4, 16),
            (BITMASK, 1, 4, 17),
            (BITMASK, 1, 4, 18),
            (BITMASK, 1, 4, 19),
        ];
        for (i, (typ, size, input, offset)) in layout.into_iter().enumerate() {
            defs[i] = FieldDef {
                typ,
                size,
                field_index: i as u8,
                input_index: input,
                offset,
            };
        }
        let cfg = Config {
            num_categories: 1,
            num_fields: FIELDS as u32,
            defs,
            max_size: 0,
        };
        // SAFETY: param and the rules are valid for the calls; rule_size is the size of
        // the struct the rules are laid out as (DPDK's RTE_ACL_RULE_DEF with FIELDS fields).
        unsafe {
            let ctx = rte_acl_create(&param);
            if ctx.is_null() {
                return Err("rte_acl_create failed".into());
            }
            let acl = Acl { ctx };
            let r = rte_acl_add_rules(ctx, rules.as_ptr(), rules.len() as u32);
            if r != 0 {
                return Err(format!("rte_acl_add_rules failed ({r})"));
            }
            let r = rte_acl_build(ctx, &cfg);
            if r != 0 {
                return Err(format!("rte_acl_build failed ({r})"));
            }
            Ok(acl)
        }
    }

    /// Classifies a batch; `out[i]` is the matching entry's priority, or NONE.
    pub fn classify(&self, keys: &[AclKey], out: &mut [u32]) {
        let ptrs: Vec<*const u8> = keys
            .iter()
            .map(|k| k as *const AclKey as *const u8)
            .collect();
        let n = keys.len().min(out.len());
        // SAFETY: every pointer refers to a live AclKey of 20 bytes, which covers the
        // inputs the field layout reads (offsets 0 to 19); out has room for n results.
        unsafe {
            rte_acl_classify(self.ctx, ptrs.as_ptr(), out.as_mut_ptr(), n as u32, 1);
        }
        for r in &mut out[..n] {
            *r = if *r == 0 { u32::MAX } else { *r - 1 };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsieve_classify::rule::{ANY_PORT, Prefix, Range, v4};

    /// rte_acl agrees with a linear scan on a small set with nested prefixes, ranges and
    /// flag tests (run with `--features dpdk`).
    #[test]
    fn rte_acl_agrees_with_linear() {
        let mut es = Vec::new();
        for i in 0..200u32 {
            let mut h = Header::any_v4();
            h.src = Prefix::v4(
                0x0a00_0000 | (i % 7) << 8,
                [8, 16, 24, 32][(i % 4) as usize],
            );
            h.dport = if i % 3 == 0 {
                ANY_PORT
            } else {
                Range::new(i as u16, i as u16 + 40)
            };
            h.proto = Range::exact([6, 17][(i % 2) as usize]);
            if i % 5 == 0 {
                h.flags = 0x02;
                h.flags_mask = 0x12;
            }
            es.push((i, h));
        }
        let acl = Acl::build(&es).unwrap();
        let mut keys = Vec::new();
        let mut x = 0x1234_5678u64;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            keys.push(Key {
                src: v4(0x0a00_0000 | (x as u32 & 0x0000_07ff)),
                dst: v4(x as u32 >> 3),
                sport: (x >> 20) as u16,
                dport: (x >> 40) as u16 % 300,
                proto: [6, 17, 1][(x >> 50) as usize % 3],
                flags: (x >> 56) as u16,
            });
        }
        let input: Vec<AclKey> = keys.iter().map(AclKey::new).collect();
        let mut out = vec![0; keys.len()];
        for (k, o) in input.chunks(64).zip(out.chunks_mut(64)) {
            acl.classify(k, o);
        }
        for (k, got) in keys.iter().zip(&out) {
            let want = es
                .iter()
                .find(|(_, h)| h.matches(k))
                .map_or(u32::MAX, |e| e.0);
            assert_eq!(*got, want, "{k:?}");
        }
    }
}
