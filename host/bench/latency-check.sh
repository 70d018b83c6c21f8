#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Does latency=on add the model's latency and nothing more? 4 KiB Retrieves
# (kvbench, read=100, one thread: sync, or polled with POLL=1) on two KV-SSDs of one guest: the
# first holds its completions (latency=on, read-latency-ns as given), the
# second posts them at once (latency=off). Rounds alternate between the
# two, so both see the same host load; per round it prints the guest's p50
# and p99 on each, the device's simulated p50 and p99, and whether
# (on - off) is within 10 % of the simulated latency. Numbers only: nothing
# here fails a test suite.
#
#   scripts/run-guest.sh --icount 0 --latency --prop read-latency-ns=200000 \
#       --second-device kvssd --script host/bench/latency-check.sh
#   scripts/run-guest.sh --cpus 1 --poll-queues 1 --latency \
#       --prop read-latency-ns=200000 --second-device kvssd \
#       --file host/bench/latency-check.sh -- POLL=1 sh /root/latency-check.sh
#
# Environment: ON (default /dev/ng0n1, latency=on), OFF (default
# /dev/ng1n1, latency=off), KEYS (keys loaded, default 2000), OPS (reads
# per measurement, default 2000), ROUNDS (default 3), POLL (1: the reads
# go through io_uring at queue depth 1 with polled completions, kvbench
# --io async --qd 1 --poll, instead of the sleeping ioctl; with the
# driver's poll queues, run-guest.sh --poll-queues, no interrupt at all).
ON=${ON:-/dev/ng0n1}
OFF=${OFF:-/dev/ng1n1}
KEYS=${KEYS:-2000}
OPS=${OPS:-2000}
ROUNDS=${ROUNDS:-3}
POLL=${POLL:-0}
case $POLL in
0) path="sync ioctl" io="--io sync" ;;
1) path="io_uring, queue depth 1, polled completions (poll queues: $(cat /sys/module/nvme/parameters/poll_queues 2>/dev/null || echo unknown))"
   io="--io async --qd 1 --poll" ;;
*) echo "POLL '$POLL' is not valid: use 0 or 1" >&2; exit 2 ;;
esac
T=${TMPDIR:-/tmp}/latency-check.$$
mkdir -p "$T"

# field FILE OBJECT KEY - KEY of the first "OBJECT":{...} in a kvbench JSON report (the
# phase's latency_us: the one after its op_counts)
field() {
    if [ "$2" = latency_us ]; then
        grep -o '"op_counts":{[^{}]*},"latency_us":{[^{}]*' "$1"
    else
        grep -o "\"$2\":{[^{}]*}" "$1"
    fi | head -n 1 | grep -o "\"$3\":[0-9.]*" | cut -d: -f2
}
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
# within DIFF SIM - "yes" when DIFF is within 10 % of SIM
within() { awk -v d="$1" -v s="$2" 'BEGIN { e = d - s; if (e < 0) e = -e; print (s > 0 && e <= 0.1 * s) ? "yes" : "NO" }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "n/a" }'; }

# read DEV NAME - KEYS keys of 16 B / 4 KiB loaded, then OPS Retrieves: $T/NAME.json
read_run() {
    # shellcheck disable=SC2086 # $io is several words
    kvbench --device "$1" $io --mode prp --key-size 16 --value-size 4096 --keys "$KEYS" --no-load \
        --mix read=100 --order uniform --ops "$OPS" --json --progress off >"$T/$2.json" 2>"$T/$2.err" ||
        echo "warning: kvbench $2 exited $?: $(tail -n 2 "$T/$2.err")" >&2
}
for d in "$ON" "$OFF"; do
    kvssd --device "$d" format --yes >/dev/null
    kvbench --device "$d" --mode prp --key-size 16 --value-size 4096 --keys "$KEYS" --no-run \
        --json --progress off >"$T/load.json" 2>"$T/load.err" ||
        echo "warning: kvbench load on $d exited $?: $(tail -n 2 "$T/load.err")" >&2
done

echo "4 KiB Retrieves, $OPS per measurement, $ROUNDS rounds, $path (us; guest = kvbench's per-operation wall clock)"
r=1
while [ $r -le "$ROUNDS" ]; do
    read_run "$OFF" "off$r"
    read_run "$ON" "on$r"
    off50=$(field "$T/off$r.json" latency_us p50)
    off99=$(field "$T/off$r.json" latency_us p99)
    on50=$(field "$T/on$r.json" latency_us p50)
    on99=$(field "$T/on$r.json" latency_us p99)
    sim50=$(field "$T/on$r.json" retrieve p50)
    sim99=$(field "$T/on$r.json" retrieve p99)
    d50=$(sub "$on50" "$off50")
    d99=$(sub "$on99" "$off99")
    printf 'round %d: latency=off p50 %s p99 %s; latency=on p50 %s p99 %s; simulated p50 %s p99 %s; on - off: p50 %s (%s) p99 %s (%s)\n' \
        "$r" "$off50" "$off99" "$on50" "$on99" "$sim50" "$sim99" \
        "$d50" "$(within "$d50" "$sim50")" "$d99" "$(within "$d99" "$sim99")"
    echo "$off50 $off99 $on50 $on99 $sim50 $sim99 $d50 $d99" >>"$T/rounds"
    r=$((r + 1))
done
col() { cut -d' ' -f"$1" "$T/rounds" | median; }
printf 'median of %d rounds: latency=off p50 %s p99 %s; latency=on p50 %s p99 %s; simulated p50 %s p99 %s\n' \
    "$ROUNDS" "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)"
printf 'on - off: p50 %s us vs simulated %s us (within 10 %%: %s); p99 %s us vs simulated %s us (within 10 %%: %s)\n' \
    "$(col 7)" "$(col 5)" "$(within "$(col 7)" "$(col 5)")" "$(col 8)" "$(col 6)" "$(within "$(col 8)" "$(col 6)")"
rm -rf "$T"
