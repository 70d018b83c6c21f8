#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build the fuzz targets with clang (libFuzzer + ASan + UBSan) and run each
# for a bounded time: fuzz_kvftl_api (the firmware API against a reference
# model, seeded from tests/fuzz/corpus), fuzz_cmdset (raw SQEs through
# the KV command set, seeded by fuzz_cmdset_smoke --corpus), fuzz_image
# (real images, damaged, mounted and exercised; seeded from
# tests/fuzz/image-corpus, written by make_image_corpus.py) and
# fuzz_block_api (the nvm personality's commands against the sector model,
# seeded from tests/fuzz/block-corpus, written by make_block_corpus.py) and
# fuzz_kvftl_batch (the batch calls against the same calls one at a time on a
# twin device, seeded from tests/fuzz/batch-corpus, written by
# make_batch_corpus.py); then fuzz_kvftl_api, fuzz_image and
# fuzz_kvftl_batch again under index=pm983 and index=lsm.
# Prints TAP:
#   ok N - fuzz NAME (N runs, 0 crashes)
#   not ok N - fuzz NAME (...): crash file <path>
# and exits non-zero on a build failure or a crash.
#
# Environment:
#   KVSSD_FUZZ_SECONDS  upper bound on each target's run time in seconds (default 60)
#   KVSSD_FUZZ_SEED     libFuzzer's -seed (default 1): with a fresh build dir the
#                       same inputs run every time, so a result is reproducible
#   KVSSD_FUZZ_RUNS     inputs per target (default 2000)
#   BUILD_DIR           the build dir of scripts/test.sh; the fuzz build goes
#                       to $BUILD_DIR-fuzz (default /tmp/kvssd-build-fuzz)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../scripts/lib/common.sh"
cd "$KVSSD_TOP"

seconds=${KVSSD_FUZZ_SECONDS:-60}
case $seconds in
''|*[!0-9]*) die "KVSSD_FUZZ_SECONDS is '$seconds'; it must be a whole number of seconds from 1 up" ;;
esac
[ "$seconds" -ge 1 ] || die "KVSSD_FUZZ_SECONDS is 0; it must be a whole number of seconds from 1 up"

if [ -n "${BUILD_DIR:-}" ]; then
    fbuild=${BUILD_DIR%/}-fuzz
else
    fbuild=/tmp/kvssd-build-fuzz
fi

ensure_packages "${KVSSD_BUILD_PACKAGES[@]}" clang
# The sanitizer and libFuzzer runtimes: only a recommendation of clang.
ensure_packages "$(clang_rt_package)"

echo "1..11"
log "fuzz: building in $fbuild"
# The whole build is instrumented for coverage (fuzzer-no-link) and the
# sanitizers; only the fuzz target links libFuzzer.
setup_args=(-Dfuzz=true -Dhost_tools=false -Db_sanitize=address,undefined -Db_lundef=false
            -Dbuildtype=debugoptimized "-Dc_args=-fsanitize=fuzzer-no-link")
# A configured dir is reconfigured (wiped if that fails), any other is set up
# afresh; the log of the last attempt is kept.
if [ -f "$fbuild/meson-private/coredata.dat" ]; then
    CC=clang meson setup "$fbuild" "${setup_args[@]}" --reconfigure >"$fbuild.setup.log" 2>&1 ||
        CC=clang meson setup "$fbuild" "${setup_args[@]}" --wipe >"$fbuild.setup.log" 2>&1
else
    rm -rf "$fbuild"
    CC=clang meson setup "$fbuild" "${setup_args[@]}" >"$fbuild.setup.log" 2>&1
fi
if [ $? -ne 0 ]; then
    tail -30 "$fbuild.setup.log" >&2
    why=$(setup_failure "$fbuild.setup.log" "$fbuild/meson-logs/meson-log.txt")
    log "fuzz: meson setup failed: $why"
    echo "not ok 1 - fuzz kvftl_api: meson setup failed: $why (log: $fbuild.setup.log)"
    exit 1
fi
if ! ninja -C "$fbuild" tests/fuzz/fuzz_kvftl_api tests/cmdset/fuzz_cmdset \
        tests/cmdset/fuzz_cmdset_smoke tests/fuzz/fuzz_image tests/fuzz/fuzz_block_api \
        tests/fuzz/fuzz_kvftl_batch \
        >"$fbuild.build.log" 2>&1; then
    tail -30 "$fbuild.build.log" >&2
    why=$(setup_failure "$fbuild.build.log")
    log "fuzz: build failed: $why"
    echo "not ok 1 - fuzz kvftl_api: build failed: $why (log: $fbuild.build.log)"
    echo "not ok 2 - fuzz cmdset: build failed: $why (log: $fbuild.build.log)"
    echo "not ok 3 - fuzz image: build failed: $why"
    echo "not ok 4 - fuzz block_api: build failed: $why"
    echo "not ok 5 - fuzz kvftl_batch: build failed: $why"
    n=5
    for design in pm983 lsm; do
        for t in kvftl_api image kvftl_batch; do
            n=$((n + 1))
            echo "not ok $n - fuzz $t-$design: build failed: $why"
        done
    done
    exit 1
fi

# run_target N NAME BINARY SEED-CORPUS - run one target; print its TAP line.
# The generated corpus persists in the build dir, so repeated runs go deeper;
# the seed corpus is read, never written.
run_target() {
    local n=$1 name=$2 bin=$3 seeds=$4 work=$fbuild/fuzz-work-$2 rc runs crash
    rm -rf "$work/artifacts"
    mkdir -p "$work/corpus" "$work/artifacts"
    log "fuzz: running $name for ${seconds}s"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$bin" -seed="${KVSSD_FUZZ_SEED:-1}" -runs="${KVSSD_FUZZ_RUNS:-2000}" \
        -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -max_len=8192 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
        "$work/corpus" "$seeds" >"$work/fuzz.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | awk '{s+=$1} END {print s+0}')
    # A slow-unit file (an input over libFuzzer's 10 s report threshold, as an
    # instrumented lsm batch can be on 2 loaded cores) is a time, not a
    # finding: hangs are -timeout's (a timeout-* file and a failing exit).
    crash=$(ls "$work"/artifacts/* 2>/dev/null | grep -v '/slow-unit-' | head -1)
    if [ $rc -ne 0 ] || [ -n "$crash" ]; then
        tail -40 "$work/fuzz.log" >&2
        echo "not ok $n - fuzz $name ($runs runs, crashed): crash file ${crash:-none} (log: $work/fuzz.log)"
        return 1
    fi
    echo "ok $n - fuzz $name ($runs runs, 0 crashes)"
}

status=0
run_target 1 kvftl_api "$fbuild/tests/fuzz/fuzz_kvftl_api" "$here/corpus" || status=1

cmdset_seeds=$fbuild/fuzz-seeds-cmdset
rm -rf "$cmdset_seeds"
mkdir -p "$cmdset_seeds"
if ! "$fbuild/tests/cmdset/fuzz_cmdset_smoke" --corpus "$cmdset_seeds" >"$fbuild.seeds.log" 2>&1; then
    tail -20 "$fbuild.seeds.log" >&2
    echo "not ok 2 - fuzz cmdset: writing the seed corpus failed (log: $fbuild.seeds.log)"
    exit 1
fi
run_target 2 cmdset "$fbuild/tests/cmdset/fuzz_cmdset" "$cmdset_seeds" || status=1
# A finding of fuzz_image goes to tests/fuzz/image-open-bugs/, and to
# image-regressions/ (replayed by meson) once fixed.
run_target 3 image "$fbuild/tests/fuzz/fuzz_image" "$here/image-corpus" || status=1
# A finding of fuzz_block_api: trace it with KVFTL_FUZZ_TRACE=1 and the replay
# binary (kvftl_fuzz_block_replay FILE), as for the KV target.
run_target 4 block_api "$fbuild/tests/fuzz/fuzz_block_api" "$here/block-corpus" || status=1
# A finding of fuzz_kvftl_batch names the step, the request and the field the
# twins differ in; KVFTL_FUZZ_TRACE=1 kvftl_fuzz_batch_replay FILE traces it.
run_target 5 kvftl_batch "$fbuild/tests/fuzz/fuzz_kvftl_batch" "$here/batch-corpus" || status=1
# The KV targets again under the other index designs (KVFTL_FUZZ_INDEX,
# tests/common/kvftl_small.h): the same seeds, each design's own corpus.
n=5
for design in pm983 lsm; do
    export KVFTL_FUZZ_INDEX=$design
    run_target $((n + 1)) kvftl_api-$design "$fbuild/tests/fuzz/fuzz_kvftl_api" "$here/corpus" ||
        status=1
    run_target $((n + 2)) image-$design "$fbuild/tests/fuzz/fuzz_image" "$here/image-corpus" ||
        status=1
    run_target $((n + 3)) kvftl_batch-$design "$fbuild/tests/fuzz/fuzz_kvftl_batch" \
        "$here/batch-corpus" || status=1
    n=$((n + 3))
    unset KVFTL_FUZZ_INDEX
done
exit $status
