#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The same kvbench workload on the KV-SSD, on RocksDB (ext4 on the block
# personality) and on rawhash (the block personality's raw namespace),
# inside one guest with both personalities:
#
#   scripts/run-guest.sh --block --script host/bench/versus.sh
#
# Two kvbench commands, each a side-by-side table: kvssd + rocksdb, then
# kvssd + rawhash (rawhash overwrites the namespace ext4 was on). The kvssd
# column runs twice on a fresh store (Format NVM before each).
# Environment: KEYS (10000), OPS (10000), VALUE (4096), MIX
# (read=50,update=50), JSON (set: --json instead of the tables).
set -eu
KV=${KVSSD_DEVICE:-/dev/ng0n1}
BLK=${KVSSD_BLOCK_DEVICE:?the block personality is missing: run-guest.sh --block}
KEYS=${KEYS:-10000}
OPS=${OPS:-10000}
VALUE=${VALUE:-4096}
MIX=${MIX:-read=50,update=50}
MNT=/mnt/blk
out=${JSON:+--json}

common="--device $KV --keys $KEYS --ops $OPS --value-size $VALUE --mix $MIX --progress off ${out}"

echo "== kvbench versus: KV-SSD $KV, block SSD $BLK; $KEYS keys, $OPS ops, $VALUE B values, $MIX"
kvssd format --yes -d "$KV" >/dev/null 2>&1 || true
mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0,discard "$BLK"
mkdir -p "$MNT"
mount -o noatime "$BLK" "$MNT"
kvbench --engine kvssd,rocksdb $common --rocksdb-dir "$MNT/rocksdb"
umount "$MNT"

kvssd format --yes -d "$KV" >/dev/null 2>&1 || true
blkdiscard -f "$BLK" 2>/dev/null || blkdiscard "$BLK" 2>/dev/null || true
kvbench --engine kvssd,rawhash $common --rawhash-dev "$BLK"
