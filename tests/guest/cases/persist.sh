# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "persist", three boots on one --image (tests/guest/run.sh):
#   PHASE=store   fresh image: store set A; the guest powers off cleanly
#   PHASE=reboot  set A is intact; store set B and flush; then the host
#                 kills QEMU with SIGKILL (no shutdown, no checkpoint)
#   PHASE=kill    set B (flushed) and set A are intact
#   PHASE=sim     after the host's sim: stored sim-written-key in the
#                 image: read it, store guest-written-key for the host
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"
. "$(dirname "${KVSSD_GUEST_LIB:-/root/lib.sh}")/kvcli.sh"

# "MODE KEYLEN VALUELEN POOL-OFFSET" per value
SET_A="prp 1 0 0
inline 16 33 100
hybrid 17 4097 200
prp 200 65536 300
adaptive 255 2097152 400"
SET_B="inline 4 1 500
prp 16 4096 600
hybrid 100 65535 700
adaptive 32 300000 800"

store_set() { # SETNAME SET
    echo "$2" | while read -r m k v off; do
        mkdata "$T/v" "$v" "$off"
        kv_put "$m" "$(mkkey "$k" "$1$off")" "$T/v" || exit 1
    done || fail "put failed"
}
check_set() { # SETNAME SET
    echo "$2" | while read -r m k v off; do
        mkdata "$T/v" "$v" "$off"
        rm -f "$T/got"
        kv_get "$(mkkey "$k" "$1$off")" "$T/got" || { echo "get of the $k-byte key ($v B value) failed"; exit 1; }
        cmp "$T/v" "$T/got" || { echo "the $v-byte value under the $k-byte key differs"; exit 1; }
    done || fail "set $1 is not intact"
}
flush_b() {
    store_set B "$SET_B"
    kv_flush || fail "flush failed"
}

read_sim_key() {
    rm -f "$T/got"
    kv_get sim-written-key "$T/got" || fail "get of sim-written-key failed"
    expect_eq "sim-written-key" "$(cat "$T/got")" "written by sim:"
}
store_for_sim() {
    printf 'written by the guest' >"$T/v"
    kv_put prp guest-written-key "$T/v" || fail "put failed"
}

case ${PHASE:-} in
store)
    check "persist: store 5 values (0 B - 2 MiB, every mode) on a fresh image" store_set A "$SET_A" ;;
reboot)
    check "persist: the values survive a clean guest reboot (same image)" check_set A "$SET_A"
    check "persist: store 4 more values and flush" flush_b ;;
kill)
    check "persist: flushed values survive kill -9 of QEMU" check_set B "$SET_B"
    check "persist: values from before the reboot survive kill -9 as well" check_set A "$SET_A" ;;
sim)
    check "persist: a key the host's sim: stored reads back in the guest" read_sim_key
    check "persist: store a key for the host's sim: to read" store_for_sim ;;
*) echo "persist.sh: PHASE must be store, reboot, kill or sim" >&2; exit 2 ;;
esac
done_group
if [ "${PHASE:-}" = reboot ] && [ -z "$KVSSD_LIST" ]; then
    # The host waits for this line, then kills QEMU with SIGKILL.
    sync
    echo "GUEST-READY-FOR-KILL"
    sleep 3600
fi
