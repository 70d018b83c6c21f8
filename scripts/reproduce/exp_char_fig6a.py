# SPDX-License-Identifier: GPL-2.0-or-later
"""Characterization paper Fig. 6a: RocksDB on the block SSD under random
updates after a fill -- no foreground GC, no drastic drop.

The paper filled 80 % of the device with 16-byte keys and 4 KiB values and
rewrote as much with uniform random updates: the KV-SSD's bandwidth fell
with foreground GC (Figs. 6b, 6c; char-fig6 here), while "In Fig. 6a, no
drastic performance drop is observed" for RocksDB on the block SSD, whose
level-structured files are written sequentially and deleted whole.

Here: a small block SSD (char-fig6's geometry with twice the blocks, so
ext4 and RocksDB fit: preset pm983, one channel, two dies, 64 blocks of 64
pages per die, 256 MiB of NAND; latency=on), ext4 on it, kvbench's rocksdb
engine loads FILL of the file system's free space with 4 KiB values in
sequential key order, then rewrites every key once with uniform random
updates in CHUNKS runs of equal size, each a fresh kvbench process on the
same database; per chunk, its throughput (guest wall clock) and the block
device's GC counters (statistics log before and after). RocksDB needs
headroom for compaction (it may hold a level twice while merging), so the
fill is FILL of the free space, not the paper's 80 % of the device.
"""

import common as C
import versus as V

NAME = "char-fig6a"
FIGURE = "Characterization Fig. 6a"
PAPER = "RocksDB on the block SSD: no GC triggered and no drastic drop under random updates"
FILL = 50           # percent of ext4's free space, in key + value bytes
CHUNKS = 8
PAIR = 4096 + 16
GEOMETRY = {"channels": 1, "dies-per-channel": 2, "blocks-per-die": 64, "pages-per-block": 64}
CRITERIA = {
    "no_fg_gc": "yes if the block device records no foreground GC stall during the updates; "
                "partly if stalls take at most 5 % of the device's time over the updates; no "
                "otherwise",
    "no_drop": "yes if the slowest update chunk runs at >= 0.5x the median chunk's ops/s "
               "(guest wall clock); partly if >= 0.25x; no below",
}
TARGET = ("no foreground GC and no drastic drop for RocksDB on the block SSD under random updates "
          "(criteria: the claims table, fixed in CRITERIA before the run)")
SETUP = ("Device preset pm983 with channels=1, dies-per-channel=2, blocks-per-die=64, "
         "pages-per-block=64 (256 MiB), command-set=nvm, latency=on; ext4; kvbench rocksdb "
         "engine, 16-byte keys, 4 KiB values: fill %d %% of the free space, then one uniform "
         "update per key in %d chunks. " % (FILL, CHUNKS))
SCALE = ("paper: 80 %% of a 3.84 TB drive, rewritten once; here %d %% of ext4's free space on "
         "a 256 MiB device, rewritten once" % FILL)

KEYS_SH = "K=$(( $(stat -f -c '%%a*%%S' %s) * %d / 100 / %d ))" % (V.MNT, FILL, PAIR)


def _sub(cmd):
    return cmd.replace("'$K'", "$K").replace("'$C'", "$C")


def boots(scale):
    load = KEYS_SH + "; echo \"{\\\"keys\\\":$K}\" >/tmp/rp-keys.json; " + _sub(V.kb(
        "rocksdb", keys="$K", key_size=16, value_size=4096, load_order="sequential",
        no_run=True))
    cmds = [("mkfs", V.MKFS), ("load", load), ("keys", "cat /tmp/rp-keys.json")]
    chunk = "K=$(sed 's/[^0-9]//g' /tmp/rp-keys.json); C=$(( K / %d )); " % CHUNKS
    for i in range(CHUNKS):
        cmds += [("s%d" % i, V.BLK_STATS),
                 ("u%d" % i, chunk + _sub(V.kb("rocksdb", keep=True, no_load=True, keys="$K",
                                               ops="$C",
                                               key_size=16, value_size=4096, mix="update=1",
                                               order="uniform", seed=100 + i)))]
    cmds += [("s%d" % CHUNKS, V.BLK_STATS), ("umount", V.UMOUNT)]
    props = {"preset": "pm983"}
    props.update(GEOMETRY)
    return [C.Boot(NAME, [C.Step("gc", cmds, fresh=False, meta={"chunks": CHUNKS})],
                   props=props, block_props=V.block_props(props), latency=True, timeout_s=2400)]


def measure(raw):
    chunks = []
    for i in range(CHUNKS):
        x = V.engine_phase(C.part(raw, NAME, "gc", "u%d" % i), "run")
        a, b = V.blk_stats(raw, NAME, "gc", "s%d" % i), V.blk_stats(raw, NAME, "gc", "s%d" % (i + 1))
        if not x:
            continue
        p = {"chunk": i, "ops": x["ops"], "ops_per_s": x["wall_ops_per_s"]}
        for k in ("gc_foreground_stalls", "gc_stall_ns", "gc_runs", "sim_now_ns",
                  "nand_pages_programmed", "free_stripes"):
            p[k] = V.stats_delta(a, b, k)
        if b:
            p["free_stripes_after"] = b.get("free_stripes")
        chunks.append(p)
    keys = C.part(raw, NAME, "gc", "keys")
    return {"keys": keys.get("keys") if keys else None, "chunks": chunks}


def judge(m):
    ch = m["chunks"]
    stalls = [c["gc_foreground_stalls"] for c in ch if c.get("gc_foreground_stalls") is not None]
    st_ns = sum(c["gc_stall_ns"] or 0 for c in ch)
    dev_ns = sum(c["sim_now_ns"] or 0 for c in ch)
    if stalls and len(stalls) == len(ch):
        share = st_ns / dev_ns if dev_ns else None
        fg = (True if sum(stalls) == 0 else
              "partly" if share is not None and share <= 0.05 else False)
        fg_ours = "%d stalls (%.1f %% of device time)" % (sum(stalls), 100 * (share or 0))
    else:
        fg, fg_ours = None, "n/a (block device statistics not read)"
    rates = sorted(c["ops_per_s"] for c in ch)
    if len(rates) >= max(3, CHUNKS // 2):
        med = rates[len(rates) // 2]
        worst = rates[0] / med if med else None
        drop = V.graded(worst, lambda x: x >= 0.5, lambda x: x >= 0.25)
        drop_ours = "slowest chunk %.2fx the median" % worst
    else:
        drop, drop_ours = None, "n/a"
    return [V.claim("no foreground GC for RocksDB on the block SSD", "none triggered",
                    fg_ours, CRITERIA["no_fg_gc"], fg),
            V.claim("no drastic performance drop during random updates", "no drastic drop",
                    drop_ours, CRITERIA["no_drop"], drop)]


def analyze(raw, scale):
    m = measure(raw)
    claims = judge(m)
    rec = {"series": m, "claims": claims, "met": V.overall(claims)}
    if rec["met"] is None:
        rec.update(ours="not measured", why="the update chunks did not run (raw output of boot "
                   "%s)" % NAME)
        return rec
    table = [["chunk", "updates", "ops/s (guest wall)", "GC runs", "foreground stalls",
              "NAND pages programmed", "free stripes after"]]
    for c in m["chunks"]:
        table.append([c["chunk"], c["ops"], "%.0f" % c["ops_per_s"], c.get("gc_runs"),
                      c.get("gc_foreground_stalls"), c.get("nand_pages_programmed"),
                      c.get("free_stripes_after")])
    rec["table"] = table
    rec["ours"] = "%s: %d pairs; %s; %s" % (V.summarize(claims), m["keys"] or 0,
                                           claims[0]["ours"], claims[1]["ours"])
    rec["why"] = ("RocksDB writes its WAL and SST files sequentially and deletes whole files, "
                  "which ext4 discards on the device only if mounted with discard (not here): "
                  "without discard the device keeps the deleted files' units valid until ext4 "
                  "reuses the blocks, so GC can still find little to free. The KV-SSD's curve "
                  "for the same update pattern is char-fig6. Throughput per chunk is guest wall "
                  "clock (TCG), where RocksDB's compaction competes with the updates for the "
                  "single vCPU")
    return rec


def plot(rec, figdir):
    ch = rec["series"]["chunks"]
    fig, ax = C.figure(figsize=(7, 3.6))
    ax.plot([c["chunk"] for c in ch], [c["ops_per_s"] for c in ch], marker="o",
            label="RocksDB updates (ours)")
    g = [c for c in ch if c.get("gc_foreground_stalls")]
    ax.scatter([c["chunk"] for c in g], [c["ops_per_s"] for c in g], c="red", s=18, zorder=3,
               label="chunk with foreground GC")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("update chunk (1/%d of the keys each)" % CHUNKS)
    ax.set_ylabel("updates/s (guest wall clock)")
    ax.set_title("Fig. 6a: RocksDB on the block SSD (paper: no drastic drop, no GC)")
    ax.legend(fontsize=7)
    return [C.save(fig, figdir, "char-fig6a-rocksdb-updates.png")]
