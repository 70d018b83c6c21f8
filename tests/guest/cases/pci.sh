# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "pci": libkvssd's user-space PCI transport (host/lib/pci.c) against
# the KV-SSD: the kvssd CLI with --device pci:BDF unbinds the function from
# the kernel's nvme driver, drives the controller itself and sends inline
# Stores in BandSlim's full layout (89h/8Dh), hybrid ones as a stock head
# with the full-tail bit and 8Dh transfers. Round trips in every transfer
# mode, the device's own count of commands for inline and hybrid values,
# status codes, iterators, format, kvbench, and the kernel driver coming
# back afterwards.
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"
. "$(dirname "${KVSSD_GUEST_LIB:-/root/lib.sh}")/kvcli.sh"

MODES="prp inline hybrid"
VALUES="0 1 32 35 36 4096 4196 2097152"
KEYS="1 16 17 255"

# The KV-SSD is the first NVMe function: its PCI address, read while the
# kernel driver still has it.
BDF=
if [ -z "$KVSSD_LIST" ]; then
    BDF=$(basename "$(readlink /sys/class/nvme/nvme0/device)")
fi
NG=/dev/ng0n1
DEV=pci:$BDF
# Every CLI call attaches and detaches; leave the function unbound between
# them (the rebind cases below turn this off again).
export KVSSD_PCI_REBIND=0

# stat_of FILE NAME - a counter from `kvssd stats --json`
stat_of() { json_get "$1" ".$2"; }

unbind_first() {
    [ -n "$BDF" ] || fail "no /sys/class/nvme/nvme0/device link: no NVMe function to take over"
    kv info >"$T/info" 2>&1 || fail "kvssd info over $DEV failed: $(head -c 300 "$T/info")"
    grep -q "pci:$BDF" "$T/info" || fail "info does not name pci:$BDF: $(head -c 300 "$T/info")"
    [ ! -e /sys/bus/pci/devices/$BDF/driver ] ||
        fail "the function is still bound to $(readlink /sys/bus/pci/devices/$BDF/driver) with KVSSD_PCI_REBIND=0"
    [ ! -e $NG ] || fail "$NG still exists while the user-space driver owns the function"
}
check "kvssd info over pci:BDF identifies the KV namespace and leaves the kernel driver unbound" unbind_first

# Round trips (kv_roundtrip, kvcli.sh), all over the pci transport.
for m in $MODES; do
    for k in $KEYS; do
        for v in $VALUES; do
            check "round trip mode=$m key=${k}B value=${v}B: put/exist/list/get byte-identical/del" \
                kv_roundtrip pci "$m" "$k" "$v"
        done
    done
done

# store_counts MODE KEY DMA_BYTES INLINE_BYTES COMMANDS - a Store of a
# DMA_BYTES + INLINE_BYTES value in transfer MODE: the library and the
# device both count COMMANDS commands, all of them inline commands, carrying
# INLINE_BYTES inline and DMA_BYTES host-to-device; the value reads back
# byte-identical.
store_counts() {
    mkdata "$T/v" $(($3 + $4)) 5
    kv reset-stats >/dev/null || fail "reset-stats failed"
    kv --json --mode "$1" --file "$T/v" put "$2" >"$T/put" || fail "put failed: $(cat "$T/put")"
    expect_eq "commands the library counted" "$(json_get "$T/put" .commands)" "$5"
    kv --json stats >"$T/stats" || fail "stats failed"
    expect_eq "device commands" "$(stat_of "$T/stats" commands)" "$5"
    expect_eq "device inline_commands" "$(stat_of "$T/stats" inline_commands)" "$5"
    expect_eq "device inline_bytes" "$(stat_of "$T/stats" inline_bytes)" "$4"
    expect_eq "device data_h2d_bytes" "$(stat_of "$T/stats" data_h2d_bytes)" "$3"
    rm -f "$T/got"
    kv_get "$2" "$T/got" && cmp "$T/v" "$T/got" || fail "the value does not read back byte-identical"
    kv_del "$2"
}

# The device's counters: a 32-byte value with a 4-byte key, inline, is ONE
# NVMe command (the full layout's 89h head holds 35 value bytes) and one
# inline command carrying 32 inline bytes; a 100-byte value is 3 commands
# (35 + 56 + 9).
full_layout_counts() { # VALUE_BYTES COMMANDS
    store_counts inline "fl$1" 0 "$1" "$2"
}
check "inline 4-byte key + 32 B value is 1 command, inline_commands 1 (device stats)" full_layout_counts 32 1
check "inline 4-byte key + 35 B value is 1 command (the full head's 35 bytes)" full_layout_counts 35 1
check "inline 4-byte key + 100 B value is 3 commands (35 + 56 + 9)" full_layout_counts 100 3

# Hybrid over pci: the 81h head carries the first 4 KiB by PRP and, with the
# full-tail bit (docs/protocol.md 7.3a), the tail goes in 56-byte 8Dh
# transfers instead of 28-byte 85h ones. 4-byte key, value 4096 + TAIL:
# 1 + ceil((TAIL - 20) / 56) commands, all inline commands, TAIL inline
# bytes and one 4 KiB DMA unit host-to-device.
hybrid_full_tail_counts() { # TAIL COMMANDS
    store_counts hybrid "$(printf 'h%03x' "$1")" 4096 "$1" "$2"
}
check "hybrid 4 KiB + 1 B over pci is 1 command (tail in the head)" hybrid_full_tail_counts 1 1
check "hybrid 4 KiB + 56 B over pci is 2 commands (20 + 36 in one 8Dh)" hybrid_full_tail_counts 56 2
check "hybrid 4 KiB + 57 B over pci is 2 commands (20 + 37)" hybrid_full_tail_counts 57 2
check "hybrid 4 KiB + 100 B over pci is 3 commands (20 + 56 + 24)" hybrid_full_tail_counts 100 3
check "hybrid 4 KiB + 2048 B over pci is 38 commands (20 + 36 x 56 + 12; stock: 74)" \
    hybrid_full_tail_counts 2048 38
check "hybrid 4 KiB + 4095 B over pci is 74 commands (20 + 72 x 56 + 47; stock: 147)" \
    hybrid_full_tail_counts 4095 74

# Status codes come back as the device sent them.
missing_key() {
    expect_status 1 "SC 87h" kv_get never-stored "$T/got"
    expect_status 1 "does not exist" kv_del never-stored
    kv --json get never-stored >"$T/j" 2>/dev/null
    expect_eq "status (SCT 0h SC 87h)" "$(json_get "$T/j" .status)" 135
}
check "get/del of a missing key: status 0087h (KV Key Does Not Exist)" missing_key

only_if_absent() {
    mkdata "$T/a" 20 21
    kv_put inline pci-absent "$T/a" || fail "first put failed"
    expect_status 1 "SC 89h" kv_put inline pci-absent "$T/a" --if-absent
    kv_del pci-absent
}
check "only-if-absent inline Store of a present key: status 0089h (KV Key Exists)" only_if_absent

iterators() {
    printf v >"$T/v1"
    for i in 1 2 3 4 5; do kv_put inline "pIt-$i" "$T/v1" || fail "put pIt-$i"; done
    kv_iter pIt- >"$T/iter.raw" || fail "iter failed: $(head -c 300 "$T/iter.raw")"
    expect_eq "keys under pIt-" "$(wc -l <"$T/iter.raw")" 5
    for i in 1 2 3 4 5; do kv_del "pIt-$i"; done
}
check "an iterator over a prefix returns exactly its 5 keys" iterators

format_erases() {
    printf abc >"$T/v1"
    kv_put prp pci-fmt "$T/v1" || fail "put failed"
    kv format --yes >/dev/null || fail "format over pci failed"
    expect_status 1 "does not exist" kv_exist pci-fmt
}
check "Format NVM over the pci transport erases every key" format_erases

bench_verifies() {
    kvb --seed 7 --key-size 8 --value-size uniform:1-8192 --keys 300 --mode adaptive \
        --mix read=60,update=40 --ops 600 >"$T/bench" 2>"$T/bench.err" ||
        fail "kvbench over pci failed: $(tail -c 400 "$T/bench.err")"
    grep -q '"errors":0' "$T/bench" || fail "kvbench printed no error count: $(head -c 400 "$T/bench")"
    ! grep -q -e '"errors":[1-9]' -e '"mismatches":[1-9]' "$T/bench" ||
        fail "kvbench reports errors or mismatches: $(head -c 600 "$T/bench")"
}
check "kvbench (sync engine) loads and verifies 300 keys of 1-8192 B over pci" bench_verifies

async_refused() {
    expect_status fail "not supported on the pci transport" \
        kvb --engine async --qd 4 --keys 10 --value-size 8 --no-run
}
check "kvbench's async engine (io_uring) is refused with a sentence" async_refused

bad_address() {
    expect_status fail "no such PCI function" kvssd --device pci:0000:7f:1f.7 info
}
check "a pci: path naming no PCI function is refused with a sentence" bad_address

# A function that is not the emulated KV-SSD (here the host bridge, 8086:1237
# on pc) is refused before anything is unbound: a mistyped BDF must not take
# a disk from the system. Its driver binding is the same afterwards.
other_function() {
    _d0=$(readlink /sys/bus/pci/devices/0000:00:00.0/driver 2>/dev/null)
    expect_status fail "not the emulated KV-SSD's (144d:a8ff)" kvssd --device pci:0000:00:00.0 info
    expect_eq "host bridge driver after the refusal" \
        "$(readlink /sys/bus/pci/devices/0000:00:00.0/driver 2>/dev/null)" "$_d0"
}
check "a pci: path naming another device (the host bridge) is refused untouched, naming its IDs" other_function

# Back to the kernel: with rebinding on (the default), the nvme driver gets
# the function back at close and the namespace's char device reappears; it
# reads what the pci transport stored, and there a 32-byte inline value
# costs the stock layout's 2 commands.
rebind() {
    mkdata "$T/v" 32 9
    KVSSD_PCI_REBIND=1 kv --mode inline --file "$T/v" put rebind-key >/dev/null ||
        fail "put over pci failed"
    [ -c $NG ] || fail "$NG did not come back after kvssd_close"
    expect_eq "driver" "$(basename "$(readlink /sys/bus/pci/devices/$BDF/driver)")" nvme
    kvssd --device $NG --out "$T/got" get rebind-key || fail "get through $NG failed"
    cmp "$T/v" "$T/got" || fail "$NG reads other bytes than were stored over pci"
    kvssd --device $NG --json --mode inline --file "$T/v" put rebind-key2 >"$T/put" ||
        fail "stock put failed"
    expect_eq "stock-layout commands for 32 B" "$(json_get "$T/put" .commands)" 2
    kvssd --device $NG del rebind-key && kvssd --device $NG del rebind-key2
}
check "after close the nvme driver is rebound and $NG works again (32 B inline: 2 commands there)" rebind

done_group
