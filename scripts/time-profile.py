#!/usr/bin/env python3
"""Where the scan's time goes, in netsieve and in Suricata, by wall-clock samples.

Usage: scripts/time-profile.py NETSIEVE SURICATA_RUN RULES PCAP [ROUNDS]

NETSIEVE is the netsieve binary; SURICATA_RUN the reference's `run` script (see
../shared/ref/suricata-8.0.6/README.md). Each round runs, one after the other, under
`perf record -e cpu-clock:u` (a software clock, so it works where a VM exposes no
hardware counters):

- `netsieve scan --threads 1` over PCAP, and over an empty capture, whose samples
  (rule loading) are taken away symbol by symbol: what is left is the scan, on the
  reading thread and the writer thread (`writer`, shown apart: Suricata's single
  worker writes its own records);
- Suricata `--runmode single` over PCAP: the samples of its worker thread (`W#01`),
  which starts after rule loading.

Both write alerts only (Suricata's `etc/suricata-alerts-only.yaml`). The table gives
seconds per run (medians are not possible per category; the rounds are summed) and
shares. Categories are the parts that can be told apart in both binaries: the
multi-pattern prefilter (DFC's `dfc::` functions; Hyperscan's library), glibc's
allocator and its copies, and the rest. Suricata's binary is stripped of its static
functions, so its rest is not split further; netsieve's is split by crate.

Needs `perf` (linux-perf). Sampling adds a few percent to both engines' times.
"""

import collections
import os
import re
import subprocess
import sys
import tempfile

ALLOC = re.compile(r"malloc|_int_free|^free|cfree|unlink_chunk|consolidate|realloc|calloc|memalign")
COPY = re.compile(r"mem(move|cpy|set)")
HZ = 5000


def record(out, cmd):
    subprocess.run(
        ["perf", "record", "-q", "-e", "cpu-clock:u", "-F", str(HZ), "-o", out, "--"] + cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


def samples(data, comm=None):
    """Samples per (thread name, object, symbol), of thread `comm` only if given."""
    args = ["perf", "report", "-i", data, "--no-children", "--stdio", "-t", "\t",
            "--sort", "comm,dso,symbol", "-F", "sample,comm,dso,symbol"]
    out = subprocess.run(args, capture_output=True, text=True, check=False).stdout
    c = collections.Counter()
    for line in out.splitlines():
        f = [x.strip() for x in line.split("\t")]
        if len(f) < 4 or not f[0].isdigit() or (comm and f[1] != comm):
            continue
        c[(f[1], f[2], re.sub(r"^\[.\]\s*", "", f[3]))] += int(f[0])
    return c


def libc_part(dso, sym):
    if not dso.startswith("libc"):
        return None
    if ALLOC.search(sym):
        return "allocation (glibc)"
    if COPY.search(sym):
        return "copies (glibc memmove/memset)"
    return "other glibc"


def netsieve_part(comm, dso, sym):
    if comm == "writer":
        return "output (netsieve's writer thread)"
    part = libc_part(dso, sym)
    if part:
        return part
    s = sym.lstrip("<")
    if s.startswith("dfc::"):
        return "multi-pattern prefilter"
    m = re.match(r"(netsieve_\w+|netsieve)::", s)
    if m:
        return "rest: " + m.group(1)
    return "rest: libraries and std"


def suricata_part(comm, dso, sym):
    part = libc_part(dso, sym)
    if part:
        return part
    if dso.startswith("libhs"):
        return "multi-pattern prefilter"
    return "rest: suricata and its libraries"


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    netsieve, suricata, rules, pcap = sys.argv[1:5]
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    here = os.path.dirname(os.path.abspath(suricata))
    yaml = os.path.join(here, "etc", "suricata-alerts-only.yaml")
    tmp = tempfile.mkdtemp(prefix="time-profile-")
    empty = os.path.join(tmp, "empty.pcap")
    with open(empty, "wb") as f:
        # A pcap header (microseconds, Ethernet) and no packets.
        f.write(bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000"))
    ns, su = collections.Counter(), collections.Counter()
    for r in range(rounds):
        def ns_cmd(capture):
            return [netsieve, "scan", "--threads", "1", "-k", "none", "-c", yaml,
                    "-S", rules, "-r", capture, "-l", tmp]
        full, load, ref = (os.path.join(tmp, f"{n}{r}.data") for n in ("full", "load", "ref"))
        record(full, ns_cmd(pcap))
        record(load, ns_cmd(empty))
        record(ref, [suricata, "-c", yaml, "--runmode", "single", "-k", "none",
                     "-S", rules, "-r", pcap, "-l", tmp])
        loading = samples(load)
        for k, v in samples(full).items():
            ns[netsieve_part(*k)] += v - loading.get(k, 0)
        for k, v in samples(ref, "W#01").items():
            su[suricata_part(*k)] += v
    nt, st = sum(ns.values()), sum(su.values())
    per_run = lambda n: n / rounds / HZ
    print(f"{'part':34} {'netsieve':>16} {'Suricata':>16}")
    print(f"{'the scan, in all':34} {per_run(nt):8.3f} s 100.0% {per_run(st):8.3f} s 100.0%")
    for part in sorted(set(ns) | set(su), key=lambda p: -(ns[p] / nt + su[p] / st)):
        a, b = ns.get(part, 0), su.get(part, 0)
        print(f"{part:34} {per_run(a):8.3f} s {100 * a / nt:5.1f}% "
              f"{per_run(b):8.3f} s {100 * b / st:5.1f}%")


if __name__ == "__main__":
    main()
