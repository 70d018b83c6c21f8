#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The README's test command. Installs what is missing on a Debian machine,
# builds, and runs every suite: the C format check (one test per file) and
# the commit subjects since the convention (one per commit), the
# firmware and command-set unit suites,
# the model suite under AddressSanitizer/UBSan, the fuzz targets for a
# bounded time, the device qtests and the guest end-to-end suite. Every
# test case is reported as a TAP line; the last line is "N passed, N failed".
# Exit status is non-zero when anything failed. On stderr: each phase, what
# it builds or runs, a line a minute while a step runs (minutes, build step
# or test N/M, cases so far, a QEMU build's steps) and "PHASE: N passed, N
# failed" after each phase.
#
# Environment: BUILD_DIR (default build/), KVSSD_TEST_PHASES (space-separated
# subset of: format unit sanitize fuzz qtest guest; default all).
set -u
. "$(dirname "$0")/lib/common.sh"
cd "$KVSSD_TOP"

ensure_packages "${KVSSD_BUILD_PACKAGES[@]}"

phases=${KVSSD_TEST_PHASES:-format unit sanitize fuzz qtest guest}
build=${BUILD_DIR:-$KVSSD_TOP/build}
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# count_tap FILE - print "passed failed" for the TAP lines in FILE.
count_tap() {
    local p f
    p=$(grep -c '^ok ' "$1")
    f=$(grep -c '^not ok ' "$1")
    echo "$p $f"
}

# progress OUT [ERR] - the latest sign of progress of a long step, as
# ", ..." (empty when there is none): ninja's [N/M] or meson test's N/M from
# the tail of its log, the TAP cases a runner printed so far, and, with
# watch_qemu=1 (a runner that may build QEMU into the cache: its build log
# is the runner's own), the steps in the .ninja_log of a build written in
# the last 2 minutes and the last target ninja finished.
progress() {
    local step tap nl dir
    step=$(tail -c 20000 "$@" 2>/dev/null | tr '\r' '\n' |
           grep -aoE '^\[[0-9]+/[0-9]+\]|^ *[0-9]+/[0-9]+ ' | tail -n1 | tr -d ' []')
    [ -z "$step" ] || printf ', step %s' "$step"
    tap=$(cat "$@" 2>/dev/null | grep -acE '^(not )?ok ')
    [ "${tap:-0}" -eq 0 ] || printf ', %s cases so far (%s failed)' "$tap" \
        "$(cat "$@" 2>/dev/null | grep -ac '^not ok ')"
    [ "${watch_qemu:-0}" = 1 ] || return 0
    nl=$(find "$KVSSD_CACHE" -maxdepth 3 -path '*/build*/.ninja_log' -mmin -2 2>/dev/null | head -n1)
    if [ -n "$nl" ]; then
        dir=${nl%/.ninja_log}
        printf ', QEMU build in %s: %s steps logged, latest %s' "${dir/#$HOME/\~}" \
            "$(grep -vc '^#' "$nl")" "$(tail -n1 "$nl" | cut -f4 | sed 's|.*/||')"
    fi
}

# watched WHAT OUT ERR CMD... - run CMD with stdout to OUT and stderr to ERR
# (the same file is fine); while it runs, one line a minute on stderr saying
# WHAT, the minutes so far and progress(), so that a long build never looks
# hung. CMD stays in the foreground (Ctrl-C reaches it as before); the
# heartbeat is a background loop that ends with CMD or with this script.
# Returns CMD's exit status.
watched() {
    local what=$1 out=$2 err=$3 hb rc
    shift 3
    (
        start=$SECONDS next=60
        while sleep 2 && kill -0 $$ 2>/dev/null; do
            if [ $((SECONDS - start)) -ge $next ]; then
                log "   ... $what: $(((SECONDS - start) / 60)) min$(progress "$out" "$err")"
                next=$((next + 60))
            fi
        done
    ) &
    hb=$!
    if [ "$out" = "$err" ]; then
        "$@" >"$out" 2>&1
    else
        "$@" >"$out" 2>"$err"
    fi
    rc=$?
    kill "$hb" 2>/dev/null
    wait "$hb" 2>/dev/null
    return $rc
}

# configure DIR LOG ARGS... - set up (or reconfigure) a meson build dir.
configure() {
    local dir=$1 logf=$2
    shift 2
    if [ -f "$dir/meson-private/coredata.dat" ]; then
        meson setup "$dir" "$@" --reconfigure >"$logf" 2>&1 && return 0
        rm -rf "$dir"
    fi
    meson setup "$dir" "$@" >"$logf" 2>&1
}

# meson_phase NAME BUILDDIR MESON-TEST-ARGS... - run meson test, turn its log into TAP.
meson_phase() {
    local name=$1 dir=$2
    shift 2
    log "   $name: meson test in $dir"
    watched "$name: meson test" "$results/$name.meson" "$results/$name.meson" \
        meson test -C "$dir" --no-rebuild --print-errorlogs "$@"
    python3 - "$dir/meson-logs/testlog.json" >"$results/$name.tap" <<'PY'
import json, os, re, sys
if not os.path.exists(sys.argv[1]):
    sys.exit(0)
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = t.get("stdout") or ""
    tap = [l for l in out.splitlines() if re.match(r"(not )?ok ", l)]
    for l in tap:
        print(re.sub(r"^(not )?ok \d+ - ", lambda m: (m.group(1) or "") + "ok - " + t["name"] + ": ", l))
    if t["result"] not in ("OK", "EXPECTEDFAIL", "SKIP") and not any(l.startswith("not ok") for l in tap):
        print("not ok - %s: exited %s (%s)" % (t["name"], t.get("returncode"), t["result"]))
PY
}

# setup_failed PHASE STEP LOG... - a setup step of PHASE failed: its log's
# tail, one line with the reason and the fix, and a failed TAP line.
setup_failed() {
    local phase=$1 step=$2 why
    shift 2
    tail -n 40 "$1" >&2
    why=$(setup_failure "$@")
    log "   $phase: $step failed: $why"
    echo "not ok - $phase: $step failed: $why" >"$results/$phase.tap"
}

# qemu_cold_note PHASE - say so before a phase that builds QEMU from cold
# (qtest: every series of KVSSD_QTEST_QEMU, tests/qtest/run.sh; guest: the
# default series, scripts/build-qemu.sh).
qemu_cold_note() {
    local s b
    case $1 in qtest | guest) ;; *) return ;; esac
    [ -z "${QEMU_SRC:-}" ] || return
    [ "$1" = guest ] && [ -n "${QEMU:-}" ] && return
    for s in $([ "$1" = qtest ] && echo "${KVSSD_QTEST_QEMU:-10.0 10.2}" || echo "${KVSSD_QEMU:-10.2}"); do
        b=$KVSSD_CACHE/qemu$([ "$s" = 10.0 ] || echo "-$s")/build
        if [ "$1" = qtest ] && [ "${KVSSD_QTEST_ASAN:-1}" = 1 ] && [ "$s" = "${KVSSD_QTEST_ASAN_QEMU:-10.0}" ] &&
               [ ! -x "$b-asan/qemu-system-x86_64" ]; then
            log "   building QEMU $s with the device, plain and ASan trees (cold, 2 cores: ~10-35 min)…"
        elif [ ! -x "$b/qemu-system-x86_64" ]; then
            log "   building QEMU $s with the device (cold, 2 cores: ~4-15 min)…"
        fi
    done
}

for phase in $phases; do
    log "== phase: $phase"
    case $phase in
    format)
        # Commit subjects since the convention's base (scripts/check-commits.sh,
        # CONTRIBUTING.md), one test per commit, added to this phase's lines.
        scripts/check-commits.sh 2>"$results/commits.err" |
            sed -n "s/^\(\(not \)\?ok\) [0-9]* *-\?/\1 - commits:/p" >"$results/commits.lines"
        [ ! -s "$results/commits.err" ] || log "   format: $(head -n1 "$results/commits.err")"
        # Every tracked .c/.h file against .clang-format, one test per file.
        if ! command -v "$KVSSD_CLANG_FORMAT" >/dev/null &&
               ! (ensure_packages "$KVSSD_CLANG_FORMAT") >"$results/format-setup.log" 2>&1; then
            setup_failed format "installing $KVSSD_CLANG_FORMAT" "$results/format-setup.log"
            cat "$results/commits.lines" >>"$results/format.tap"
            continue
        fi
        scripts/check-format.sh --tap 2>"$results/format.err" |
            sed -n "s/^\(\(not \)\?ok\) [0-9]* *-\?/\1 - format:/p" >"$results/format.tap"
        if ! grep -q '^ok ' "$results/format.tap" && ! grep -q '^not ok' "$results/format.tap"; then
            setup_failed format scripts/check-format.sh "$results/format.err"
        fi
        cat "$results/commits.lines" >>"$results/format.tap"
        ;;
    unit)
        if ! configure "$build" "$results/setup.log" -Dwerror=true; then
            setup_failed unit "meson setup" "$results/setup.log" "$build/meson-logs/meson-log.txt"
            continue
        fi
        log "   unit: building $build (ninja)"
        if ! watched "unit: building" "$results/build.log" "$results/build.log" ninja -C "$build"; then
            setup_failed unit build "$results/build.log"
            continue
        fi
        meson_phase unit "$build"
        ;;
    sanitize)
        # The firmware suites again under AddressSanitizer + UBSan.
        san=${build}-asan
        if ! configure "$san" "$results/san-setup.log" -Dwerror=true \
                 -Db_sanitize=address,undefined -Db_lundef=false; then
            setup_failed sanitize "meson setup" "$results/san-setup.log" "$san/meson-logs/meson-log.txt"
            continue
        fi
        log "   sanitize: building $san (ninja, ASan + UBSan)"
        if ! watched "sanitize: building" "$results/san-build.log" "$results/san-build.log" \
                 ninja -C "$san"; then
            setup_failed sanitize build "$results/san-build.log"
            continue
        fi
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            meson_phase sanitize "$san" --suite kvftl --suite model --suite cmdset --suite host
        sed -i 's/^\(\(not \)\?ok - \)/\1[asan] /' "$results/sanitize.tap"
        ;;
    *)
        runner=tests/$phase/run.sh
        if [ ! -x "$runner" ]; then
            log "   ($runner not present yet)"
            continue
        fi
        qemu_cold_note "$phase"
        log "   $phase: $runner"
        BUILD_DIR=$build watch_qemu=1 watched "$phase" "$results/$phase.out" "$results/$phase.err" \
            "$runner"
        rc=$?
        grep -E '^(not )?ok ' "$results/$phase.out" | sed "s/^\(\(not \)\?ok\) [0-9]* *-\?/\1 - $phase:/" >"$results/$phase.tap"
        if [ $rc -ne 0 ] && ! grep -q '^not ok' "$results/$phase.tap"; then
            echo "not ok - $phase: runner exited $rc" >>"$results/$phase.tap"
            tail -20 "$results/$phase.err" >&2
        fi
        # A setup that failed: the runner's own one-line reason ("PHASE: STEP
        # failed: REASON; FIX"), else one read from what it printed.
        if [ $rc -ne 0 ]; then
            why=$(grep -m1 -E "^$phase: .* failed: " "$results/$phase.err")
            if [ -z "$why" ] && grep -q '^not ok 1 - scripts/build-qemu.sh' "$results/$phase.out"; then
                why="$phase: QEMU build (scripts/build-qemu.sh) failed: $(setup_failure "$results/$phase.err")"
            elif [ -z "$why" ] && ! grep -q -E '^(not )?ok ' "$results/$phase.out"; then
                why="$phase: $runner failed: $(setup_failure "$results/$phase.err")"
            fi
            [ -z "$why" ] || log "   $why"
        fi
        ;;
    esac
    cat "$results/$phase.tap" 2>/dev/null
    read -r p f < <(count_tap "$results/$phase.tap" 2>/dev/null || echo "0 0")
    log "   $phase: $p passed, $f failed"
done

cat "$results"/*.tap 2>/dev/null >"$results/all"
read -r passed failed < <(count_tap "$results/all")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
