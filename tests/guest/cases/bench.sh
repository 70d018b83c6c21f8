# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "bench" (2 vCPUs, one NVMe poll queue: run-guest.sh --poll-queues
# 1): a kvbench mixed run with verification, two writers at once pinned to
# different CPUs (Linux then submits on two different NVMe queues), each
# checking its own keys, and polled completions.
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"
. "$(dirname "${KVSSD_GUEST_LIB:-/root/lib.sh}")/kvcli.sh"
BENCH_SECONDS=${BENCH_SECONDS:-60}

mixed_verify() {
    kvb_mixed "$BENCH_SECONDS" 1 >"$T/mixed.json" || fail "kvbench exited $?: $(tail -c 300 "$T/mixed.json")"
    bench_ok "$T/mixed.json"
}
check "kvbench mixed run of ${BENCH_SECONDS}s with verification: zero mismatches" mixed_verify

# tests/guest/writer.sh CPU PREFIX N: on CPU only, store N values under
# PREFIX in alternating transfer modes, then read each back and compare.
two_writers() {
    [ "$(nproc)" -ge 2 ] || fail "the guest has $(nproc) CPU; this case needs 2"
    taskset -c 0 sh /root/writer.sh 0 cpu0 200 >"$T/w0.log" 2>&1 &
    _p0=$!
    taskset -c 1 sh /root/writer.sh 1 cpu1 200 >"$T/w1.log" 2>&1 &
    _p1=$!
    wait $_p0; _r0=$?
    wait $_p1; _r1=$?
    [ $_r0 -eq 0 ] || fail "writer on CPU 0: $(tail -n 3 "$T/w0.log")"
    [ $_r1 -eq 0 ] || fail "writer on CPU 1: $(tail -n 3 "$T/w1.log")"
}
check "two processes on CPUs 0 and 1 (two queues) each store and verify 200 values" two_writers

two_benches() {
    [ "$(nproc)" -ge 2 ] || fail "the guest has $(nproc) CPU; this case needs 2"
    _s=$((BENCH_SECONDS / 2 > 10 ? BENCH_SECONDS / 2 : 10))
    taskset -c 0 sh -c ". /root/lib.sh; . /root/kvcli.sh; kvb_mixed $_s 2" >"$T/b0.json" 2>"$T/b0.err" &
    _p0=$!
    taskset -c 1 sh -c ". /root/lib.sh; . /root/kvcli.sh; kvb_mixed $_s 3" >"$T/b1.json" 2>"$T/b1.err" &
    _p1=$!
    wait $_p0 || fail "kvbench on CPU 0 failed: $(tail -n 3 "$T/b0.err")"
    wait $_p1 || fail "kvbench on CPU 1 failed: $(tail -n 3 "$T/b1.err")"
    bench_ok "$T/b0.json"
    bench_ok "$T/b1.json"
}
check "two kvbench runs at once on CPUs 0 and 1, each verifying its own keys: zero mismatches" two_benches

# ctrl_irqs - the interrupts of the I/O queues of $DEV's controller so far
# (/proc/interrupts lists a vector per interrupt-driven queue, nvmeXqN with
# N >= 1; a poll queue has none)
ctrl_irqs() {
    _c=$(basename "$DEV" | sed -n 's/^ng\([0-9]*\)n.*/nvme\1/p')
    grep " ${_c}q[1-9][0-9]*\$" /proc/interrupts |
        awk '{ for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }'
}
# kvbench --poll at queue depth 4 (io_uring IOPOLL): the driver sends its
# commands to the poll queue, so the controller's I/O queues take only the
# interrupts of the two Flushes kvbench sends through the (sleeping) ioctl
# at the end of its two phases; the same run without --poll takes more (the
# control: without it the first count proves nothing).
polled_io() {
    expect_eq "nvme.poll_queues" "$(cat /sys/module/nvme/parameters/poll_queues)" 1
    _i0=$(ctrl_irqs)
    kvb --qd 4 --poll --mode prp --key-size 16 --value-size 4096 --keys 500 --ops 500 \
        --mix read=50,update=50 >"$T/poll.json" || fail "kvbench --poll exited $?: $(tail -c 300 "$T/poll.json")"
    _i1=$(ctrl_irqs)
    bench_ok "$T/poll.json"
    grep -q '"poll":true' "$T/poll.json" || fail "the report does not say \"poll\":true"
    expect_eq "I/O-queue interrupts during the polled run (its two Flushes)" $((_i1 - _i0)) 2
    kvb --qd 4 --mode prp --key-size 16 --value-size 4096 --keys 500 --ops 500 \
        --mix read=50,update=50 >"$T/irq.json" || fail "kvbench exited $?: $(tail -c 300 "$T/irq.json")"
    _i2=$(ctrl_irqs)
    bench_ok "$T/irq.json"
    [ $((_i2 - _i1)) -gt 2 ] || fail "the same run without --poll took $((_i2 - _i1)) interrupts: no more than the polled one"
    echo "interrupts: polled run 2, interrupt-driven run $((_i2 - _i1))"
}
check "kvbench --poll on the driver's poll queue: 500 Stores and 500 reads/updates verified, I/O-queue interrupts only for its 2 Flushes (without --poll: more)" polled_io
done_group
