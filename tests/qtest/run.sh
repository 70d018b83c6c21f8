#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The device qtests, on every QEMU series of KVSSD_QTEST_QEMU (default
# "10.0 10.2"; scripts/build-qemu.sh --qemu, each series cached apart): builds
# QEMU with the kvssd device (plus, for the series of KVSSD_QTEST_ASAN_QEMU,
# default 10.0, the AddressSanitizer/UBSan tree: the device and firmware code
# it checks is the same on every series), then runs
#   - kvssd-test        every register/admin/DMA/KV case, on both builds;
#   - kvssd-fuzz-test   >= 100,000 random commands and queue operations on
#                       both builds (with the attack classes of docs/device.md
#                       "Tests": looping PRP lists, SQ deletion on undrained CQs,
#                       resets with a full tag table, colliding keys), then the
#                       FTL consistency check and QEMU's RSS bound; again with
#                       latency=on (a fifth of the commands);
#   - kvssd-*-test      every other qtest (robustness: hostile commands,
#                       damaged images, the nvm personality), on both builds;
#   - the KV qtests again under index=pm983 and index=lsm (one series);
#   - realize checks    invalid properties fail with a sentence.
# Prints one TAP line per case ("ok N - [SERIES] name" / "not ok N - ...") and exits
# non-zero if any failed. Environment: KVSSD_FUZZ_COMMANDS (default 100000),
# KVSSD_QTEST_SEED (the random test's seed, default 1: every run is the same
# run; the seed is printed), KVSSD_QTEST_ASAN=0 to skip the ASan build,
# KVSSD_QTEST_TIMEOUT (seconds per qtest binary, default
# 1200: a device that hangs fails the binary instead of hanging the suite).
set -u
. "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$KVSSD_TOP"

n=0
failed=0
tap() { # STATUS(ok|not ok) NAME
    n=$((n + 1))
    echo "$1 $n - $2"
    [ "$1" = ok ] || failed=$((failed + 1))
}

asan=${KVSSD_QTEST_ASAN:-1}
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

# run_series SERIES - build QEMU SERIES with the device and run every qtest on it.
run_series() {
local series=$1 asan=$asan qemu build
case " ${KVSSD_QTEST_ASAN_QEMU:-10.0} " in *" $series "*) ;; *) asan=0 ;; esac
if ! qemu=$(KVSSD_QEMU_ASAN=$asan scripts/build-qemu.sh --qemu "$series" 2>"$logdir/build-$series.log" | tail -n1) ||
   [ ! -x "$qemu" ]; then
    tail -30 "$logdir/build-$series.log" >&2
    tap "not ok" "[$series] scripts/build-qemu.sh --qemu $series"
    return
fi
build=$(dirname "$qemu")
tap ok "[$series] scripts/build-qemu.sh --qemu $series builds $qemu"

# run_qtest BUILD-DIR TEST LABEL [MACHINE] - run one qtest binary, relay its TAP lines.
run_qtest() {
    local dir=$1 test=$2 label=$series${3:+ $3} rc
    local out=$logdir/$test-${label// /-}.out
    (cd "$dir" && QTEST_QEMU_BINARY=./qemu-system-x86_64 KVSSD_QTEST_MACHINE=${4:-pc} \
        ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        timeout -s KILL "${KVSSD_QTEST_TIMEOUT:-1200}" "./tests/qtest/$test" --tap -k) >"$out" 2>&1
    rc=$?
    # On expiry timeout kills its whole process group: the test binary and its
    # QEMU, which a hang keeps from handling a gentler signal.
    [ $rc -eq 137 ] && echo "Bail out! $test: killed after ${KVSSD_QTEST_TIMEOUT:-1200} s (a hang?)" >>"$out"
    local seen=0 line
    while IFS= read -r line; do
        case $line in
        "ok "*)
            seen=1
            tap ok "${label:+[$label] }${line#ok * }"
            ;;
        "not ok "*)
            seen=1
            tap "not ok" "${label:+[$label] }${line#not ok * }"
            ;;
        "Bail out! "*)
            seen=2
            tap "not ok" "${label:+[$label] }${line#Bail out! }"
            ;;
        "# kvssd fuzz"* | "# io ok"*)
            echo "# ${label:+[$label] }${line#\# }"
            ;;
        esac
    done <"$out"
    if [ $rc -ne 0 ]; then
        grep -E 'ERROR|Bail out|AddressSanitizer|runtime error|SUMMARY' "$out" | head -20 >&2
        [ $seen -eq 1 ] && ! grep -q '^not ok' "$out" &&
            tap "not ok" "${label:+[$label] }$test exited $rc"
        [ $seen -eq 0 ] && tap "not ok" "${label:+[$label] }$test exited $rc"
    fi
}

run_qtest "$build" kvssd-test ""
run_qtest "$build" kvssd-test q35 q35
# The random test on the plain build too: its RSS bound is tightest there.
run_qtest "$build" kvssd-fuzz-test ""
if [ "$asan" = 1 ]; then
    run_qtest "$build-asan" kvssd-test asan
    run_qtest "$build-asan" kvssd-fuzz-test asan
fi
# Every other qtest (tests/qtest/kvssd-*-test.c): on the plain build (where
# host-memory bounds are read from QEMU's RSS) and on the ASan build.
for t in tests/qtest/kvssd-*-test.c; do
    t=$(basename "$t" .c)
    case $t in kvssd-test | kvssd-fuzz-test) continue ;; esac
    run_qtest "$build" "$t" ""
    [ "$asan" = 1 ] && run_qtest "$build-asan" "$t" asan
done

# The other index designs (docs/kvftl.md, "Index design"): every qtest that
# reaches the KV index again under index=pm983 and index=lsm
# (KVSSD_QTEST_INDEX, tests/qtest/kvssd-common.h), on one series
# (KVSSD_QTEST_DESIGNS_QEMU, default 10.0: the device code is the same on
# every series), its ASan build when there is one: hostile commands, power
# cuts and damaged images against each design's own code.
if [ "$series" = "${KVSSD_QTEST_DESIGNS_QEMU:-10.0}" ]; then
    local dir=$build on=""
    [ "$asan" = 1 ] && dir=$build-asan on="asan "
    for ix in pm983 lsm; do
        export KVSSD_QTEST_INDEX=$ix
        for t in kvssd-test kvssd-fuzz-test kvssd-crash-test kvssd-image-test kvssd-index-test \
                 kvssd-slices-test kvssd-transport-test; do
            run_qtest "$dir" "$t" "${on}index=$ix"
        done
        unset KVSSD_QTEST_INDEX
    done
fi

# Realize: an invalid property value stops QEMU with a sentence naming it,
# from its property as sim: words it ("NAME is 'TEXT'; ...") or, for a range
# that depends on others, from the firmware's check at realize
# (kvssd-props-test checks a few whole lines: QEMU's prefix, then the sentence).
check_realize() { # PROPS EXPECTED-SUBSTRING
    local out
    out=$("$qemu" -L /usr/share/seabios -L /usr/share/qemu -machine pc -accel qtest \
          -display none -nodefaults -device "kvssd,$1" 2>&1 </dev/null)
    if [ $? -ne 0 ] && grep -qF "$2" <<<"$out"; then
        tap ok "[$series] realize refuses $1 ($2)"
    else
        echo "$out" | tail -3 >&2
        tap "not ok" "[$series] realize refuses $1"
    fi
}
check_realize max-ioqpairs=65 "max-ioqpairs is '65'; it must be from 1 to 64"
check_realize dma-unit=3 "dma-unit is '3'; it must be a power of two"
check_realize packing=tight "packing is 'tight'; it must be block, all, selective, backfill or auto (the preset's)"
check_realize placement-unit-bytes=3 "placement-unit-bytes is '3'; it must be a power of two from 1 to 4096"
check_realize mdts=2 "mdts is '2'; it must be from 9"
check_realize preset=nosuch "preset is 'nosuch'"
check_realize command-set=blk "command-set is 'blk'; it must be kv, nvm or auto (the preset's)"
check_realize command-set=nvm,lba-bytes=1000 "lba-bytes is '1000'; it must be a power of two from 512 to 4096"
check_realize index-dram-bytes=64x "index-dram-bytes is '64x'; it must be at least two index pages"
check_realize placement-unit-bytes=1024,large-blob-unit-bytes=2048 \
    "large_blob_unit_bytes is 2048; it must be 0 or a power of two from 1 to placement_unit_bytes (1024)"
check_realize preset=pm983,page-data-bytes=2048 \
    "page_data_bytes is 2048; it must be 0 (the whole page) or a multiple of the large blob unit (1) from 4096 to page_size_bytes (32768)"

}

for series in ${KVSSD_QTEST_QEMU:-10.0 10.2}; do
    run_series "$series"
done
[ $failed -eq 0 ]
