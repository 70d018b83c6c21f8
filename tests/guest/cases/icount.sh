# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "icount" (booted twice by tests/guest/run.sh, each with --icount 0
# --latency): one kvbench run at queue depth 32, 2000 Stores of 4 KiB
# values then 2000 Retrieves. The guest prints kvbench's report on a
# GUEST-ICOUNT line; the host compares the device's numbers of the two
# boots (every phase's "device" object), which under icount must be the
# same: the device's clock is the guest's virtual clock, and when the
# device takes a command and posts its completion must not depend on the
# host (docs/reproduce.md, "Same answer twice").
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"
. "$(dirname "${KVSSD_GUEST_LIB:-/root/lib.sh}")/kvcli.sh"

qd32() {
    kvb --io async --qd 32 --keys 2000 --key-size 16 --value-size 4096 --load-order uniform \
        --mix read=1 --ops 2000 --order uniform --mode prp --seed 1 >"$T/icount.json" ||
        fail "kvbench exited $?: $(tail -c 300 "$T/icount.json")"
    bench_ok "$T/icount.json"
}
check "kvbench at QD 32 under icount: 2000 Stores and 2000 Retrieves of 4 KiB, zero mismatches, errors and missing keys" qd32
[ -n "$KVSSD_LIST" ] || [ ! -s "$T/icount.json" ] || echo "GUEST-ICOUNT $(tr -d '\n' <"$T/icount.json")"
done_group
