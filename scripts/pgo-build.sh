#!/usr/bin/env bash
# A profile-guided (PGO) build of netsieve, trained on suricata-verify's tests.
#
#   scripts/pgo-build.sh            # prints the binary's path: target/pgo/release/netsieve
#
# 1. Builds netsieve instrumented (`-Cprofile-generate`) into target/pgo-gen.
# 2. Trains it on traffic and rules that are not the benchmark's: every suricata-verify
#    test's captures with its own rules, then all of those captures with the Snort 3
#    community rules (from $NETSIEVE_DATA, default ../shared/data; without them, on the
#    bundled example only). Neither the nDPI captures nor the ET Open rules that
#    `netsieve bench scan` runs are used.
# 3. Merges the profile with the toolchain's llvm-profdata (rustup's `llvm-tools`
#    component, added when missing) and builds with it (`-Cprofile-use`) into target/pgo.
#
# The plain `cargo build --release` stays the default build: a profile is tied to the
# compiler's LLVM version and to the sources it was made from. Measured gain and the
# commands: docs/BENCHMARKS.md (twenty-ninth session).
set -euo pipefail
cd "$(dirname "$0")/.."

data="${NETSIEVE_DATA:-../shared/data}"
gen_dir="$PWD/target/pgo-gen"
use_dir="$PWD/target/pgo"
raw="$gen_dir/profraw"
profile="$gen_dir/netsieve.profdata"
work="$gen_dir/out"

host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup > /dev/null; then
    rustup component add llvm-tools > /dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
    echo "pgo-build: llvm-profdata not found at $profdata (rustup component add llvm-tools)" >&2
    exit 2
fi

echo "pgo-build: instrumented build" >&2
rm -rf "$work"
mkdir -p "$work"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$raw" CARGO_TARGET_DIR="$gen_dir" \
    cargo build --release -p netsieve
gen="$gen_dir/release/netsieve"
# The build's own programs (build scripts, procedural macros) were instrumented too and
# wrote profiles while it ran: only netsieve's training counts.
rm -rf "$raw"
mkdir -p "$raw"

# Every process adds to one profile file (`%m`: merged in place, under a lock).
export LLVM_PROFILE_FILE="$raw/netsieve-%m.profraw"
train() {
    # Captures that end in damage make netsieve exit 1; the profile is written all the same.
    "$gen" scan -k none -l "$work" "$@" > /dev/null 2>&1 || true
}

tests="$data/suricata-verify/tests"
if [ -d "$tests" ]; then
    echo "pgo-build: training on $tests" >&2
    pcaps=()
    while IFS= read -r dir; do
        rules=()
        for r in "$dir"/*.rules; do
            [ -e "$r" ] && rules+=(-S "$r")
        done
        for p in "$dir"/*.pcap; do
            [ -e "$p" ] || continue
            pcaps+=(-r "$p")
            [ ${#rules[@]} -gt 0 ] && train -r "$p" "${rules[@]}"
        done
    done < <(find "$tests" -name test.yaml -printf '%h\n' | sort)
    snort3="$data/rules/snort3-community/snort3-community.rules"
    if [ -e "$snort3" ]; then
        echo "pgo-build: training on the Snort 3 community rules" >&2
        train "${pcaps[@]}" -S "$snort3"
    fi
else
    echo "pgo-build: $tests not found: training on the bundled example only" >&2
    train -r examples/smtp-flowbits.pcap -S examples/smtp-flowbits.rules
fi

"$profdata" merge -o "$profile" "$raw"
echo "pgo-build: optimised build with $profile" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$profile" CARGO_TARGET_DIR="$use_dir" \
    cargo build --release -p netsieve
echo "$use_dir/release/netsieve"
