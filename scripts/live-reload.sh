#!/usr/bin/env bash
# Rules reloaded while traffic flows (issue 23, docs/BENCHMARKS.md "Live"): a veth pair,
# the engine capturing on one end, tcpreplay sending a capture into the other at a steady
# rate, and N reloads through the engine's unix socket with Suricata's own client. Prints
# each reload's time, RSS before and at peak (sampled every 5 ms) and the kernel's drops.
#
#   scripts/live-reload.sh netsieve RULES CAPTURE [N]
#   scripts/live-reload.sh suricata RULES CAPTURE [N]
#
# Needs root, iproute2, tcpreplay, bc and the reference Suricata beside the repository
# (../shared/ref/suricata-8.0.6: its client, and its binary for the second form).
set -u
engine=$1; rules=$(realpath "$2"); pcap=$(realpath "$3"); n=${4:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
ref=$(cd "$here/../shared/ref/suricata-8.0.6" && pwd)
out=$(mktemp -d); sock=$out/ctl.sock
ip link del rb0 2> /dev/null; ip netns del rbc 2> /dev/null
ip netns add rbc; ip link add rb0 type veth peer name rb1; ip link set rb1 netns rbc
ip link set rb0 up; ip netns exec rbc ip link set rb1 up
case $engine in
netsieve)
    "$here/target/release/netsieve" scan -i rb0 -S "$rules" -l "$out" -k none \
        --unix-socket "$sock" > "$out/stderr.txt" 2>&1 &
    ;;
suricata)
    # Suricata reloads only the rule files its yaml names.
    python3 - "$ref" "$rules" "$sock" "$out/suricata.yaml" << 'PY'
import re, sys
ref, rules, sock, dst = sys.argv[1:]
s = open(f"{ref}/etc/suricata-alerts-only.yaml").read()
s = re.sub(r"default-rule-path: .*", "default-rule-path: " + rules.rsplit("/", 1)[0], s)
s = s.replace("rule-files:\n- suricata.rules", "rule-files:\n- " + rules.rsplit("/", 1)[1])
for k in ("classification", "reference", "threshold"):
    s = re.sub(rf"{k}(-config)?-file: .*", lambda m: m.group(0).split(":")[0] + f": {ref}/etc/{k}.config", s)
s = s.replace("unix-command:\n  enabled: auto", f"unix-command:\n  enabled: yes\n  filename: {sock}")
open(dst, "w").write(s)
PY
    "$ref/run" -c "$out/suricata.yaml" --af-packet=rb0 -k none -l "$out" -v > "$out/stderr.txt" 2>&1 &
    ;;
*) echo "engine: netsieve or suricata" >&2; exit 2 ;;
esac
for _ in $(seq 1 600); do [ -S "$sock" ] && "$ref/run" sc -c version "$sock" > /dev/null 2>&1 && break; sleep 0.1; done
sleep 1
pid=$(pgrep -f "scan -i rb0" || pgrep -f "af-packet=rb0" | head -1)
pid=$(echo "$pid" | head -1)
grep VmRSS /proc/"$pid"/status | awk '{print "RSS before: " $2 " kB"}'
(ip netns exec rbc tcpreplay -i rb1 --pps 20000 --loop 3 "$pcap" > "$out/tcpreplay.txt" 2>&1) &
replay=$!
(while kill -0 "$pid" 2> /dev/null; do awk '/VmRSS/ {print $2}' /proc/"$pid"/status 2> /dev/null; sleep 0.005; done > "$out/rss.txt") &
sleep 1
for i in $(seq 1 "$n"); do
    s=$(date +%s.%N); "$ref/run" sc -c reload-rules "$sock" > /dev/null; e=$(date +%s.%N)
    echo "reload $i: $(echo "$e - $s" | bc) s"
    sleep 0.3
done
if [ "$engine" = netsieve ]; then
    # One rule added and removed, each timed from command to answer.
    python3 - "$sock" "$n" << 'PY'
import json, socket, sys, time
def cmd(path, c, args):
    s = socket.socket(socket.AF_UNIX); s.connect(path); f = s.makefile("rw")
    f.write(json.dumps({"version": "0.2"}) + "\n"); f.flush(); f.readline()
    t = time.time(); f.write(json.dumps({"command": c, "arguments": args}) + "\n"); f.flush()
    r = json.loads(f.readline()); return r["return"], (time.time() - t) * 1e3
for i in range(int(sys.argv[2])):
    rule = 'alert tcp any any -> any any (msg:"live"; content:"live-%d"; sid:%d;)' % (i, 2999000000 + i)
    a = cmd(sys.argv[1], "add-rule", {"rule": rule}); time.sleep(0.1)
    r = cmd(sys.argv[1], "remove-rule", {"sid": 2999000000 + i}); time.sleep(0.1)
    print("add-rule %s %.1f ms, remove-rule %s %.1f ms" % (a + r))
PY
fi
wait $replay
sleep 1
"$ref/run" sc -c "iface-stat rb0" "$sock"
"$ref/run" sc -c shutdown "$sock" > /dev/null
wait
grep -E "Actual" "$out/tcpreplay.txt"
sort -n "$out/rss.txt" | tail -1 | awk '{print "peak RSS: " $1 " kB"}'
echo "outputs in $out"
ip netns del rbc
