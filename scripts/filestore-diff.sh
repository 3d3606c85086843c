#!/bin/bash
# Compares what netsieve's and Suricata's file-store write on suricata-verify tests:
# both engines run on each test's pcap, rules and suricata.yaml; prints, per test, the
# files each stored (and whether the names agree), the records saying `stored: true`,
# and the fileinfo records.
#
# usage: scripts/filestore-diff.sh TEST...
# env:   NS (netsieve binary, default target/release/netsieve), SURICATA (the reference's
#        run script), TESTS (the suite), OUT (where outputs go, default /tmp/filestore-diff)
set -u
TESTS=${TESTS:-../shared/data/suricata-verify/tests}
NS=$(realpath "${NS:-target/release/netsieve}")
SURICATA=$(realpath "${SURICATA:-../shared/ref/suricata-8.0.6/run}")
OUT=${OUT:-/tmp/filestore-diff}
empty=$(mktemp)
stored() { (cd "$1" && find filestore -type f 2>/dev/null | grep -v 'json$' | sort); }
count() { cat "$2/eve.json" 2>/dev/null | grep -c "$1"; }
for t in "$@"; do
  d=$(realpath "$TESTS/$t")
  pcap=$(awk '/^pcap:/ {print $2}' "$d/test.yaml")
  [ -z "$pcap" ] && pcap=$(cd "$d" && ls ./*.pcap 2>/dev/null | head -1)
  rules=$(ls "$d"/*.rules 2>/dev/null | head -1)
  cfg=(); [ -f "$d/suricata.yaml" ] && cfg=(-c "$d/suricata.yaml")
  # The test's own arguments (`args:` in test.yaml).
  read -r -a args <<< "$(python3 -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1])).get("args") or []))' "$d/test.yaml" 2>/dev/null)"
  for e in ns su; do rm -rf "$OUT/$t/$e"; mkdir -p "$OUT/$t/$e"; done
  (cd "$d" && TZ=UTC "$NS" scan "${cfg[@]}" -S "${rules:-$empty}" -r "$pcap" -l "$OUT/$t/ns" "${args[@]}" >/dev/null 2>&1
   TZ=UTC "$SURICATA" --runmode single "${cfg[@]}" -S "${rules:-$empty}" -r "$pcap" -l "$OUT/$t/su" "${args[@]}" >/dev/null 2>&1)
  same=no; [ "$(stored "$OUT/$t/ns")" = "$(stored "$OUT/$t/su")" ] && same=yes
  echo "$t: stored files netsieve $(stored "$OUT/$t/ns" | wc -l), Suricata $(stored "$OUT/$t/su" | wc -l), same names: $same;" \
       "stored:true $(count '"stored":true' "$OUT/$t/ns") / $(count '"stored":true' "$OUT/$t/su");" \
       "fileinfo $(count '"fileinfo"' "$OUT/$t/ns") / $(count '"fileinfo"' "$OUT/$t/su")"
done
rm -f "$empty"
