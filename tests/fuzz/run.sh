#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build the kvftl API fuzz target with clang (libFuzzer + ASan + UBSan) and
# run it for a bounded time from the committed seed corpus. Prints TAP:
#   ok 1 - fuzz kvftl_api (N runs, 0 crashes)
#   not ok 1 - fuzz kvftl_api (...): crash file <path>
# and exits non-zero on a build failure or a crash.
#
# Environment:
#   KVSSD_FUZZ_SECONDS  run time in seconds (default 60)
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

echo "1..1"
log "fuzz: building in $fbuild"
# The whole build is instrumented for coverage (fuzzer-no-link) and the
# sanitizers; only the fuzz target links libFuzzer.
setup_args=(-Dfuzz=true -Dhost_tools=false -Db_sanitize=address,undefined -Db_lundef=false
            -Dbuildtype=debugoptimized "-Dc_args=-fsanitize=fuzzer-no-link")
if ! { CC=clang meson setup "$fbuild" "${setup_args[@]}" --reconfigure >"$fbuild.setup.log" 2>&1 ||
       CC=clang meson setup "$fbuild" "${setup_args[@]}" --wipe >"$fbuild.setup.log" 2>&1; }; then
    tail -30 "$fbuild.setup.log" >&2
    echo "not ok 1 - fuzz kvftl_api: meson setup failed (log: $fbuild.setup.log)"
    exit 1
fi
if ! ninja -C "$fbuild" tests/fuzz/fuzz_kvftl_api >"$fbuild.build.log" 2>&1; then
    tail -30 "$fbuild.build.log" >&2
    echo "not ok 1 - fuzz kvftl_api: build failed (log: $fbuild.build.log)"
    exit 1
fi

# The generated corpus persists in the build dir, so repeated runs go deeper;
# the committed seeds (tests/fuzz/corpus) are read, never written.
work=$fbuild/fuzz-work
rm -rf "$work/artifacts"
mkdir -p "$work/corpus" "$work/artifacts"
log "fuzz: running for ${seconds}s"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$fbuild/tests/fuzz/fuzz_kvftl_api" \
    -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -max_len=8192 \
    -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" \
    "$work/corpus" "$here/corpus" >"$work/fuzz.log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | awk '{s+=$1} END {print s+0}')
crash=$(ls "$work"/artifacts/* 2>/dev/null | head -1)
if [ $rc -ne 0 ] || [ -n "$crash" ]; then
    tail -40 "$work/fuzz.log" >&2
    echo "not ok 1 - fuzz kvftl_api ($runs runs, crashed): crash file ${crash:-none} (log: $work/fuzz.log)"
    exit 1
fi
echo "ok 1 - fuzz kvftl_api ($runs runs, 0 crashes)"
