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
#   scripts/run-guest.sh --icount 0 --file host/bench/perf-ratios.sh -- \
#       ONLY=overlap sh /root/perf-ratios.sh
#
# Environment (the guest's: run-guest.sh passes none of the host's, so set
# them in the guest command as above): KV (default /dev/ng0n1), NVM (default
# /dev/ng1n1), OPS (operations per measurement, default 20000), ROUNDS
# (rounds of the overlap ratios, default 3), ONLY=overlap (only those rounds),
# COALESCE (the Interrupt Coalescing value, Set Features 08h, of the overlap
# rounds' fourth measurement, default 0x0a07: 8 completions or 1 ms; 0: no
# fourth measurement).
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

if [ "${ONLY:-}" != overlap ]; then
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
fi

# 2. overlap: PRP Store 16 B/64 B, async at queue depth 32 vs sync (target:
# median >= 2.5, no round below 2), and async qd 32 on 2 threads vs 1
# (target >= 1.5). ROUNDS rounds, each measuring the three back to back, so
# a drift of the host's load moves a round, not a ratio; the median and the
# spread (min-max) of each ratio over the rounds. A fourth measurement per
# round, async at queue depth 32 with the drive's interrupt coalescing set
# to COALESCE (nvme-cli's set-feature, as an administrator tunes a drive for
# deep queues; Linux leaves it at its reset value, off), and set back to 0
# before the next sync run: its ratio to the same round's sync run is
# printed beside the other.
# irqs - the interrupts of the KV-SSD's queues so far (guest /proc/interrupts)
ctrl=$(basename "$KV" | sed -n 's/^ng\([0-9]*\)n.*/nvme\1/p')
irqs() {
    grep " ${ctrl}q[0-9]*\$" /proc/interrupts |
        awk '{ for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }'
}
# doorbells FILE - doorbell writes the device counted (4 bytes each)
doorbells() {
    sed -n 's/.*"device":{"h2d_bytes":{\([^}]*\)}.*/\1/p' "$1" | tr ',' '\n' |
        grep '^"doorbell":' | cut -d: -f2 | awk '{ print $1 / 4 }'
}
# cpu - the guest's CPU time so far, all CPUs, in clock ticks: busy (user,
# nice, system, irq, softirq) and idle (idle, iowait), from /proc/stat
cpu() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
store() { # NAME ARGS... - a formatted KV-SSD, OPS PRP Stores (load phase only); $T/NAME.irq, .cpu
    _n=$1
    shift
    kvssd --device "$KV" format --yes >/dev/null
    _i=$(irqs)
    _c=$(cpu)
    run "$_n" --device "$KV" --mode prp --key-size 16 --value-size 64 --keys "$OPS" --no-run "$@"
    echo $(($(irqs) - _i)) >"$T/$_n.irq"
    echo "$_c $(cpu)" >"$T/$_n.cpu"
}
# per_op NAME - doorbell writes, interrupts, kvbench's own CPU time (its
# report's cpu_us_per_op: the phase's user + system time) and the guest's
# (busy and idle microseconds, all vCPUs, the kernel's clock ticks, getconf
# CLK_TCK, kvbench's start-up included) per Store of run NAME. Under
# --icount CPU time is guest instructions (1 ns each at shift 0): what a
# queue depth cannot overlap.
per_op() {
    awk -v d="$(doorbells "$T/$1.json")" -v i="$(cat "$T/$1.irq")" -v n="$OPS" \
        -v p="$(num "$T/$1.json" cpu_us_per_op)" \
        -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" -v c="$(cat "$T/$1.cpu")" \
        'BEGIN { split(c, t, " "); us = 1e6 / hz / n
                 printf "%.2f doorbells, %.2f interrupts, kvbench cpu %.2f us, guest cpu %.1f us busy + %.1f us idle per op",
                     d / n, i / n, p, (t[3] - t[1]) * us, (t[4] - t[2]) * us }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "n/a" }'; }
spread() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s-%s", lo, hi; else print "n/a" }'; }
ROUNDS=${ROUNDS:-3}
COALESCE=${COALESCE:-0x0a07}
# coalesce VALUE - Set Features 08h (Interrupt Coalescing) on the KV-SSD's controller
coalesce() {
    nvme set-feature "/dev/$ctrl" --feature-id=8 --value="$1" >/dev/null 2>"$T/coalesce.err" || {
        echo "warning: nvme set-feature /dev/$ctrl --feature-id=8 --value=$1 failed: $(tail -n 1 "$T/coalesce.err")" >&2
        return 1
    }
}
if [ "$COALESCE" != 0 ] && ! command -v nvme >/dev/null; then
    echo "warning: no nvme (nvme-cli) in this guest: no coalesced measurement" >&2
    COALESCE=0
fi
r=1
while [ $r -le "$ROUNDS" ]; do
    [ "$COALESCE" = 0 ] || coalesce 0 || COALESCE=0
    store "sync$r" --io sync
    store "async$r" --qd 32
    store "async2t$r" --qd 32 --threads 2
    s=$(num "$T/sync$r.json" ops_per_s)
    a=$(num "$T/async$r.json" ops_per_s)
    t=$(num "$T/async2t$r.json" ops_per_s)
    ra=$(ratio "$a" "$s")
    rt=$(ratio "$t" "$a")
    printf 'round %d: prp store sync %s ops/s, async qd 32 %s ops/s (x%s), 2 threads %s ops/s (x%s)\n' \
        "$r" "$s" "$a" "$ra" "$t" "$rt"
    printf '  sync: %s; async: %s; 2 threads: %s\n' "$(per_op "sync$r")" "$(per_op "async$r")" \
        "$(per_op "async2t$r")"
    echo "$ra" >>"$T/async.ratios"
    echo "$rt" >>"$T/threads.ratios"
    if [ "$COALESCE" != 0 ] && coalesce "$COALESCE"; then
        store "asyncc$r" --qd 32
        coalesce 0
        c=$(num "$T/asyncc$r.json" ops_per_s)
        rc=$(ratio "$c" "$s")
        printf '  async qd 32, interrupt coalescing %s: %s ops/s (x%s of sync); %s\n' "$COALESCE" \
            "$c" "$rc" "$(per_op "asyncc$r")"
        echo "$rc" >>"$T/coalesced.ratios"
    fi
    r=$((r + 1))
done
m=$(median <"$T/async.ratios")
lo=$(sort -n "$T/async.ratios" | head -n 1)
printf 'async qd 32 vs sync (prp store): median %s, spread %s over %d rounds (target median >= 2.5: %s; every round >= 2: %s)\n' \
    "$m" "$(spread <"$T/async.ratios")" "$ROUNDS" "$(verdict "$m" 2.5)" "$(verdict "$lo" 2)"
if [ -s "$T/coalesced.ratios" ]; then
    m=$(median <"$T/coalesced.ratios")
    lo=$(sort -n "$T/coalesced.ratios" | head -n 1)
    printf 'async qd 32 with interrupt coalescing %s vs sync (prp store): median %s, spread %s over %d rounds (target median >= 2.5: %s; every round >= 2: %s)\n' \
        "$COALESCE" "$m" "$(spread <"$T/coalesced.ratios")" "$(wc -l <"$T/coalesced.ratios")" \
        "$(verdict "$m" 2.5)" "$(verdict "$lo" 2)"
fi
m=$(median <"$T/threads.ratios")
printf 'async qd 32, 2 threads vs 1: median %s, spread %s over %d rounds (target >= 1.5: %s)\n' \
    "$m" "$(spread <"$T/threads.ratios")" "$ROUNDS" "$(verdict "$m" 1.5)"

# 3. host-to-device bytes of inline vs prp for values of 1-32 bytes (device counters)
[ "${ONLY:-}" = overlap ] && { rm -rf "$T"; exit 0; }
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
