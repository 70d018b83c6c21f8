#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The host-tools performance figures of issue 4, measured inside one guest
# with the KV-SSD and QEMU's stock NVMe attached; prints each ratio and its
# target. Numbers only: nothing here fails a test suite. Adaptive is measured
# twice: with the library's default thresholds (BandSlim's Cosmos+ values)
# and with thresholds `kvbench calibrate` measured in this guest first.
#
#   scripts/run-guest.sh --second-device nvme --script host/bench/perf-ratios.sh
#
# Environment: KV (default /dev/ng0n1), NVM (default /dev/ng1n1), OPS
# (operations per measurement, default 20000).
KV=${KV:-/dev/ng0n1}
NVM=${NVM:-/dev/ng1n1}
OPS=${OPS:-20000}
T=${TMPDIR:-/tmp}/perf-ratios.$$
mkdir -p "$T"

# num FILE KEY - the first number after "KEY": in a kvbench JSON report
num() { grep -o "\"$2\":[0-9.]*" "$1" | head -n 1 | cut -d: -f2; }
# h2d FILE - host-to-device bytes of the report's device object
h2d() {
    for k in sqe doorbell mmio_other prp_list data; do
        sed -n 's/.*"device":{"h2d_bytes":{\([^}]*\)}.*/\1/p' "$1" | tr ',' '\n' |
            grep "^\"$k\":" | cut -d: -f2
    done | awk '{ s += $1 } END { print s + 0 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r != "n/a" && r >= t) ? "met" : "NOT met" }'; }

run() { # NAME ARGS... - kvbench with a JSON report in $T/NAME.json
    _n=$1
    shift
    kvbench "$@" --json --progress off >"$T/$_n.json" 2>"$T/$_n.err" ||
        echo "warning: kvbench $_n exited $?: $(tail -n 2 "$T/$_n.err")" >&2
}

kvssd --device "$KV" format --yes >/dev/null
# 1. sync Store of 16 B keys / 64 B values vs 4 KiB reads through passthrough
run base baseline --device "$NVM" --ops "$OPS"
for m in prp adaptive; do
    kvssd --device "$KV" format --yes >/dev/null
    run "store-$m" --device "$KV" --mode "$m" --key-size 16 --value-size 64 --keys "$OPS" --no-run
done
# adaptive as BandSlim uses it: thresholds measured on this machine first
kvbench calibrate --device "$KV" --samples 50 --output "$T/transfer.conf" >"$T/calibrate.out" 2>&1 ||
    echo "warning: kvbench calibrate exited $?: $(tail -n 2 "$T/calibrate.out")" >&2
kvssd --device "$KV" format --yes >/dev/null
run store-adaptive-calibrated --device "$KV" --mode adaptive --xfer-config "$T/transfer.conf" \
    --key-size 16 --value-size 64 --keys "$OPS" --no-run
base=$(num "$T/base.json" ops_per_s)
for m in prp adaptive adaptive-calibrated; do
    s=$(num "$T/store-$m.json" ops_per_s)
    r=$(ratio "$s" "$base")
    printf 'sync store 16 B/64 B (%s, %s cmd/op): %s ops/s; 4 KiB passthrough reads on stock NVMe: %s ops/s; ratio %s (target >= 0.8: %s)\n' \
        "$m" "$(num "$T/store-$m.json" commands_per_op)" "$s" "$base" "$r" "$(verdict "$r" 0.8)"
done

# 2. async at queue depth 32 vs sync, same workload (adaptive)
kvssd --device "$KV" format --yes >/dev/null
run async --device "$KV" --qd 32 --key-size 16 --value-size 64 --keys "$OPS" --no-run
a=$(num "$T/async.json" ops_per_s)
s=$(num "$T/store-adaptive.json" ops_per_s)
r=$(ratio "$a" "$s")
printf 'async qd 32: %s ops/s vs sync %s ops/s: ratio %s (target >= 2: %s)\n' "$a" "$s" "$r" "$(verdict "$r" 2)"

# 3. host-to-device bytes of inline vs prp for values of 1-32 bytes (device counters)
for m in prp inline; do
    kvssd --device "$KV" format --yes >/dev/null
    run "small-$m" --device "$KV" --mode "$m" --key-size 8 --value-size uniform:1-32 --keys "$OPS" --no-run
done
p=$(h2d "$T/small-prp.json")
i=$(h2d "$T/small-inline.json")
cut=$(awk -v p="$p" -v i="$i" 'BEGIN { if (p > 0) printf "%.2f", 100 * (1 - i / p); else print "n/a" }')
printf 'host-to-device bytes, values 1-32 B: prp %s, inline %s: inline cuts %s %% (target >= 97: %s)\n' \
    "$p" "$i" "$cut" "$(verdict "$cut" 97)"
rm -rf "$T"
