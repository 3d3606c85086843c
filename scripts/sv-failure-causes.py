#!/usr/bin/env python3
"""Counts the suricata-verify tests that fail alert checks by cause, as
docs/CONFORMANCE.md's table does.

Usage: scripts/sv-failure-causes.py SV_RUN_OUTPUT [NETSIEVE] [TESTS_DIR]

SV_RUN_OUTPUT is what `sv-run --engine netsieve --tests TESTS_DIR` printed (alert
checks). Each failing test is counted once, in this order: netsieve exited with an
error; a firewall test; the first rule its checks name (every rule when they name
none) that netsieve skips (the keyword or syntax it does not know, from `scan -T -v`)
or does not inspect (the parser or keyword it lacks); else its rules all load and the
alerts differ. Needs PyYAML.
"""

import collections
import glob
import os
import re
import subprocess
import sys

import yaml


def sids_in(o):
    """The signature ids a test's checks name."""
    s = set()
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("alert.signature_id", "signature_id") and isinstance(v, int):
                s.add(v)
            s |= sids_in(v)
    elif isinstance(o, list):
        for v in o:
            s |= sids_in(v)
    return s


def causes(test_dir, netsieve):
    """sid -> (skipped | not inspected, why) for the rules of one test."""
    rules = glob.glob(os.path.join(test_dir, "*.rules"))
    args = [netsieve, "scan", "-T", "-v"]
    if os.path.exists(os.path.join(test_dir, "suricata.yaml")):
        args += ["-c", os.path.join(test_dir, "suricata.yaml")]
    for r in rules:
        args += ["-S", r]
    err = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=test_dir).stderr
    why = {}
    for m in re.finditer(r"rule skipped: ([^:]+):(\d+):\d+: (.*)", err):
        path = m.group(1)
        if not os.path.isabs(path):
            path = os.path.join(test_dir, os.path.basename(path))
        try:
            text = open(path).read().splitlines()[int(m.group(2)) - 1]
        except (OSError, IndexError):
            continue
        sid = re.search(r"sid\s*:\s*(\d+)", text)
        if sid:
            why[int(sid.group(1))] = ("skipped", m.group(3))
    for m in re.finditer(r"sid (\d+) not inspected: needs (\S+)", err):
        why[int(m.group(1))] = ("not inspected", m.group(2))
    return rules, why


def main():
    out = open(sys.argv[1]).read().splitlines()
    netsieve = sys.argv[2] if len(sys.argv) > 2 else "target/release/netsieve"
    netsieve = os.path.abspath(netsieve)
    tests = sys.argv[3] if len(sys.argv) > 3 else "../shared/data/suricata-verify/tests"
    count = collections.Counter()
    needs = collections.Counter()
    differ = []
    for line in out:
        if not line.startswith("FAIL "):
            continue
        t = line.split()[1].rstrip(":")
        if "engine exit" in line:
            count["netsieve exits with an error"] += 1
            continue
        if t.startswith("firewall/"):
            count["firewall mode"] += 1
            continue
        d = os.path.join(tests, t)
        rules, why = causes(d, netsieve)
        if not rules:
            count["no rules file"] += 1
            continue
        want = sids_in(yaml.safe_load(open(os.path.join(d, "test.yaml"))).get("checks", []))
        hit = sorted(s for s in (want or why) if s in why)
        if hit:
            kind, what = why[hit[0]]
            count[kind] += 1
            needs[(kind, what[:50])] += 1
        else:
            count["alerts differ"] += 1
            differ.append(t)
    print(sum(count.values()), "failing:", dict(count))
    for (kind, what), n in needs.most_common(30):
        print(f"  {n:3} {kind}: {what}")
    print("alerts differ:", " ".join(differ))


if __name__ == "__main__":
    main()
