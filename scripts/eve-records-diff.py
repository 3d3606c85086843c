#!/usr/bin/env python3
"""Field-for-field comparison of two eve.json files' alert, http, dns, tls, sip and fileinfo
records (issue 24, docs/CONFORMANCE.md "The application layer's records").

    scripts/eve-records-diff.py OURS THEIRS [SHOW]

Records are paired by (event type, addresses, ports), plus the signature for alerts and
the transaction for http and fileinfo records, in file order; flow_id (each engine's own
hash) is not compared. Prints, per differing field, how many pairs differ and the first
example (SHOW=0 leaves the examples out). `count` rows are keys one side logs more often.
"""

import collections
import json
import sys

KINDS = ("http", "dns", "tls", "fileinfo", "alert", "sip")
TOP = ("tx_id", "app_proto", "pcap_cnt", "pkt_src", "timestamp")


def load(path):
    out = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            t = r["event_type"]
            if t not in KINDS:
                continue
            k = (t, r.get("src_ip"), r.get("src_port"), r.get("dest_ip"), r.get("dest_port"))
            if t == "alert":
                k += (r["alert"]["signature_id"],)
            if t == "fileinfo":
                k += (r["fileinfo"]["tx_id"],)
            if t == "http":
                k += (r.get("tx_id"),)
            out[k].append(r)
    return out


def objects(kind):
    if kind == "fileinfo":
        return ["fileinfo", "http"]
    if kind == "alert":
        return ["alert", "http", "dns", "tls", "sip"]
    return [kind]


def main():
    ours, theirs = load(sys.argv[1]), load(sys.argv[2])
    show = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    diffs, example = collections.Counter(), {}

    def note(key, ex):
        diffs[key] += 1
        example.setdefault(key, ex)

    for k in set(ours) | set(theirs):
        a, b = ours.get(k, []), theirs.get(k, [])
        if len(a) != len(b):
            note((k[0], "count"), (k, len(a), len(b)))
            continue
        for x, y in zip(a, b):
            for name in objects(k[0]):
                ox, oy = x.get(name), y.get(name)
                if ox is None and oy is None:
                    continue
                if ox is None or oy is None:
                    note((k[0], name, "missing"), (k, ox, oy))
                    continue
                for field in set(ox) | set(oy):
                    if ox.get(field) != oy.get(field):
                        note((k[0], name, field), (k, ox.get(field), oy.get(field)))
            for field in TOP:
                if x.get(field) != y.get(field):
                    note((k[0], field), (k, x.get(field), y.get(field)))
    for key, n in diffs.most_common():
        print(n, key, str(example[key])[:400] if show else "")


if __name__ == "__main__":
    main()
