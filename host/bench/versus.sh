#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The same kvbench workload on the KV-SSD, on RocksDB (ext4 on the block
# personality) and on rawhash (a raw partition of the block personality),
# from one kvbench command, inside one guest with both personalities:
#
#   scripts/run-guest.sh --block --script host/bench/versus.sh
#
# The block namespace is split in two halves (busybox fdisk): partition 1
# holds ext4 for RocksDB, partition 2 is rawhash's raw device. Both report
# the one controller's statistics log, read by kvbench before and after
# each engine's phases (the engines run one after the other).
# Environment: KEYS (20000), OPS (20000), VALUE (4096), MIX
# (read=50,update=50), THREADS (1), EXTRA (more kvbench flags), JSON (set:
# --json instead of the tables).
set -eu
KV=${KVSSD_DEVICE:-/dev/ng0n1}
BLK=${KVSSD_BLOCK_DEVICE:?the block personality is missing: run-guest.sh --block}
KEYS=${KEYS:-20000}
OPS=${OPS:-20000}
VALUE=${VALUE:-4096}
MIX=${MIX:-read=50,update=50}
THREADS=${THREADS:-1}
MNT=/mnt/blk

kvssd format --yes -d "$KV" >/dev/null
blkdiscard -f "$BLK" 2>/dev/null || blkdiscard "$BLK" 2>/dev/null || true
half_mib=$(($(blockdev --getsize64 "$BLK") / 2 / 1048576))
printf 'o\nn\np\n1\n\n+%sM\nn\np\n2\n\n\nw\n' "$half_mib" | fdisk "$BLK" >/dev/null 2>&1 || true
partprobe "$BLK" 2>/dev/null || true
sleep 1
P1=${BLK}p1
P2=${BLK}p2
[ -b "$P1" ] && [ -b "$P2" ] || { echo "versus.sh: partitioning $BLK failed" >&2; exit 1; }
mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0,discard "$P1"
mkdir -p "$MNT"
mount -o noatime "$P1" "$MNT"

echo "== kvbench versus: KV-SSD $KV; block SSD $BLK: ext4 on $P1 (RocksDB), $P2 raw (rawhash);" \
     "$KEYS keys, $OPS ops, $VALUE B values, $MIX, $THREADS thread(s)"
rc=0
# shellcheck disable=SC2086 # EXTRA is a list of flags
kvbench --engine all --device "$KV" --rocksdb-dir "$MNT/rocksdb" --rawhash-dev "$P2" \
    --keys "$KEYS" --ops "$OPS" --value-size "$VALUE" --mix "$MIX" --threads "$THREADS" \
    --progress off ${JSON:+--json} ${EXTRA:-} || rc=$?
umount "$MNT"
exit $rc
