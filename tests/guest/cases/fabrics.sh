# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "fabrics" (tests/guest/run.sh): the KV-SSD over NVMe/TCP, Linux's
# nvmet passthru target in one guest and its NVMe/TCP host in others
# (scripts/run-guest.sh --fabrics-target / --fabrics-host).
#   ROLE=target             serve until the last host's key is on its
#                           local KV-SSD, then check the hosts' keys
#   ROLE=host PHASE=first   the CLI over TCP (every transfer mode, Key
#                           Stage, iterators), a set stored and flushed;
#                           then a writer runs and the host kills QEMU
#   ROLE=host PHASE=again   reconnected: the set is intact; disconnect,
#                           connect again, still intact; kvbench ycsb-a
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"
DEV=${KVSSD_DEVICE:-$DEV}
. "$(dirname "${KVSSD_GUEST_LIB:-/root/lib.sh}")/kvcli.sh"

# the target's two KV-SSDs (run.sh boots it with --devices 2)
NQNS="nqn.2026-01.org.kvssd:kvssd0 nqn.2026-01.org.kvssd:kvssd1"
# "MODE KEYLEN VALUELEN POOL-OFFSET"; values stay under the 512 KiB a
# command may move over this target (nvme-pci's 128 segments: MDTS)
SET_F="prp 1 0 0
inline 16 33 100
hybrid 17 4097 200
inline 200 1000 250
adaptive 255 65536 300
prp 32 300000 400"

store_set() {
    echo "$SET_F" | while read -r m k v off; do
        mkdata "$T/v" "$v" "$off"
        kv_put "$m" "$(mkkey "$k" "F$off")" "$T/v" || exit 1
    done || fail "put failed"
    kv_flush || fail "flush failed"
}
check_set() {
    echo "$SET_F" | while read -r m k v off; do
        mkdata "$T/v" "$v" "$off"
        rm -f "$T/got"
        kv_get "$(mkkey "$k" "F$off")" "$T/got" || { echo "get of the $k-byte key ($v B value) failed"; exit 1; }
        cmp "$T/v" "$T/got" || { echo "the $v-byte value under the $k-byte key differs"; exit 1; }
    done || fail "set F is not intact"
}
round_trips() {
    for m in prp inline hybrid adaptive; do
        for k in 16 17 255; do
            for v in 0 4097 65536; do kv_roundtrip fab "$m" "$k" "$v"; done
        done
    done
}
iterators() {
    printf 'v' >"$T/v1"
    for i in 1 2 3 4 5; do kv_put prp "fabA-$i" "$T/v1" || fail "put fabA-$i"; done
    for i in 1 2 3; do kv_put inline "fabB-long-key-over-16-bytes-$i" "$T/v1" || fail "put fabB-$i"; done
    kv_iter fabA >"$T/iter.raw" || fail "iter fabA failed: $(head -c 300 "$T/iter.raw")"
    expect_eq "keys under fabA" "$(LC_ALL=C sort "$T/iter.raw" | tr '\n' ' ')" "fabA-1 fabA-2 fabA-3 fabA-4 fabA-5 "
    kv_list fabB >"$T/list" || fail "list from fabB failed"
    expect_eq "list from fabB" "$(head -n 3 "$T/list" | tr '\n' ' ')" \
        "fabB-long-key-over-16-bytes-1 fabB-long-key-over-16-bytes-2 fabB-long-key-over-16-bytes-3 "
}
reconnect() {
    for n in $NQNS; do
        nvme disconnect -n "$n" >"$T/disc" 2>&1 || fail "nvme disconnect -n $n failed: $(cat "$T/disc")"
    done
    [ ! -e "$DEV" ] || sleep 1
    devs=$(kvssd-fabrics host) || fail "connecting again failed"
    DEV=${devs%% *}
    check_set
    echo "$DEV" >"$T/dev"
    echo "$devs" >"$T/devs"
}
# The target's second KV-SSD (kvssd1) is its own subsystem on the same
# port: a key stored through its namespace is there and not on the first.
second_device() {
    # shellcheck disable=SC2046 # one word per node
    set -- $(cat "$T/devs" 2>/dev/null || echo "$KVSSD_DEVICES")
    [ $# = 2 ] || fail "expected 2 fabrics namespaces, got: $*"
    printf 'on the second device' >"$T/v2"
    (DEV=$2; kv_put prp fab-second "$T/v2" && kv_flush) || fail "put on $2 failed"
    ! kv_exist fab-second >/dev/null 2>&1 || fail "fab-second is on the first namespace ($DEV) too"
    rm -f "$T/got"
    (DEV=$2; kv_get fab-second "$T/got") || fail "get from $2 failed"
    expect_eq "fab-second over TCP" "$(cat "$T/got")" "on the second device"
}
for_target() {
    printf 'stored over TCP' >"$T/v"
    kv_put adaptive fab-for-target "$T/v" || fail "put failed"
    kv_flush || fail "flush failed"
}
bench() {
    kvbench --device "$DEV" --preset ycsb-a --keys 2000 --ops 4000 --json >"$T/b.json" 2>"$T/b.err" ||
        fail "kvbench failed: $(tail -n 3 "$T/b.err")"
    grep -q '"phases":\[{' "$T/b.json" || fail "kvbench printed no phase: $(head -c 300 "$T/b.json")"
}
serve_hosts() { # until the last host's key arrives (every boot bounded by run.sh)
    t=0
    until kv_exist fab-for-target >/dev/null 2>&1; do
        [ $t -lt 1500 ] || fail "no host stored fab-for-target within 1500 s"
        sleep 2
        t=$((t + 2))
    done
}
target_finds() {
    rm -f "$T/got"
    kv_get fab-for-target "$T/got" || fail "get of the key the host stored failed"
    expect_eq "fab-for-target" "$(cat "$T/got")" "stored over TCP"
    check_set
    ! kv_exist fab-second >/dev/null 2>&1 || fail "fab-second is on the first KV-SSD"
    # shellcheck disable=SC2086 # one word per node
    set -- $KVSSD_DEVICES
    rm -f "$T/got"
    (DEV=$2; kv_get fab-second "$T/got") || fail "fab-second is not on the second KV-SSD ($2)"
    expect_eq "fab-second on the second KV-SSD" "$(cat "$T/got")" "on the second device"
}

case ${ROLE:-}/${PHASE:-} in
target/*)
    check "fabrics target: serve the host boots until the last one's key arrives" serve_hosts
    check "fabrics target: the hosts' keys are on its own KV-SSDs" target_finds ;;
host/first)
    check "fabrics: put/exist/list/get/del over TCP, every transfer mode" round_trips
    check "fabrics: iterator and list over TCP (Key Stage for long keys)" iterators
    check "fabrics: store 6 values (0 B - 300 KB) and flush" store_set ;;
host/again)
    check "fabrics: after the host guest's kill -9, the flushed values are intact" check_set
    check "fabrics: disconnect and connect again: the values are intact" reconnect
    [ -z "$KVSSD_LIST" ] && [ -s "$T/dev" ] && DEV=$(cat "$T/dev")
    check "fabrics: the target's second KV-SSD, its own subsystem on the same port" second_device
    check "fabrics: kvbench --preset ycsb-a over TCP" bench
    check "fabrics: store a key for the target to find" for_target ;;
*) echo "fabrics.sh: ROLE/PHASE must be target, host/first or host/again" >&2; exit 2 ;;
esac
done_group
if [ "${ROLE:-}/${PHASE:-}" = host/first ] && [ -z "$KVSSD_LIST" ]; then
    # Stores in flight when the host kills QEMU (SIGKILL): the target's
    # controller sees the connection go without a disconnect.
    (i=0; while :; do kv_put prp "fab-inflight-$i" "$T/v" >/dev/null 2>&1; i=$((i + 1)); done) &
    sleep 2
    echo "GUEST-READY-FOR-KILL"
    sleep 3600
fi
