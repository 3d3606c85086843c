//! The capture readers against libpcap: every capture under the shared corpora, and
//! damaged copies of small ones, must give the packets libpcap gives (count, times,
//! lengths and bytes) and end where libpcap ends.
//!
//! libpcap's side is `support/pcapcount.c`, compiled here against `libpcap-dev`. Without
//! a C compiler or libpcap the test says so and passes, unless `NETSIEVE_REQUIRE_DATA=1`
//! (as `.ci/run` sets, after installing `libpcap-dev`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use netsieve_packet::{Capture, Frame};

fn required() -> bool {
    std::env::var_os("NETSIEVE_REQUIRE_DATA").is_some_and(|v| v == "1")
}

fn skip(why: String) -> Option<PathBuf> {
    if required() {
        panic!("NETSIEVE_REQUIRE_DATA=1 but {why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

fn data_dir() -> Option<PathBuf> {
    let d = std::env::var_os("NETSIEVE_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    if d.join("pcaps").is_dir() {
        Some(d)
    } else {
        skip(format!("no corpora at {}", d.display()))
    }
}

/// Builds the libpcap helper into `dir`.
fn helper(dir: &Path) -> Option<PathBuf> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/pcapcount.c");
    let out = dir.join("pcapcount");
    match Command::new("cc")
        .arg("-O2")
        .arg(&src)
        .arg("-lpcap")
        .arg("-o")
        .arg(&out)
        .output()
    {
        Ok(o) if o.status.success() => Some(out),
        Ok(o) => skip(format!(
            "the libpcap helper did not build (install libpcap-dev): {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
        )),
        Err(e) => skip(format!("no C compiler to build the libpcap helper: {e}")),
    }
}

/// What a reader made of one file: packets, digest, and whether it ended in an error.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Read {
    packets: u64,
    digest: u64,
    error: Option<String>,
    /// libpcap's link type for the file (its DLT number).
    linktype: i64,
}

/// Link types whose pseudo-headers libpcap rewrites (host byte order fields of a file
/// written on a machine of the other order, USB lengths): their bytes and lengths are
/// libpcap's own conversion, not what the file holds, so only counts are compared.
/// netsieve decodes none of them. (pflog, Linux cooked v1 and v2 for CAN, Linux USB,
/// Linux USB memory-mapped, NFLOG.)
const REWRITTEN_BY_LIBPCAP: [i64; 6] = [117, 113, 276, 189, 220, 239];

fn libpcap(helper: &Path, files: &[PathBuf]) -> BTreeMap<PathBuf, Read> {
    let mut out = BTreeMap::new();
    // Many files per run, in slices that stay under the argument limit.
    for chunk in files.chunks(500) {
        let o = Command::new(helper).args(chunk).output().unwrap();
        for line in String::from_utf8(o.stdout).unwrap().lines() {
            let f: Vec<&str> = line.splitn(5, '\t').collect();
            let error = (f[4] != "ok").then(|| f[4].to_string());
            out.insert(
                PathBuf::from(f[0]),
                Read {
                    packets: f[1].parse().unwrap(),
                    digest: u64::from_str_radix(f[2], 16).unwrap(),
                    error,
                    linktype: f[3].parse().unwrap(),
                },
            );
        }
    }
    out
}

const FNV: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn ours(file: &Path) -> Read {
    let mut r = Read {
        packets: 0,
        digest: FNV,
        error: None,
        linktype: -1,
    };
    let mut cap = match Capture::open(&[file.to_path_buf()]) {
        Ok(c) => c,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    let mut f = Frame::default();
    loop {
        match cap.next(&mut f) {
            Ok(true) => {
                r.packets += 1;
                let secs = f.ts.as_secs() as u32;
                let usec = f.ts.subsec_micros();
                for v in [secs, usec, f.data.len() as u32, f.orig_len] {
                    r.digest = fnv(r.digest, &v.to_le_bytes());
                }
                r.digest = fnv(r.digest, &f.data);
            }
            Ok(false) => return r,
            Err(e) => {
                r.error = Some(e.to_string());
                return r;
            }
        }
    }
}

/// Whether we may read past libpcap here: a pcapng interface of another link type or
/// snap length than the first is an error to libpcap, and we read its packets.
fn reads_further_on_purpose(theirs: &Read) -> bool {
    theirs.error.as_deref().is_some_and(|e| {
        e.contains("different from the type of the first interface")
            || e.contains("different from the snapshot length of the first interface")
    })
}

fn compare(files: &[PathBuf], theirs: &BTreeMap<PathBuf, Read>) -> Vec<String> {
    let mut wrong = Vec::new();
    for f in files {
        let t = &theirs[f];
        let o = ours(f);
        let same_bytes = o.digest == t.digest || REWRITTEN_BY_LIBPCAP.contains(&t.linktype);
        let same = o.packets == t.packets && same_bytes && o.error.is_some() == t.error.is_some();
        let further = reads_further_on_purpose(t) && o.packets >= t.packets;
        if !(same || further) {
            wrong.push(format!("{}: libpcap {t:?}, netsieve {o:?}", f.display()));
        }
    }
    wrong
}

/// Fails, listing them, when any file reads otherwise than libpcap reads it.
fn assert_agree(files: &[PathBuf], theirs: &BTreeMap<PathBuf, Read>) {
    let wrong = compare(files, theirs);
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        files.len(),
        wrong.join("\n")
    );
}

/// Every file under `dir` that starts with a capture's magic number.
fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            }
        }
        // A directory's captures, as `-r DIR` finds them.
        out.extend(netsieve_packet::capture::expand_inputs(&[d]).unwrap());
    }
    out.sort();
    out
}

#[test]
fn every_shared_capture_reads_as_libpcap_reads_it() {
    let Some(data) = data_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let Some(helper) = helper(tmp.path()) else {
        return;
    };
    let files = captures(&data);
    assert!(
        files.len() > 1000,
        "only {} captures under {}",
        files.len(),
        data.display()
    );
    let theirs = libpcap(&helper, &files);
    assert_agree(&files, &theirs);
    let cut_short = theirs.values().filter(|r| r.error.is_some()).count();
    eprintln!(
        "{} captures agree with libpcap ({cut_short} end in an error for both)",
        files.len()
    );
}

/// Frames for the hand-built captures: Ethernet-sized, of varied lengths.
fn sample_frames() -> Vec<Vec<u8>> {
    (0..6u8)
        .map(|i| {
            (0..(14 + 23 * usize::from(i)))
                .map(|j| (j as u8).wrapping_mul(i + 1))
                .collect()
        })
        .collect()
}

/// A classic pcap: `magic` in the byte order `be`, version `major.minor`, snap length,
/// link type, and records of `extra` more header bytes (8 for Kuznetzov's format). When
/// `swapped`, records store the original length before the captured one.
fn pcap_file(
    magic: u32,
    be: bool,
    version: (u16, u16),
    snaplen: u32,
    extra: usize,
    swapped: bool,
) -> Vec<u8> {
    let u16b = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut out = Vec::new();
    out.extend(u32b(magic));
    out.extend(u16b(version.0));
    out.extend(u16b(version.1));
    out.extend(u32b(0));
    out.extend(u32b(0));
    out.extend(u32b(snaplen));
    out.extend(u32b(1));
    for (i, f) in sample_frames().iter().enumerate() {
        let (cap, orig) = (f.len() as u32, f.len() as u32 + i as u32 * 100);
        out.extend(u32b(1_600_000_000 + i as u32));
        out.extend(u32b(999_999 + i as u32 * 300_000));
        let (a, b) = if swapped { (orig, cap) } else { (cap, orig) };
        out.extend(u32b(a));
        out.extend(u32b(b));
        out.extend(std::iter::repeat_n(0xee, extra));
        out.extend(f);
    }
    out
}

/// A pcapng block of `kind` around `body` (padded to 4 bytes).
fn block(be: bool, kind: u32, body: &[u8]) -> Vec<u8> {
    let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
    let pad = body.len().next_multiple_of(4) - body.len();
    let total = (12 + body.len() + pad) as u32;
    let mut out = Vec::new();
    out.extend(u32b(kind));
    out.extend(u32b(total));
    out.extend(body);
    out.extend(std::iter::repeat_n(0, pad));
    out.extend(u32b(total));
    out
}

/// A pcapng file of two sections in the byte order `be` with interfaces of several time
/// resolutions, enhanced, simple and obsolete packet blocks, and a block of an unknown
/// type. (libpcap cannot read sections of different byte orders in one file.)
fn pcapng_file(be: bool) -> Vec<u8> {
    let frames = sample_frames();
    let mut out = Vec::new();
    for _section in 0..2 {
        let u16b = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut shb = Vec::new();
        shb.extend(u32b(0x1a2b_3c4d));
        shb.extend(u16b(1));
        shb.extend(u16b(0));
        shb.extend([0xff; 8]);
        out.extend(block(be, 0x0a0d_0d0a, &shb));
        for (snaplen, tsresol, offset) in [
            (0u32, None, None),
            (0, Some(9u8), Some(-5i64)),
            (0, Some(0x8a), None),
        ] {
            let mut idb = Vec::new();
            idb.extend(u16b(1));
            idb.extend(u16b(0));
            idb.extend(u32b(snaplen));
            if let Some(r) = tsresol {
                idb.extend(u16b(9));
                idb.extend(u16b(1));
                idb.extend([r, 0, 0, 0]);
            }
            if let Some(o) = offset {
                idb.extend(u16b(14));
                idb.extend(u16b(8));
                idb.extend(if be { o.to_be_bytes() } else { o.to_le_bytes() });
            }
            idb.extend([0; 4]);
            out.extend(block(be, 1, &idb));
        }
        for (i, f) in frames.iter().enumerate() {
            let ts: u64 = 1_600_000_000_123_456_789 + i as u64 * 987_654_321;
            let mut epb = Vec::new();
            epb.extend(u32b((i % 3) as u32));
            epb.extend(u32b((ts >> 32) as u32));
            epb.extend(u32b(ts as u32));
            epb.extend(u32b(f.len() as u32));
            epb.extend(u32b(f.len() as u32 + 4));
            epb.extend(f);
            out.extend(block(be, if i == 4 { 2 } else { 6 }, &epb));
            if i == 2 {
                out.extend(block(be, 0x0bad, &[1, 2, 3, 4, 5]));
                let mut spb = Vec::new();
                spb.extend(u32b(f.len() as u32));
                spb.extend(f);
                out.extend(block(be, 3, &spb));
            }
        }
    }
    out
}

/// A small xorshift generator for the mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `base` with a few bytes changed, cut, or both; changes favour header fields (the
/// first 64 bytes and the bytes after a change).
fn mutate(base: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = base.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = if rng.below(2) == 0 {
            rng.below(64.min(out.len()))
        } else {
            rng.below(out.len())
        };
        out[at] = match rng.below(4) {
            0 => 0,
            1 => 0xff,
            2 => out[at].wrapping_add(1 + rng.below(3) as u8),
            _ => rng.next() as u8,
        };
    }
    if rng.below(4) == 0 {
        let cut = rng.below(out.len());
        out.truncate(cut);
    }
    out
}

#[test]
fn damaged_and_unusual_captures_read_as_libpcap_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(helper) = helper(tmp.path()) else {
        return;
    };
    let bases: Vec<(&str, Vec<u8>)> = vec![
        (
            "usec",
            pcap_file(0xa1b2_c3d4, false, (2, 4), 65_535, 0, false),
        ),
        ("nsec-be", pcap_file(0xa1b2_3c4d, true, (2, 4), 0, 0, false)),
        (
            "snap-40",
            pcap_file(0xa1b2_c3d4, false, (2, 4), 40, 0, false),
        ),
        (
            "v2.2-swapped",
            pcap_file(0xa1b2_c3d4, false, (2, 2), 65_535, 0, true),
        ),
        (
            "v2.3-swapped",
            pcap_file(0xa1b2_c3d4, true, (2, 3), 65_535, 0, true),
        ),
        (
            "v543",
            pcap_file(0xa1b2_c3d4, false, (543, 0), 65_535, 0, true),
        ),
        (
            "kuznetzov",
            pcap_file(0xa1b2_cd34, false, (2, 4), 65_535, 8, false),
        ),
        ("pcapng", pcapng_file(false)),
        ("pcapng-be", pcapng_file(true)),
    ];
    let mut files = Vec::new();
    let seed = std::env::var("NETSIEVE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_cafe_f00d_0001);
    let mut rng = Rng(seed);
    for (name, bytes) in &bases {
        let p = tmp.path().join(format!("{name}.cap"));
        std::fs::write(&p, bytes).unwrap();
        files.push(p);
        for i in 0..1000 {
            let p = tmp.path().join(format!("{name}-{i}.cap"));
            std::fs::write(&p, mutate(bytes, &mut rng)).unwrap();
            files.push(p);
        }
    }
    let theirs = libpcap(&helper, &files);
    for (name, _) in &bases {
        let t = &theirs[&tmp.path().join(format!("{name}.cap"))];
        assert!(
            t.error.is_none() && t.packets >= 6,
            "libpcap on the intact {name}: {t:?}"
        );
    }
    if let Some(keep) = std::env::var_os("NETSIEVE_KEEP_DIFFS") {
        for f in &files {
            std::fs::copy(f, Path::new(&keep).join(f.file_name().unwrap())).unwrap();
        }
    }
    assert_agree(&files, &theirs);
    let errors = theirs.values().filter(|r| r.error.is_some()).count();
    eprintln!(
        "{} captures agree with libpcap, {errors} of them ending in an error",
        files.len()
    );
}
