# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "nvme": the stock Linux NVMe driver and nvme-cli against the KV-SSD
# (serial kvssd0, set by run-guest.sh). Needs no host tool of ours: KV
# commands here are built by `nvme io-passthru` straight from the wire
# format of include/kvssd/nvme_kv.h.
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"

# nvme_sc OUTPUT - the status code field (SCT<<8 | SC) nvme-cli printed as
# "...(0xNNNN)", without DNR/More bits; "none" when it printed no status.
nvme_sc() {
    _h=$(printf '%s\n' "$1" | sed -n 's/.*NVMe status:.*(0x\([0-9a-fA-F]*\)).*/\1/p' | tail -n1)
    [ -n "$_h" ] || { echo none; return; }
    printf '0x%x\n' $((0x$_h & 0x7ff))
}

# kv_store_raw KEY(<=16 bytes, printable) FILE - a Store (01h) by io-passthru:
# key length CDW11[7:0], value size CDW10, key bytes in CDW2-3, CDW14-15.
key_dword() { # key_dword KEY INDEX - little-endian dword INDEX (0-3) of the 16-byte key field
    printf '%s' "$1" | dd bs=1 skip=$(($2 * 4)) count=4 2>/dev/null |
        od -An -tx1 -v | awk '{ for (i = 1; i <= NF; i++) b[n++] = $i }
            END { v = ""; for (i = n - 1; i >= 0; i--) v = v b[i]; while (length(v) < 8) v = "00" v; print "0x" v }'
}
kv_store_raw() {
    _size=$(wc -c <"$2")
    nvme io-passthru "$DEV" --opcode=0x01 --namespace-id=1 \
        --cdw2="$(key_dword "$1" 0)" --cdw3="$(key_dword "$1" 1)" \
        --cdw14="$(key_dword "$1" 2)" --cdw15="$(key_dword "$1" 3)" \
        --cdw10="$_size" --cdw11=${#1} --data-len="$_size" --write --input-file="$2"
}
kv_retrieve_raw() { # KEY BUFSIZE OUTFILE
    nvme io-passthru "$DEV" --opcode=0x02 --namespace-id=1 \
        --cdw2="$(key_dword "$1" 0)" --cdw3="$(key_dword "$1" 1)" \
        --cdw14="$(key_dword "$1" 2)" --cdw15="$(key_dword "$1" 3)" \
        --cdw10="$2" --cdw11=${#1} --data-len="$2" --read --raw-binary >"$3"
}

driver_binds() {
    [ -c /dev/nvme0 ] || fail "/dev/nvme0 does not exist: $(ls /dev | grep nvme | tr '\n' ' ')"
    [ -c "$DEV" ] || fail "$DEV does not exist (dmesg: $(dmesg | grep -i nvme | tail -n 5))"
    _drv=$(basename "$(readlink /sys/class/nvme/nvme0/device/driver)")
    expect_eq "driver bound to nvme0" "$_drv" nvme
    expect_eq "transport" "$(cat /sys/class/nvme/nvme0/transport)" pcie
    # No block device: the KV namespace is only reachable as a char device.
    [ ! -e /dev/nvme0n1 ] || fail "/dev/nvme0n1 exists: the KV namespace must not get a block device"
}

id_ctrl() {
    nvme id-ctrl /dev/nvme0 -o json >"$T/idctrl.json" || fail "nvme id-ctrl failed"
    expect_eq "sn" "$(json_get "$T/idctrl.json" .sn | sed 's/ *$//')" kvssd0
    expect_eq "nn (namespaces)" "$(json_get "$T/idctrl.json" .nn)" 1
    # VS 2.0.0: major 2 in bits 31:16.
    expect_eq "ver" "$(json_get "$T/idctrl.json" .ver)" 131072
    _mdts=$(json_get "$T/idctrl.json" .mdts)
    [ "$_mdts" -ge 1 ] || fail "mdts is $_mdts; the device must limit transfers (and allow 4 KiB)"
    [ -n "$(json_get "$T/idctrl.json" .mn | sed 's/ *$//')" ] || fail "mn (model) is empty"
}

id_ns_kv() {
    # Identify CNS 05h, CSI 01h (CDW11[31:24]): the KV Identify Namespace.
    nvme admin-passthru /dev/nvme0 --opcode=0x06 --namespace-id=1 --cdw10=0x5 \
        --cdw11=0x01000000 --data-len=4096 --read --raw-binary >"$T/idns.bin" ||
        fail "Identify CNS 05h CSI 01h failed"
    expect_eq "identify size" "$(wc -c <"$T/idns.bin")" 4096
    # kvf[0] at byte 72: kvmkl (u16) at 72, kvmvl (u32) at 76. KVMKL is what a
    # standard command carries (16); our long-key maximum (255) is in the
    # vendor area: signature "KVSSDEXT" at 3840, u16 at 3850 (docs/protocol.md 4).
    expect_eq "kvf[0].kvmkl (max key length)" "$(od -An -tu2 -j72 -N2 "$T/idns.bin" | tr -d ' ')" 16
    expect_eq "vendor area signature" "$(dd if="$T/idns.bin" bs=1 skip=3840 count=8 2>/dev/null)" KVSSDEXT
    expect_eq "vendor area long-key maximum" "$(od -An -tu2 -j3850 -N2 "$T/idns.bin" | tr -d ' ')" 255
    expect_eq "kvf[0].kvmvl (max value length)" "$(od -An -tu4 -j76 -N4 "$T/idns.bin" | tr -d ' ')" 2097152
    _nsze=$(od -An -tu8 -j0 -N8 "$T/idns.bin" | tr -d ' ')
    [ "$_nsze" -gt 0 ] || fail "nsze (namespace size) is 0"
}

ns_descs() {
    _o=$(nvme ns-descs /dev/nvme0 -n 1) || fail "nvme ns-descs failed: $_o"
    _csi=$(echo "$_o" | sed -n 's/^csi *: *//p')
    [ -n "$_csi" ] || fail "no csi in: $_o"
    expect_eq "CSI in the descriptor list" "$((_csi))" 1
}

cmdset_ind() {
    _o=$(nvme cmdset-ind-id-ns /dev/nvme0 -n 1) || fail "nvme cmdset-ind-id-ns failed: $_o"
    expect_eq "nstat (namespace ready)" "$(echo "$_o" | sed -n 's/^nstat *: *//p')" 0x1
}

list_ctrl() {
    _o=$(nvme list -v) || fail "nvme list -v failed: $_o"
    echo "$_o" | grep -q '^nvme0 *kvssd0 ' || fail "nvme list -v does not show nvme0 with serial kvssd0: $_o"
}

smart_log() {
    nvme smart-log /dev/nvme0 -o json >"$T/smart0.json" || fail "nvme smart-log failed"
    expect_eq "critical_warning" "$(json_get "$T/smart0.json" .critical_warning)" 0
    _w0=$(json_get "$T/smart0.json" .data_units_written | tr -d '"')
    _c0=$(json_get "$T/smart0.json" .host_write_commands | tr -d '"')
    # 8 Stores of 128 KiB = 1 MiB: >= 2 data units (512,000 bytes each, rounded up).
    head -c 131072 "$POOL" >"$T/v128k"
    for _i in 1 2 3 4 5 6 7 8; do
        kv_store_raw "smart-$_i" "$T/v128k" >/dev/null || fail "raw Store smart-$_i failed"
    done
    nvme smart-log /dev/nvme0 -o json >"$T/smart1.json" || fail "nvme smart-log failed"
    _w1=$(json_get "$T/smart1.json" .data_units_written | tr -d '"')
    _c1=$(json_get "$T/smart1.json" .host_write_commands | tr -d '"')
    [ $((_w1 - _w0)) -ge 2 ] || fail "data_units_written went from $_w0 to $_w1 after storing 1 MiB (expected +2 or more)"
    [ $((_c1 - _c0)) -ge 8 ] || fail "host_write_commands went from $_c0 to $_c1 after 8 Stores"
}

raw_store_retrieve() {
    # Store 4097 bytes under a 16-byte key and read them back byte-identical;
    # CQE DW0 of Retrieve is the value size.
    head -c 4097 "$POOL" >"$T/v4097"
    kv_store_raw "raw-key-16bytes!" "$T/v4097" || fail "raw Store failed"
    _o=$(kv_retrieve_raw "raw-key-16bytes!" 8192 "$T/r4097" 2>&1) || fail "raw Retrieve failed: $_o"
    head -c 4097 "$T/r4097" >"$T/r4097.cut"
    cmp "$T/v4097" "$T/r4097.cut" || fail "retrieved bytes differ"
}

raw_missing_key() {
    _o=$(kv_retrieve_raw "no-such-key" 4096 "$T/none" 2>&1)
    expect_eq "status of Retrieve of a missing key (KV Key Does Not Exist)" "$(nvme_sc "$_o")" 0x87
}

raw_key_size_zero() {
    printf x >"$T/v1"
    _o=$(nvme io-passthru "$DEV" --opcode=0x01 --namespace-id=1 --cdw10=1 --cdw11=0 \
         --data-len=1 --write --input-file="$T/v1" 2>&1)
    expect_eq "status of Store with key length 0 (Invalid Key Size)" "$(nvme_sc "$_o")" 0x86
}

raw_value_too_big() {
    # Value size 2 MiB + 1 in CDW10 (the data pointer covers 4 KiB): 85h.
    head -c 4096 "$POOL" >"$T/v4096"
    _o=$(nvme io-passthru "$DEV" --opcode=0x01 --namespace-id=1 --cdw2=0x61 --cdw10=2097153 \
         --cdw11=1 --data-len=4096 --write --input-file="$T/v4096" 2>&1)
    expect_eq "status of Store of 2 MiB + 1 (Invalid Value Size)" "$(nvme_sc "$_o")" 0x85
}

error_log() {
    # An unsupported opcode on an I/O queue must be logged: entry 0 counts
    # it and carries its status (Invalid Command Opcode).
    _o=$(nvme io-passthru "$DEV" --opcode=0x7c --namespace-id=1 2>&1)
    expect_eq "status of opcode 7Ch" "$(nvme_sc "$_o")" 0x1
    _o=$(nvme error-log /dev/nvme0 -e 1) || fail "nvme error-log failed: $_o"
    _cnt=$(echo "$_o" | sed -n 's/^error_count[[:space:]]*: *//p' | head -n1)
    [ -n "$_cnt" ] && [ "$_cnt" -ge 1 ] || fail "error-log entry 0 has error_count '$_cnt' after a failed command: $_o"
    echo "$_o" | grep '^status_field' | head -n1 | grep -qi 'Invalid Command Opcode' ||
        fail "error-log entry 0 does not carry Invalid Command Opcode: $(echo "$_o" | grep '^status_field')"
    _sq=$(echo "$_o" | sed -n 's/^sqid[[:space:]]*: *//p' | head -n1)
    [ "$_sq" -ge 1 ] || fail "error-log entry 0 names sqid $_sq; the command went to an I/O queue"
}

effects_log() {
    _o=$(nvme effects-log /dev/nvme0 --csi=1) || fail "nvme effects-log --csi=1 failed: $_o"
    # The KV commands and our extensions are supported (CSUPP, bit 0).
    for _opc in 1 2 6 16 20 129 133 137 141 144 145 146 148; do
        _v=$(echo "$_o" | sed -n "s/^IOCS$_opc  *\[.*\] *\([0-9a-fA-F]*\)\$/\1/p" | head -n1)
        [ -n "$_v" ] || fail "effects-log --csi=1 has no entry for I/O opcode $_opc: $_o"
        [ $((0x$_v & 1)) -eq 1 ] || fail "effects-log: I/O opcode $_opc is not marked supported ($_v)"
    done
    # An opcode outside the KV set is not.
    if echo "$_o" | grep -q '^IOCS124 '; then fail "effects-log marks I/O opcode 7Ch supported"; fi
}

check "the Linux nvme driver binds and $DEV appears (no block device)" driver_binds
check "nvme id-ctrl: serial kvssd0, one namespace, version 2.0, MDTS set" id_ctrl
check "Identify CNS 05h for CSI 01h: KV format max key 16 B (long keys: 255 B in the vendor area), max value 2 MiB" id_ns_kv
check "nvme ns-descs reports CSI 01h (KV)" ns_descs
check "nvme cmdset-ind-id-ns reports the namespace ready" cmdset_ind
check "nvme list -v shows the controller" list_ctrl
check "nvme smart-log: no warning; data units and write commands count Stores" smart_log
check "io-passthru Store + Retrieve of 4097 bytes is byte-identical" raw_store_retrieve
check "io-passthru Retrieve of a missing key: status 87h" raw_missing_key
check "io-passthru Store with key length 0: status 86h" raw_key_size_zero
check "io-passthru Store of 2 MiB + 1 byte: status 85h" raw_value_too_big
check "nvme error-log records a failed I/O command" error_log
check "nvme effects-log --csi=1 lists the KV and extension opcodes" effects_log
done_group
