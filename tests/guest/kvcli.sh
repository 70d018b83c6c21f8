# SPDX-License-Identifier: GPL-2.0-or-later
#
# The kvssd CLI (host/cli/kvssd.c) as the guest cases use it (sourced after
# lib.sh). Every case goes through these few functions, so the suite follows
# the CLI's usage in one place. The CLI exits 0 on success, 1 when the device
# refused or the key does not exist, 2 on a usage error; its error sentences
# go to stderr.

# kv OPTIONS... COMMAND ARGS... - the CLI on the KV-SSD under test (-d form).
kv() { kvssd --device "$DEV" "$@"; }
# kv_cmd COMMAND ARGS... - the same in nvme-cli's order: the device right
# after the command (kvssd get /dev/ng0n1 KEY); both forms stay in use.
kv_cmd() { _c=$1; shift; kvssd "$_c" "$DEV" "$@"; }

# kv_put MODE KEY FILE [--if-absent|--if-exists]
kv_put() {
    _m=$1 _k=$2 _f=$3
    shift 3
    kv --mode "$_m" "$@" --file "$_f" put "$_k"
}
# kv_get KEY OUTFILE
kv_get() { kv_cmd get "$1" --output "$2"; }
# kv_exist KEY - exit 0 when the key exists ("does not exist" and 1 if not)
kv_exist() { kv exist "$1"; }
kv_del() { kv del "$1"; }
# kv_list START - keys from START on, one a line
kv_list() { kv_cmd list --start "$1"; }
# kv_size_json KEY - `get --size-only -o json`: one line with
# "schema_version":1 and "value_bytes":N (docs/host.md, JSON output)
kv_size_json() { kv_cmd get "$1" --size-only -o json; }
# kv_roundtrip TAG MODE KEYLEN VALUELEN - store (transfer MODE), exist, list,
# retrieve (byte-identical), delete, and the key is gone for exist and get.
# TAG keeps the keys of different groups apart.
kv_roundtrip() {
    _key=$(mkkey "$3" "$1$2$4")
    mkdata "$T/val" "$4" "$(( ($3 * 7919 + $4) % 65536 ))"
    kv_put "$2" "$_key" "$T/val" || fail "put (mode $2, key $3 B, value $4 B) failed"
    kv_exist "$_key" || fail "exist says the stored key is missing"
    kv_list "$_key" >"$T/list" || fail "list from the key failed"
    grep -qxF -- "$_key" "$T/list" || fail "list from the key does not show it: $(head -c 300 "$T/list")"
    rm -f "$T/got"
    kv_get "$_key" "$T/got" || fail "get failed"
    expect_eq "retrieved size" "$(wc -c <"$T/got")" "$4"
    # the JSON over real passthrough, once per mode and key length (each
    # CLI call is one more process under TCG in a group with a time budget)
    if [ "$4" = 4097 ]; then
        kv_size_json "$_key" >"$T/size.json" || fail "get --size-only -o json failed"
        # schema 1, the provenance object (docs/host.md), then the result
        grep -q "^{\"schema_version\":1,\"provenance\":{\"tool\":\"kvssd\",.*},\"ok\":true,\"operation\":\"get\",\"value_bytes\":$4," "$T/size.json" ||
            fail "get -o json is not schema 1 with value_bytes $4: $(head -c 300 "$T/size.json")"
    fi
    cmp "$T/val" "$T/got" || fail "retrieved bytes differ from the stored ones"
    kv_del "$_key" || fail "del failed"
    expect_status fail "does not exist" kv_exist "$_key"
    expect_status fail "does not exist" kv_get "$_key" "$T/got"
}
# kv_iter PREFIX - the keys with PREFIX (iterator), one a line
kv_iter() { kv --prefix "$1" iter; }
# kv_flush - NVMe Flush (00h) on the namespace, as libkvssd's
# kvssd_cmd_flush() encodes it: everything stored so far is durable.
kv_flush() { nvme io-passthru "$DEV" --opcode=0x00 --namespace-id=1 >/dev/null; }

# bench_ok FILE - a kvbench JSON report with operations, and zero
# mismatches, errors and missing keys in every phase (load and run).
bench_ok() {
    [ -s "$1" ] || fail "kvbench wrote no report"
    for _f in mismatches errors not_found; do
        _vals=$(grep -o "\"$_f\":[0-9]*" "$1" | cut -d: -f2 | sort -u | tr '\n' ' ')
        [ -n "$_vals" ] || fail "no $_f field in: $(head -c 300 "$1")"
        expect_eq "$_f (every phase)" "$_vals" "0 "
    done
    _ops=$(json_get "$1" .ops_per_s) || fail "no ops_per_s in: $(head -c 300 "$1")"
    awk -v o="$_ops" 'BEGIN { exit !(o > 0) }' || fail "ops_per_s is $_ops"
    echo "ops_per_s=$_ops"
}

# kvb ARGS... - kvbench on the KV-SSD under test, JSON report on stdout.
kvb() { kvbench --device "$DEV" --json --progress off "$@"; }
# kvb_engines ROCKSDB-DIR - the same workload (2000 keys of 16 B, 4 KiB
# values, then 2000 reads and updates) on the KV-SSD and on RocksDB in
# ROCKSDB-DIR (the ext4 on the block personality), side by side; the table
# (not JSON) on stdout, since its errors / not found / mismatches rows hold
# one column per engine.
kvb_engines() {
    kvbench --engine kvssd,rocksdb --device "$DEV" --rocksdb-dir "$1" --progress off \
        --keys 2000 --ops 2000 --key-size 16 --value-size 4096 --mix read=50,update=50
}
# kvb_mixed SECONDS SEED - load 5000 keys of 16 bytes (values of 1-8192
# bytes, so the adaptive transfer mode uses inline, hybrid and PRP), then a
# mix of reads, updates and inserts for SECONDS; kvbench verifies every value
# it reads. Keys longer than 8 bytes carry SEED-derived bytes, so runs with
# different seeds never touch each other's keys.
kvb_mixed() {
    kvb --seed "$2" --key-size 16 --value-size uniform:1-8192 --keys 5000 \
        --mix read=60,update=30,insert=10 --duration "$1"
}
