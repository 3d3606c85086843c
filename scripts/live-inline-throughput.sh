#!/usr/bin/env bash
# Throughput through an inline box (issue 23, docs/BENCHMARKS.md "Live"): client and
# server namespaces joined through a middle one, which bridges them with netsieve
# (--inline), the reference Suricata (AF_PACKET IPS copy mode) or a plain Linux bridge.
# tcpreplay sends a capture at PPS packets per second from the client side; the server
# side's veth counts what came through.
#
#   scripts/live-inline-throughput.sh netsieve|suricata|bridge RULES CAPTURE PPS [LOOPS]
#
# Needs root, iproute2, ethtool, tcpreplay and, for suricata, the reference Suricata
# beside the repository (../shared/ref/suricata-8.0.6).
set -u
engine=$1; rules=$(realpath "$2"); pcap=$(realpath "$3"); pps=$4; loops=${5:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
ref="$here/../shared/ref/suricata-8.0.6"
out=$(mktemp -d)
for n in tpc tpi tps; do
    ip netns del $n 2> /dev/null; ip netns add $n
    # No IPv6 chatter (router and neighbour solicitations) on the wires.
    ip netns exec $n sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip link add tc0 type veth peer name ti0; ip link add ts0 type veth peer name ti1
ip link set tc0 netns tpc; ip link set ti0 netns tpi; ip link set ti1 netns tpi; ip link set ts0 netns tps
for x in "tpc tc0" "tpi ti0" "tpi ti1" "tps ts0"; do
    set -- $x
    ip netns exec "$1" ip link set "$2" up
    ip netns exec "$1" ip link set "$2" mtu 9000
    ip netns exec "$1" ethtool -K "$2" gro off tso off gso off tx off > /dev/null 2>&1
done
case $engine in
netsieve)
    ip netns exec tpi "$here/target/release/netsieve" scan --inline ti0:ti1 -S "$rules" \
        -l "$out" -k none > "$out/stderr.txt" 2>&1 &
    ;;
suricata)
    python3 - "$ref" "$out/suricata.yaml" << 'PY'
import sys
ref, dst = sys.argv[1:]
s = open(f"{ref}/etc/suricata-alerts-only.yaml").read()
a, b = s.index("af-packet:\n"), s.index("af-xdp:")
s = s[:a] + ("af-packet:\n- interface: ti0\n  copy-mode: ips\n  copy-iface: ti1\n  threads: 1\n"
  "- interface: ti1\n  copy-mode: ips\n  copy-iface: ti0\n  threads: 1\n") + s[b:]
open(dst, "w").write(s)
PY
    ip netns exec tpi "$ref/run" -c "$out/suricata.yaml" --af-packet -S "$rules" -k none \
        -l "$out" -v > "$out/stderr.txt" 2>&1 &
    ;;
bridge)
    # No learning: a hub, which like a wire sends every frame on (a learning bridge
    # would keep frames addressed to a MAC it saw on the sending side).
    ip netns exec tpi ip link add tbr type bridge ageing_time 0
    ip netns exec tpi ip link set ti0 master tbr; ip netns exec tpi ip link set ti1 master tbr
    ip netns exec tpi ip link set tbr up
    ;;
esac
# Wait until the box forwards: Suricata says when its engine runs, and a probe frame
# must come out of the other side.
if [ "$engine" = suricata ]; then
    for _ in $(seq 1 600); do grep -q "Engine started" "$out/stderr.txt" && break; sleep 0.2; done
fi
for _ in $(seq 1 600); do
    before=$(ip netns exec tps cat /sys/class/net/ts0/statistics/rx_packets)
    ip netns exec tpc tcpreplay -i tc0 --limit 1 "$pcap" > /dev/null 2>&1
    sleep 0.2
    [ "$(ip netns exec tps cat /sys/class/net/ts0/statistics/rx_packets)" -gt "$before" ] && break
done
sleep 1
rx0=$(ip netns exec tps cat /sys/class/net/ts0/statistics/rx_packets)
ip netns exec tpc tcpreplay -i tc0 --pps "$pps" --loop "$loops" "$pcap" > "$out/tcpreplay.txt" 2>&1
sleep 2
rx1=$(ip netns exec tps cat /sys/class/net/ts0/statistics/rx_packets)
sent=$(awk '/Successful packets:/ {print $3}' "$out/tcpreplay.txt")
secs=$(awk '/Actual:/ {for (i=1;i<=NF;i++) if ($i=="sent") print $(i+2)}' "$out/tcpreplay.txt")
echo "$engine: sent $sent frames in $secs s, $((rx1 - rx0)) came through"
pkill -INT -f "inline ti0:ti1" 2> /dev/null; pkill -INT -f "suricata.yaml --af-packet" 2> /dev/null
sleep 3
grep -E "kernel passed|could not be sent" "$out/stderr.txt" 2> /dev/null
for n in tpc tpi tps; do ip netns del $n; done
echo "outputs in $out"
