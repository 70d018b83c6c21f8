# SPDX-License-Identifier: GPL-2.0-or-later
#
# Group "block": the block personality (-device kvssd,command-set=nvm,
# run-guest.sh --block) beside the KV-SSD in one guest, through the stock
# Linux stack: the nvme block driver, ext4, fio, RocksDB's db_bench. Boots
# (tests/guest/run.sh block_group), the first three on one --block-image
# with plp=off (a volatile write cache, so durability rests on the Flush
# commands Linux sends for sync/fsync and journal commits):
#   PHASE=main    nodes by serial, size, the KV namespace beside it; fio
#                 randwrite + verify on the raw namespace; mkfs.ext4, file
#                 round trip across a remount, fsck; db_bench; then files
#                 written + synced, and the host kills QEMU with SIGKILL
#   PHASE=cut     after the kill: the journal replays, fsck.ext4 -fn is
#                 clean, the synced files and the RocksDB data are intact;
#                 the guest powers off cleanly (checkpoint)
#   PHASE=reboot  after that clean power-off: the same, read again
#   PHASE=lba512  lba-bytes=512 (in memory; Linux 6.12 when the suite runs
#                 that kernel): sizes, fio 512 B writes with verify
#                 (read-modify-write of 4 KiB units), ext4 round trip
# Environment from run.sh: DB_ARGS (db_bench's workload flags), DB_FOUND
# (how many of fillrandom's keys readrandom finds with those flags, from a
# db_bench run on the host: the same binary and seed give the same keys),
# DB_NUM (--num).
. "${KVSSD_GUEST_LIB:-/root/lib.sh}"
. "$(dirname "${KVSSD_GUEST_LIB:-/root/lib.sh}")/kvcli.sh"

BLK=${KVSSD_BLOCK_DEVICE:-}
DEV=${KVSSD_DEVICE:-$DEV}
MNT=/mnt/blk
DB=$MNT/rocksdb
DB_NUM=${DB_NUM:-20000}
PHASE=${PHASE:-}

# The round-trip files: "NAME BYTES POOL-OFFSET" (lib.sh mkdata), around the
# 4 KiB block and unit size, plus the whole pool; BIG_MIB MiB more in "big".
FILES="f0 0 0
f1 1 1
f4095 4095 2
f4096 4096 3
f4097 4097 4
f64k1 65537 5
f1m 1048576 6
fpool 2162688 0"
BIG_MIB=16
# Written and synced right before the kill (PHASE=main), checked after it.
CUT_FILES="c1 1 7
c4096 4096 8
c300k 300000 9"

# mkbig FILE MIB - MIB MiB, each MiB cut from the pool at its own offset
# (never periodic within a MiB; the same bytes on every boot).
mkbig() {
    : >"$1"
    _i=0
    while [ $_i -lt "$2" ]; do
        tail -c +$((_i * 997 + 1)) "$POOL" | head -c 1048576 >>"$1"
        _i=$((_i + 1))
    done
    [ "$(wc -c <"$1")" -eq $(($2 * 1048576)) ] || fail "mkbig: short file"
}

write_files() { # write_files DIR LIST
    mkdir -p "$1" || fail "mkdir $1 failed"
    echo "$2" | while read -r n b off; do
        mkdata "$1/$n" "$b" "$off" || exit 1
    done || fail "writing the files failed"
}
check_files() { # check_files DIR LIST
    echo "$2" | while read -r n b off; do
        mkdata "$T/want" "$b" "$off" || exit 1
        [ -f "$1/$n" ] || { echo "$1/$n is missing"; exit 1; }
        cmp "$T/want" "$1/$n" || { echo "$1/$n ($b B) differs from what was written"; exit 1; }
    done || fail "the files under $1 are not intact"
}
check_big() { # check_big FILE
    mkbig "$T/big" "$BIG_MIB"
    expect_eq "sha256 of $1" "$(sha256sum <"$1" | cut -d' ' -f1)" "$(sha256sum <"$T/big" | cut -d' ' -f1)"
    rm -f "$T/big"
}

# ---- the nodes and the namespace's size ------------------------------------
nodes_by_serial() {
    [ -n "$BLK" ] || fail "init exported no KVSSD_BLOCK_DEVICE (no controller with serial kvssd-nvm0?)"
    [ -b "$BLK" ] || fail "KVSSD_BLOCK_DEVICE=$BLK is not a block device"
    case $BLK in /dev/nvme[0-9]*n1) ;; *) fail "KVSSD_BLOCK_DEVICE=$BLK is not an nvmeXn1 node" ;; esac
    [ -c "$DEV" ] || fail "KVSSD_DEVICE=$DEV is not a character device"
    case $DEV in /dev/ng[0-9]*n1) ;; *) fail "KVSSD_DEVICE=$DEV is not an ngXn1 node" ;; esac
    expect_eq "kvssd-dev kvssd-nvm0" "$(kvssd-dev kvssd-nvm0)" "$BLK"
    expect_eq "kvssd-dev kvssd0" "$(kvssd-dev kvssd0)" "$DEV"
    # the KV namespace has no block device node
    for b in /dev/nvme*n*; do
        [ "$b" = "$BLK" ] || [ ! -b "$b" ] || fail "a second block device $b (the KV namespace has none)"
    done
}

# size_matches LBA_BYTES - blockdev agrees with Identify Namespace: NSZE
# blocks of the in-use LBA format's size, which is LBA_BYTES.
size_matches() {
    nvme id-ns "$BLK" >"$T/idns" 2>&1 || fail "nvme id-ns $BLK failed: $(head -c 300 "$T/idns")"
    nsze=$(sed -n 's/^nsze *: *//p' "$T/idns")
    ncap=$(sed -n 's/^ncap *: *//p' "$T/idns")
    lbads=$(sed -n 's/^lbaf *[0-9]* *: .*lbads:\([0-9]*\).*(in use).*/\1/p' "$T/idns")
    [ -n "$nsze" ] && [ -n "$lbads" ] || fail "no nsze or in-use lbaf in: $(head -c 600 "$T/idns")"
    expect_eq "NCAP" "$((ncap))" "$((nsze))"
    expect_eq "in-use LBA data size (2^lbads)" "$((1 << lbads))" "$1"
    expect_eq "blockdev --getss" "$(blockdev --getss "$BLK")" "$1"
    expect_eq "blockdev --getsize64 (NSZE $((nsze)) x $1)" "$(blockdev --getsize64 "$BLK")" "$((nsze * $1))"
}

# Both personalities in one boot: the KV namespace stores and retrieves
# while the block namespace is in use (mounted, PHASE=main).
kv_beside() {
    mkdata "$T/kvv" 5000 321
    kv_put prp "beside-block" "$T/kvv" || fail "put on the KV namespace $DEV failed"
    rm -f "$T/kvgot"
    kv_get "beside-block" "$T/kvgot" || fail "get on the KV namespace $DEV failed"
    cmp "$T/kvv" "$T/kvgot" || fail "the KV value read back differs"
    grep -q " $MNT ext4 " /proc/mounts || fail "the ext4 on $BLK is not mounted meanwhile"
}

# ---- the device's statistics log -------------------------------------------
# c0_u64 FIELD - a counter of the block device's statistics log page (LID
# C0h, struct kvssd_stats_log in include/kvssd/ext.h: 8 bytes of header and
# 11 transfer counters, then the firmware's counters, little endian):
# index_cache_misses is the 21st of those (offset 96 + 20 x 8), and
# index_pages_evicted_dirty the 22nd. For nvm they count translation pages
# (docs/kvftl.md, the nvm personality's DFTL cache).
c0_u64() {
    _ctrl=/dev/$(basename "$(readlink -f "/sys/block/${BLK##*/}/device")")
    [ -c "$_ctrl" ] || fail "no controller node for $BLK ($_ctrl)"
    case $1 in
    index_cache_misses) _off=256 ;;
    index_pages_evicted_dirty) _off=264 ;;
    *) fail "c0_u64: unknown field $1" ;;
    esac
    nvme get-log "$_ctrl" --log-id=0xc0 --log-len=4096 --raw-binary >"$T/c0" 2>"$T/c0.err" ||
        fail "nvme get-log $_ctrl C0h failed: $(cat "$T/c0.err")"
    expect_eq "C0h log length" "$(wc -c <"$T/c0")" 4096
    od -A n -t u8 -j "$_off" -N 8 "$T/c0" | tr -d ' '
}

# ---- fio -------------------------------------------------------------------
# fio_verify NAME SIZE BS ENGINE IODEPTH [TARGET] - random writes over SIZE
# bytes of TARGET (default the raw namespace) with a crc32c per block, then
# fio reads every block back and checks it (verify_fatal: the first bad
# block fails the job). The JSON must show no error and SIZE bytes written
# and read.
fio_verify() {
    command -v fio >/dev/null || fail "no fio: the tools disk is not mounted at /opt/tools"
    fio --name="$1" --filename="${6:-$BLK}" --rw=randwrite --bs="$3" --size="$2" --direct=1 \
        --ioengine="$4" --iodepth="$5" --verify=crc32c --do_verify=1 --verify_fatal=1 \
        --randrepeat=1 --output-format=json --output="$T/fio.json" >"$T/fio.out" 2>&1 ||
        fail "fio exited $?: $(tail -c 600 "$T/fio.out") $(grep -m3 -i 'verify\|error' "$T/fio.json")"
    expect_eq "fio job error" "$(json_get "$T/fio.json" .jobs.error)" 0
    expect_eq "fio bytes written" "$(json_get "$T/fio.json" .jobs.write.io_bytes)" "$2"
    expect_eq "fio bytes read back and verified" "$(json_get "$T/fio.json" .jobs.read.io_bytes)" "$2"
}
# fio_dftl - fio_verify of 128 MiB on the raw namespace, whose map (32768
# units) is four times the cache's two translation pages: the run must miss
# in the cache and write dirty translation pages back.
fio_dftl() {
    m0=$(c0_u64 index_cache_misses) || fail "$m0"
    d0=$(c0_u64 index_pages_evicted_dirty) || fail "$d0"
    fio_verify raw4k 134217728 4k libaio 8
    m1=$(c0_u64 index_cache_misses) || fail "$m1"
    d1=$(c0_u64 index_pages_evicted_dirty) || fail "$d1"
    [ "$m1" -gt "$m0" ] || fail "no translation page misses during fio (index_cache_misses $m0 -> $m1)"
    [ "$d1" -gt "$d0" ] || fail "no dirty translation page written back during fio ($d0 -> $d1)"
}

# ---- ext4 ------------------------------------------------------------------
mkfs_mount() {
    # mkfs.ext4 discards the whole namespace first (Dataset Management).
    mkfs.ext4 -q -F -L kvssd-block "$BLK" >"$T/mkfs" 2>&1 || fail "mkfs.ext4 $BLK failed: $(cat "$T/mkfs")"
    mkdir -p "$MNT"
    mount -t ext4 "$BLK" "$MNT" || fail "mount -t ext4 $BLK $MNT failed"
    grep -q "^$BLK $MNT ext4 rw" /proc/mounts || fail "not mounted read-write: $(grep "$MNT" /proc/mounts)"
}
round_trip() {
    write_files "$MNT/rt" "$FILES"
    mkbig "$MNT/rt/big" "$BIG_MIB"
    sync
    umount "$MNT" || fail "umount failed"
    mount -t ext4 "$BLK" "$MNT" || fail "the second mount failed"
    check_files "$MNT/rt" "$FILES"
    check_big "$MNT/rt/big"
}
# fsck_clean - unmount, fsck.ext4 -fn finds nothing to fix (exit 0), mount.
fsck_clean() {
    umount "$MNT" || fail "umount failed"
    fsck.ext4 -fn "$BLK" >"$T/fsck" 2>&1 || fail "fsck.ext4 -fn exited $?: $(tail -n 8 "$T/fsck")"
    mount -t ext4 "$BLK" "$MNT" || fail "mount after fsck failed"
}

# ---- RocksDB ---------------------------------------------------------------
# db_line FILE BENCH - db_bench's result line of BENCH
db_line() { grep "^$2 *:" "$1" | head -n1; }
db_found() { # db_found FILE - "F of N" of readrandom's "(F of N found)"
    db_line "$1" readrandom | sed -n 's/.*(\([0-9]* of [0-9]*\) found).*/\1/p'
}
# fillrandom then readrandom on the ext4; verify_checksum checks every block
# read. readrandom finds what the host's run of the same flags found.
db_fillrandom() {
    [ -n "${DB_ARGS:-}" ] || fail "run.sh passed no DB_ARGS"
    [ -n "${DB_FOUND:-}" ] || fail "run.sh could not compute the expected readrandom count (no db_bench on the host?)"
    # shellcheck disable=SC2086 # DB_ARGS is a list of flags
    db_bench --db="$DB-random" --benchmarks=fillrandom,readrandom --verify_checksum=1 $DB_ARGS \
        >"$T/db1" 2>&1 || fail "db_bench exited $?: $(tail -n 8 "$T/db1")"
    db_line "$T/db1" fillrandom | grep -q " $DB_NUM operations;" ||
        fail "fillrandom did not report $DB_NUM operations: $(db_line "$T/db1" fillrandom)"
    expect_eq "readrandom found" "$(db_found "$T/db1")" "$DB_FOUND of $DB_NUM"
}
# every key written once in random order, overwritten at random, then read
# at random: all of them are found
db_unique() {
    # shellcheck disable=SC2086
    db_bench --db="$DB" --benchmarks=filluniquerandom,overwrite,readrandom --verify_checksum=1 \
        $DB_ARGS >"$T/db2" 2>&1 || fail "db_bench exited $?: $(tail -n 8 "$T/db2")"
    expect_eq "readrandom found" "$(db_found "$T/db2")" "$DB_NUM of $DB_NUM"
}
# the database written before (a kill or a reboot) is read again
db_reopen() {
    # shellcheck disable=SC2086
    db_bench --db="$DB" --use_existing_db=1 --benchmarks=readrandom --verify_checksum=1 \
        $DB_ARGS >"$T/db3" 2>&1 || fail "db_bench exited $?: $(tail -n 8 "$T/db3")"
    expect_eq "readrandom found" "$(db_found "$T/db3")" "$DB_NUM of $DB_NUM"
}

# kvbench runs one workload on the KV-SSD and on RocksDB on this ext4 and
# prints them side by side: exit 0, and in both phases (load, run) the
# errors, not found and mismatches rows are 0 for both engines.
kvbench_side_by_side() {
    kvb_engines "$MNT/kvbench" >"$T/kvb" 2>&1 || fail "kvbench exited $?: $(tail -n 12 "$T/kvb")"
    grep -q '^ *kvssd  *rocksdb$' "$T/kvb" || fail "no kvssd / rocksdb header: $(head -n 20 "$T/kvb")"
    for row in errors "not found" mismatches; do
        expect_eq "phases whose '$row' row is 0 0" "$(grep -c "^  $row  *0  *0\$" "$T/kvb")" 2
    done
}

# ---- the power cut ---------------------------------------------------------
cut_prepare() {
    write_files "$MNT/cut" "$CUT_FILES"
    sync || fail "sync failed"
}
# after the kill: mounting replays the journal; then fsck finds it clean
mount_after_cut() {
    mkdir -p "$MNT"
    mount -t ext4 "$BLK" "$MNT" || fail "mount after the kill failed: $(dmesg | tail -n 5)"
}
files_intact() {
    check_files "$MNT/rt" "$FILES"
    check_big "$MNT/rt/big"
    check_files "$MNT/cut" "$CUT_FILES"
}

case $PHASE in
main)
    check "block: init found the KV namespace (serial kvssd0) as an ngXn1 char device and the block one (kvssd-nvm0) as nvmeXn1" nodes_by_serial
    check "block: blockdev --getsize64 = NSZE x 4096 and --getss = 4096 = the in-use LBA format" size_matches 4096
    check "block: fio randwrite 4 KiB x 128 MiB (4x the map cache: misses and dirty write-backs counted), libaio qd 8, direct, verify=crc32c" \
        fio_dftl
    check "block: mkfs.ext4 (discard) and mount" mkfs_mount
    check "block: files of 0 B - 2 MiB and 16 MiB byte-identical after sync, umount, mount" round_trip
    check "block: the KV namespace stores and retrieves 5000 B while the ext4 is mounted" kv_beside
    check "block: fio randwrite 16 KiB x 32 MiB on an ext4 file, psync, direct, verify=crc32c" \
        fio_verify file16k 33554432 16k psync 1 "$MNT/fio.file"
    check "block: db_bench fillrandom + readrandom (verify_checksum) finds what the host's run finds" db_fillrandom
    check "block: db_bench filluniquerandom + overwrite + readrandom finds every key" db_unique
    check "block: kvbench --engine kvssd,rocksdb (RocksDB on this ext4): no errors, misses or mismatches in either" \
        kvbench_side_by_side
    check "block: fsck.ext4 -fn clean after umount" fsck_clean
    check "block: files written and synced (Flush) before the power cut" cut_prepare ;;
cut)
    check "block: after kill -9, the ext4 mounts (journal replay)" mount_after_cut
    check "block: after kill -9 and replay, fsck.ext4 -fn clean" fsck_clean
    check "block: after kill -9, every synced file is intact" files_intact
    check "block: after kill -9, RocksDB reopens and finds every key" db_reopen
    umount "$MNT" 2>/dev/null ;;
reboot)
    check "block: after a clean power-off (checkpoint), the ext4 mounts" mount_after_cut
    check "block: after a clean power-off, fsck.ext4 -fn clean" fsck_clean
    check "block: after a clean power-off, every file is intact" files_intact
    check "block: after a clean power-off, RocksDB finds every key" db_reopen
    umount "$MNT" 2>/dev/null ;;
lba512)
    check "block 512: blockdev --getsize64 = NSZE x 512 and --getss = 512 = the in-use LBA format" size_matches 512
    check "block 512: fio randwrite 512 B x 4 MiB, psync, direct, verify=crc32c (partial units)" \
        fio_verify raw512 4194304 512 psync 1
    check "block 512: mkfs.ext4 and mount" mkfs_mount
    check "block 512: files of 0 B - 2 MiB and 16 MiB byte-identical after sync, umount, mount" round_trip
    check "block 512: fsck.ext4 -fn clean after umount" fsck_clean
    umount "$MNT" 2>/dev/null ;;
*) echo "block.sh: PHASE must be main, cut, reboot or lba512" >&2; exit 2 ;;
esac
done_group
if [ "$PHASE" = main ] && [ -z "$KVSSD_LIST" ]; then
    # The host waits for this line, then kills QEMU with SIGKILL: the ext4
    # stays mounted, the device gets no shutdown and writes no checkpoint.
    echo "GUEST-READY-FOR-KILL"
    sleep 3600
fi
