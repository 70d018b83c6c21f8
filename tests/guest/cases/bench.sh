# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "bench" (2 vCPUs): a kvbench mixed run with verification, and two
# writers at once pinned to different CPUs (Linux then submits on two
# different NVMe queues), each checking its own keys.
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
done_group
