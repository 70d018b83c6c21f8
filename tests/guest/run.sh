#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The guest end-to-end suite (phase "guest" of scripts/test.sh): boots the
# kvssd guest with `-device kvssd` under QEMU built by scripts/build-qemu.sh
# and runs the cases of tests/guest/cases/ inside it, one boot per group.
# Prints one TAP line per case ("ok N - name" / "not ok N - name", with "#"
# diagnostic lines) and exits non-zero when any case failed.
#
# A case whose prerequisite is missing (QEMU without the device, a guest
# without the host tools, a guest that stopped early) is reported "not ok"
# with the reason: nothing is skipped silently.
#
# Environment:
#   QEMU                        qemu-system-x86_64 to use (default: build-qemu.sh's)
#   KVSSD_GUEST_BENCH_SECONDS   length of the kvbench verification run (default 60)
#   KVSSD_GUEST_KERNELS         guest kernels for the nvme group, and with trixie
#                               the block group's 512 B boot runs 6.12 (default
#                               "bookworm trixie": Linux 6.1 and 6.12)
#   KVSSD_GUEST_GROUPS          subset of: nvme kv persist bench pci icount block disk
#                               fabrics
#                               (default all; disk boots the full VM of
#                               scripts/mkguest.sh --disk, see docs/guest.md)
#   KVSSD_GUEST_KEEP            keep the work directory (console logs) when set
#   KVSSD_GUEST_PROPS           NAME=VALUE ... added to the KV-SSD of every boot
#                               that has one (e.g. index=lsm: the groups under
#                               another index design); default none
#   KVSSD_GUEST_DESIGNS         index designs whose pass follows: the groups of
#                               KVSSD_GUEST_GROUPS among nvme (the last kernel),
#                               kv and persist again with index=D, each case
#                               named "[index=D] ..." (default "pm983 lsm";
#                               none when KVSSD_GUEST_PROPS is given)
#   KVSSD_GUEST_BOOT_RETRIES    boots again, at most this many times (default 1),
#                               a group whose guest kernel panicked before the
#                               group started (TCG, rarely: a boot that never
#                               reached the device), when the boot keeps no
#                               state (no image, no fabrics peer); each retry
#                               is logged and printed as a TAP comment
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib/common.sh"
here=$KVSSD_TOP/tests/guest
run_guest=$KVSSD_TOP/scripts/run-guest.sh

bench_s=${KVSSD_GUEST_BENCH_SECONDS:-60}
[[ $bench_s =~ ^[0-9]+$ ]] && [ "$bench_s" -ge 1 ] ||
    die "KVSSD_GUEST_BENCH_SECONDS '$bench_s' is not valid: give a whole number of seconds, 1 or more"
kernels=${KVSSD_GUEST_KERNELS:-bookworm trixie}
read -r -a guest_props <<<"${KVSSD_GUEST_PROPS:-}"
for p in "${guest_props[@]}"; do
    [[ $p =~ ^[a-z0-9-]+=[^,[:space:]]+$ ]] ||
        die "KVSSD_GUEST_PROPS names '$p'; give NAME=VALUE words (a -device kvssd property, no comma)"
done
boot_retries=${KVSSD_GUEST_BOOT_RETRIES:-1}
[[ $boot_retries =~ ^[0-9]+$ ]] && [ "$boot_retries" -le 10 ] ||
    die "KVSSD_GUEST_BOOT_RETRIES '$boot_retries' is not valid: give a whole number from 0 to 10"
groups=${KVSSD_GUEST_GROUPS:-nvme kv persist bench pci icount block disk fabrics}

work=$(mktemp -d "${TMPDIR:-/tmp}/kvssd-guest-test.XXXXXX")
if [ -n "${KVSSD_GUEST_KEEP:-}" ]; then
    log "work directory (kept): $work"
else
    trap 'rm -rf "$work"' EXIT
fi

n=0
failed=0
name_prefix=""  # "[index=D] " during a design's pass
tap_ok() { n=$((n + 1)); echo "ok $n - $name_prefix$1"; }
tap_not_ok() { # tap_not_ok NAME [DIAGNOSTIC LINES...]
    n=$((n + 1)); failed=$((failed + 1))
    echo "not ok $n - $name_prefix$1"
    shift
    local d
    for d in "$@"; do printf '%s\n' "$d" | sed 's/^/# /'; done
}

# list_cases GROUP [ENV...] - the case names of a group, without a device.
list_cases() {
    local g=$1
    shift
    env "$@" KVSSD_LIST=1 KVSSD_GUEST_LIB="$here/lib.sh" BENCH_SECONDS="$bench_s" sh "$here/cases/$g.sh"
}

# ---- prerequisites --------------------------------------------------------
prereq=
qemu=${QEMU:-}
if [ -z "$qemu" ]; then
    if [ -x "$KVSSD_TOP/scripts/build-qemu.sh" ]; then
        log "building QEMU with the device (scripts/build-qemu.sh; cached)"
        qemu=$("$KVSSD_TOP/scripts/build-qemu.sh" 2>"$work/build-qemu.log" | tail -n1)
        [ -n "$qemu" ] && [ -x "$qemu" ] ||
            { tail -n 30 "$work/build-qemu.log" >&2
              prereq="QEMU build (scripts/build-qemu.sh) failed: $(setup_failure "$work/build-qemu.log")"; qemu=; }
    else
        prereq="scripts/build-qemu.sh is not in this checkout: no QEMU with -device kvssd"
    fi
fi
if [ -z "$prereq" ] && ! "$qemu" -device help 2>/dev/null | grep -q '"kvssd"'; then
    prereq="$qemu has no -device kvssd"
fi
guest=
if [ -z "$prereq" ]; then
    guest=$("$KVSSD_TOP/scripts/mkguest.sh" 2>"$work/mkguest.log" | tail -n1)
    if [ -z "$guest" ] || [ ! -f "$guest/initrd.gz" ]; then
        tail -n 30 "$work/mkguest.log" >&2
        prereq="guest build (scripts/mkguest.sh) failed: $(setup_failure "$work/mkguest.log")"
    elif [ "$(cat "$guest/has-tools")" != yes ]; then
        prereq="the guest has no host tools: $(sed -n 's/^tools: //p' "$guest/manifest")"
    fi
fi
# One line for scripts/test.sh: what is missing and what fixes it.
case $prereq in
'') ;;
*" failed: "*) log "guest: $prereq" ;;
*) log "guest: setup failed: $prereq" ;;
esac

# The random pool the cases cut their values from (lib.sh mkdata): fixed
# seed, so every boot sees the same bytes.
python3 -c 'import random, sys
sys.stdout.buffer.write(random.Random(20261122).randbytes(2 * 1024 * 1024 + 65536))' >"$work/pool.bin"

# report_group TAG OUTFILE RC EXPECTED-NAMES-FILE - TAP lines for one boot.
report_group() {
    local tag=$1 out=$2 rc=$3 names=$4 name line why
    why="the guest stopped before this case (run-guest.sh exit $rc; see the console tail above)"
    if ! grep -q '^GUEST-GROUP-DONE$' "$out"; then
        echo "# $tag: the guest did not finish the group (exit $rc); last output:"
        grep -v '^GUEST-' "$out" | tail -n 15 | sed 's/^/#   /'
        sed 's/^/#   /' "$out.err" | tail -n 15
    fi
    while IFS= read -r name; do
        line=$(grep -F -x -n -e "GUEST-CASE ok $name" -e "GUEST-CASE fail $name" "$out" | head -n1)
        case $line in
        *"GUEST-CASE ok $name") tap_ok "$tag: $name" ;;
        *"GUEST-CASE fail $name")
            # the GUEST-DIAG lines right after the case line
            local ln=${line%%:*}
            mapfile -t diag < <(tail -n +$((ln + 1)) "$out" | sed -n '/^GUEST-DIAG /{s/^GUEST-DIAG //;p;b};q')
            tap_not_ok "$tag: $name" "${diag[@]}" ;;
        *) tap_not_ok "$tag: $name" "$why" ;;
        esac
    done <"$names"
    # A case the host did not expect is a bug in the case script: say so.
    local extra
    mapfile -t extra < <(grep '^GUEST-CASE ' "$out" | sed 's/^GUEST-CASE [a-z]* //' | grep -v -x -F -f "$names")
    for name in "${extra[@]}"; do
        tap_not_ok "$tag: $name" "the guest printed this case but the case script does not list it"
    done
}

# group_start GROUP TAG [run-guest options...] [-- ENV=VALUE...] - boot
# once in the background, running tests/guest/cases/GROUP.sh; sets
# group_pid (0 when a prerequisite is missing: its cases are reported
# "not ok" at once). group_finish TAG waits for it and reports its cases.
group_start() {
    local g=$1 tag=$2
    shift 2
    local opts=() envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    [ $# -eq 0 ] || { shift; envs=("$@"); }
    local names=$work/$tag.names out=$work/$tag.out p
    # the KV-SSD's KVSSD_GUEST_PROPS, where the boot has one (not a fabrics host's)
    case " ${opts[*]} " in
    *" --fabrics-host "* | *" --device none "* | *" --device nvme "*) ;;
    *) for p in "${guest_props[@]}"; do opts+=(--prop "$p"); done ;;
    esac
    list_cases "$g" "${envs[@]}" >"$names"
    group_pid=0
    if [ -n "$prereq" ]; then
        while IFS= read -r name; do tap_not_ok "$tag: $name" "prerequisite missing: $prereq"; done <"$names"
        return
    fi
    {
        printf 'export BENCH_SECONDS=%s\n' "$bench_s"
        local e
        for e in "${envs[@]}"; do printf 'export %q\n' "$e"; done
        cat "$here/cases/$g.sh"
    } >"$work/$tag.sh"
    : >"$out"
    echo $SECONDS >"$work/$tag.t0"
    "$run_guest" --qemu "$qemu" --timeout "${GROUP_TIMEOUT:-900}" \
        --file "$here/lib.sh:/root/lib.sh" --file "$here/kvcli.sh:/root/kvcli.sh" \
        --file "$here/writer.sh:/root/writer.sh" \
        --file "$work/pool.bin:/root/pool.bin" --pidfile "$work/$tag.pid" \
        --log "$work/$tag.console" \
        "${opts[@]}" --script "$work/$tag.sh" >"$out" 2>"$out.err" &
    group_pid=$!
}

# group_wait TAG - wait for the boot group_start started; its run-guest
# exit status in group_rc.
group_wait() {
    wait "$group_pid"
    group_rc=$?
    log "   group $1: $((SECONDS - $(cat "$work/$1.t0"))) s, run-guest exit $group_rc"
}

group_finish() {
    local tag=$1
    [ "$group_pid" != 0 ] || return 0
    group_wait "$tag"
    report_group "$tag" "$work/$tag.out" "$group_rc" "$work/$tag.names"
}

# run_group GROUP TAG [run-guest options...] [-- ENV=VALUE...] - boot once,
# run tests/guest/cases/GROUP.sh, report its cases. With KILL_MARKER set,
# QEMU is killed with SIGKILL as soon as the guest prints that line. A
# stateless boot whose kernel panicked before the group started boots
# again, up to KVSSD_GUEST_BOOT_RETRIES times.
run_group() {
    local tag=$2 try=0 panic
    while :; do
        group_start "$@"
        [ "$group_pid" != 0 ] || return 0
        if [ -n "${KILL_MARKER:-}" ]; then
            local out=$work/$tag.out
            while kill -0 "$group_pid" 2>/dev/null && ! grep -qx "$KILL_MARKER" "$out"; do sleep 0.5; done
            if grep -qx "$KILL_MARKER" "$out"; then
                log "   group $tag: the guest printed $KILL_MARKER; kill -9 QEMU ($(cat "$work/$tag.pid"))"
                kill -9 "$(cat "$work/$tag.pid")"
            fi
        fi
        group_wait "$tag"
        if [ "$group_rc" = 125 ] && [ "$try" -lt "$boot_retries" ] && guest_boot_stateless "${@:3}" &&
            panic=$(guest_boot_panic "$work/$tag.console"); then
            try=$((try + 1))
            log "   group $tag: the guest kernel panicked before the group started ($panic); booting again ($try of $boot_retries)"
            echo "# $name_prefix$tag: boot $try: the guest kernel panicked before the group started ($panic); booted again"
            continue
        fi
        report_group "$tag" "$work/$tag.out" "$group_rc" "$work/$tag.names"
        return 0
    done
}

# NVMe/TCP (cases/fabrics.sh): a target guest (Linux 6.12: Debian's 6.1
# has no nvmet passthru) exports its two KV-SSDs with nvmet passthru over a
# -netdev stream wire (a unix socket here) while host guests connect to it:
# boot 1 (Linux 6.12) runs the CLI over TCP and is killed with SIGKILL
# mid-run; boot 2 (Linux 6.1) reconnects, finds the data, disconnects and
# connects again. The target then checks the hosts' keys on its own device.
fabrics_group() {
    local sock=$work/fabrics.sock t="fabrics[target, linux-6.12]"
    GROUP_TIMEOUT=1800 group_start fabrics "$t" --kernel trixie --devices 2 --fabrics-target "$sock" \
        -- ROLE=target
    local tpid=$group_pid
    KILL_MARKER=GUEST-READY-FOR-KILL run_group fabrics "fabrics[host boot 1, linux-6.12]" \
        --kernel trixie --fabrics-host "$sock" -- ROLE=host PHASE=first
    run_group fabrics "fabrics[host boot 2, linux-6.1]" --kernel bookworm --fabrics-host "$sock" \
        -- ROLE=host PHASE=again
    group_pid=$tpid
    group_finish "$t"
}

# Persistence: four boots on one image, the sim transport between the
# third and the fourth (see cases/persist.sh).
persist_group() {
    local img=$work/persist.img
    rm -f "$img"
    run_group persist "persist[boot 1]" --image "$img" -- PHASE=store
    KILL_MARKER=GUEST-READY-FOR-KILL run_group persist "persist[boot 2]" --image "$img" -- PHASE=reboot
    run_group persist "persist[boot 3]" --image "$img" -- PHASE=kill
    sim_round_trip "$img"
}

# sim_round_trip IMAGE - the image the guests wrote, on the host's sim
# transport and back (docs/host.md, "The sim transport"): the host's kvssd
# reads a value boot 1 stored and stores a key; boot 4 (PHASE=sim) reads
# that key and stores another, which the host's kvssd then reads.
sim_round_trip() {
    local img=$1 kvssd= why= p sim hash
    # the host tools mkguest.sh built for the guest (this checkout's, with
    # the firmware): the build the guest's own kvssd comes from
    hash=$(sed -n 's/^tools: built from .* (\([0-9a-f]*\))$/\1/p' "$guest/manifest" 2>/dev/null)
    [ -z "$hash" ] || kvssd=$(dirname "$guest")/tools-$hash/build/host/kvssd
    sim=sim:$img
    for p in "${guest_props[@]}"; do sim+=",$p"; done
    local key_a=A100-A100.A100.A want_a="$work/sim-want-a" got="$work/sim-got"
    tail -c +101 "$work/pool.bin" | head -c 33 >"$want_a"
    if [ -n "$prereq" ]; then
        why="prerequisite missing: $prereq"
    elif [ -z "$kvssd" ] || [ ! -x "$kvssd" ]; then
        why="no host kvssd from the guest's tools build ('${kvssd:-$guest/manifest names none}')"
    fi
    if [ -n "$why" ]; then
        tap_not_ok "persist[sim]: the host's sim: reads the guest's value" "$why"
    elif ! "$kvssd" get "$sim" "$key_a" --output "$got" 2>"$got.err"; then
        tap_not_ok "persist[sim]: the host's sim: reads the guest's value" "$(cat "$got.err")"
    elif ! cmp -s "$want_a" "$got"; then
        tap_not_ok "persist[sim]: the host's sim: reads the guest's value" \
            "$sim returned $(wc -c <"$got") bytes under $key_a; expected the 33 bytes boot 1 stored"
    else
        tap_ok "persist[sim]: the host's sim: reads the guest's value"
    fi
    if [ -z "$why" ] && printf 'written by sim:' >"$work/sim-v" &&
        "$kvssd" put "$sim" sim-written-key --file "$work/sim-v" 2>"$got.err"; then
        tap_ok "persist[sim]: the host's sim: stores a key in the guest's image"
    else
        tap_not_ok "persist[sim]: the host's sim: stores a key in the guest's image" \
            "${why:-$(cat "$got.err")}"
    fi
    run_group persist "persist[boot 4]" --image "$img" -- PHASE=sim
    if [ -z "$why" ] && "$kvssd" get "$sim" guest-written-key --output "$got" 2>"$got.err" &&
        [ "$(cat "$got")" = "written by the guest" ]; then
        tap_ok "persist[sim]: the host's sim: reads what boot 4 stored"
    else
        tap_not_ok "persist[sim]: the host's sim: reads what boot 4 stored" \
            "${why:-got '$(cat "$got" 2>/dev/null)' $(cat "$got.err")}"
    fi
}

# The block personality: four boots (see cases/block.sh). The nvm device is
# small (blocks-per-die=32: 1 GiB of flash) with a map cache of two
# translation pages (index-dram-bytes=32768, bloom=off: no keys to filter,
# no Bloom block in the budget; the map of 32 MiB), so fio's
# 128 MiB and the ext4 go through DFTL misses and write-backs; plp=off, so
# what survives the kill is what Linux flushed.
block_group() {
    local img=$work/block.img found=
    local dev=(--block --block-image "$img" --block-prop plp=off --block-prop blocks-per-die=32
               --block-prop index-dram-bytes=32768 --block-prop bloom=off)
    local num=20000
    local db_args="--num=$num --value_size=400 --seed=20261125 --compression_type=none --threads=1"
    rm -f "$img"
    # What readrandom finds after fillrandom depends only on the keys the
    # seed draws: the host's db_bench (the guest's binary) says how many.
    if command -v db_bench >/dev/null; then
        rm -rf "$work/db"
        # shellcheck disable=SC2086
        found=$(db_bench --db="$work/db" --benchmarks=fillrandom,readrandom $db_args 2>/dev/null |
                sed -n 's/^readrandom .*(\([0-9]*\) of [0-9]* found).*/\1/p')
        rm -rf "$work/db"
    fi
    local envs=(DB_NUM=$num "DB_ARGS=$db_args" "DB_FOUND=$found")
    KILL_MARKER=GUEST-READY-FOR-KILL GROUP_TIMEOUT=1500 \
        run_group block "block[boot 1]" "${dev[@]}" -- PHASE=main "${envs[@]}"
    run_group block "block[boot 2, after kill -9]" "${dev[@]}" -- PHASE=cut "${envs[@]}"
    run_group block "block[boot 3, after clean power-off]" "${dev[@]}" -- PHASE=reboot "${envs[@]}"
    # The second kernel, when the suite runs it, sees the block personality
    # here (its nvme driver and ext4), at no extra boot.
    local k=bookworm tag="linux-6.1"
    case " $kernels " in *" trixie "*) k=trixie tag="linux-6.12" ;; esac
    run_group block "block[512 B LBAs, $tag]" --kernel "$k" --block --block-prop lba-bytes=512 \
        --block-prop blocks-per-die=16 -- PHASE=lba512 "${envs[@]}"
}

# Deterministic device time under icount: two boots of one kvbench run
# (cases/icount.sh) must report the same device numbers, exactly.
icount_group() {
    local t1="icount[boot 1]" t2="icount[boot 2]" why
    run_group icount "$t1" --cpus 1 --icount 0 --latency
    run_group icount "$t2" --cpus 1 --icount 0 --latency
    [ -z "$prereq" ] || return 0
    if why=$(python3 - "$work/$t1.out" "$work/$t2.out" 2>&1 <<'PY'
import json, sys

def report(path):
    for line in open(path, errors="replace"):
        if line.startswith("GUEST-ICOUNT "):
            return json.loads(line[len("GUEST-ICOUNT "):])
    sys.exit("%s printed no kvbench report (GUEST-ICOUNT line)" % path.rsplit("/", 1)[-1])

def flat(x, p=""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from flat(v, p + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from flat(v, "%s[%d]" % (p, i))
    else:
        yield p, x

a, b = report(sys.argv[1]), report(sys.argv[2])
da = dict(flat({"device": a.get("device"), "phases": [p.get("device") for p in a.get("phases", [])]}))
db = dict(flat({"device": b.get("device"), "phases": [p.get("device") for p in b.get("phases", [])]}))
if len(da) < 20:
    sys.exit("boot 1's report has %d device numbers; expected the device object of each phase" % len(da))
diff = ["%s: %s / %s" % (k, da.get(k), db.get(k)) for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k)]
if diff:
    sys.exit("%d of %d device numbers differ between the boots, e.g.\n%s" % (len(diff), len(da), "\n".join(diff[:8])))
PY
    ); then
        tap_ok "icount: two boots report the same device numbers"
    else
        tap_not_ok "icount: two boots report the same device numbers" "$why"
    fi
}

run_groups() {
    local g
    for g in "$@"; do
        case $g in
        nvme)
            for k in $kernels; do
                case $k in
                bookworm) run_group nvme "nvme[linux-6.1]" --kernel bookworm ;;
                trixie) run_group nvme "nvme[linux-6.12]" --kernel trixie ;;
                *) tap_not_ok "nvme[$k]" "KVSSD_GUEST_KERNELS names '$k'; use bookworm and/or trixie" ;;
                esac
            done ;;
        kv) run_group kv kv --cpus 2 ;;
        pci) run_group pci pci --cpus 2 ;;
        bench)
            GROUP_TIMEOUT=$((bench_s * 3 + 600)) run_group bench bench --cpus 2 --poll-queues 1 ;;
        persist) persist_group ;;
        fabrics) fabrics_group ;;
        icount) icount_group ;;
        block) block_group ;;
        disk)
            GROUP_TIMEOUT=1200 run_group disk disk --disk \
                --file "$KVSSD_TOP/tests/snia/e2e_snia.c:/root/e2e_snia.c" \
                --file "$KVSSD_TOP/tests/snia/test_snia_cpp.cpp:/root/test_snia_cpp.cpp" ;;
        *) tap_not_ok "group $g" "KVSSD_GUEST_GROUPS names '$g'; use nvme, kv, persist, bench, pci, icount, block, disk, fabrics" ;;
        esac
    done
}

# shellcheck disable=SC2086 # word lists
run_groups $groups

# Each other index design (kvftl/kv/index/kv_index.h) through the KV
# command set as the device's users meet it: nvme-cli's KV commands (one
# kernel), the kv cases, persistence across reboots and kill -9.
designs=${KVSSD_GUEST_DESIGNS-pm983 lsm}
[ ${#guest_props[@]} -eq 0 ] || designs=${KVSSD_GUEST_DESIGNS:-}
for d in $designs; do
    case $d in
    hash | pm983 | lsm) ;;
    *) tap_not_ok "design $d" "KVSSD_GUEST_DESIGNS names '$d'; use hash, pm983 or lsm"; continue ;;
    esac
    pass=()
    for g in $groups; do
        case $g in nvme | kv | persist) pass+=("$g") ;; esac
    done
    [ ${#pass[@]} -gt 0 ] || continue
    guest_props=("index=$d")
    name_prefix="[index=$d] "
    kernels=${kernels##* }
    run_groups "${pass[@]}"
done
name_prefix=""

echo "# guest suite: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$n" -gt 0 ]
