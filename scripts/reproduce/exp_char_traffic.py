# SPDX-License-Identifier: GPL-2.0-or-later
"""Samsung's SDC 2017 slides ("Key Value SSD Explained"): random PUTs of
16-byte keys and 4 KiB values, KV Stacks on the KV-PM983 against RocksDB
(v5.0.2, XFS) on the block PM983, 50 M records: "90+% less traffic goes
from host to device with KV SSD than RocksDB on block device" and "8x more
QPS"; the SYSTOR '19 slides ("Towards Building a High-Performance,
Scale-In Key-Value Storage System"): in host key-value stores "background
operations write 5 times more data" (write-ahead log, compaction).

Here: N PUTs of new 16-byte keys with 4 KiB values in uniform order,
* KV-SSD: kvbench's kvssd engine (sync, PRP); host-to-device bytes from
  the device's transfer counters (kvbench's per-phase "device" delta:
  SQEs, doorbells, PRP lists, data);
* RocksDB on ext4 on the block personality, and rawhash on its raw
  namespace: the block device's counters are reset after mkfs, and read
  after kvbench closed the database and `sync` wrote back ext4's page cache
  (RocksDB's WAL, flushes and compactions reach the device that way);
  host-to-device bytes the same sum of SQE, doorbell, PRP-list and data
  bytes. QPS: kvbench's ops/s in guest wall clock (TCG: host-side work is
  emulated, so this ratio is not the slides' hardware ratio).

Scale matters for RocksDB: its write amplification grows with the number
of LSM levels, so 50 M records (200 GB) rewrite each byte more often than
N records can. The page states N.
"""

import common as C
import versus as V

NAME = "char-traffic"
FIGURE = "Samsung SDC '17 slides (traffic, QPS); SYSTOR '19 slides"
PAPER = ("random PUT, 16 B keys / 4 KiB values: 90+% less host-to-device traffic and 8x more "
         "QPS with the KV-SSD than RocksDB on the block SSD; host KV stores write 5x more data "
         "in the background")
BLOCKS_PER_DIE = 32
CRITERIA = {
    "traffic": "yes if the KV-SSD's host-to-device bytes per PUT are >= 85 % below RocksDB's "
               "(90 % with 5 points of tolerance); partly if below RocksDB's by less; no if not "
               "below",
    "qps": "yes if KV/RocksDB PUTs per second (guest wall clock) is within a factor 2 of 8 "
           "(4-16); partly if above 1 but outside; no if <= 1",
    "bg5x": "yes if RocksDB's device write bytes / key+value bytes is within a factor 1.5 of 5 "
            "(3.33-7.5); partly if above 1 but outside; no if <= 1",
}
# the criterion bg5x replaced, kept on the page beside the new verdict
BG5X_WAS = ("yes if RocksDB's device write bytes / key+value bytes is within a factor 2 of 5 "
            "(2.5-10); partly if above 1 but outside; no if <= 1")
BG5X_WHY = ("a factor 2 let 2.56x, about half the slides' 5x, pass as a yes while the same "
            "RocksDB write amplification is only partly against the 90 % traffic claim; a "
            "factor 1.5 (3.33-7.5) still allows for RocksDB's settings and scale here")
TARGET = ("90+ % less host-to-device traffic, 8x QPS, 5x background writes "
          "(criteria: the claims table, fixed in CRITERIA before the run)")
SETUP = ("Device preset pm983 with blocks-per-die=%d; KV: kvbench kvssd engine (sync, PRP); "
         "block (command-set=nvm, 4 KiB LBAs): kvbench rocksdb engine on ext4 (counters reset "
         "after mkfs, read after sync), rawhash on the raw namespace; N uniform PUTs of new "
         "16-byte keys with 4 KiB values. " % BLOCKS_PER_DIE)
SETUP += V.ROCKSDB_NOTE
SCALE = "slides: 50 M records; here 20 000 PUTs (80 MiB), at --scale 1"


def props():
    return {"preset": "pm983", "blocks-per-die": BLOCKS_PER_DIE}


def boots(scale):
    n = C.scaled(20000, scale, lo=2000)
    put = dict(keys=n, key_size=16, value_size=4096, load_order="uniform", no_run=True)
    kv = [C.Step("kvssd", [("bench", V.kb("kvssd", mode="prp", **put))], meta={"ops": n})]
    blk = [C.Step("rocksdb", [("mkfs", V.MKFS), ("sync0", "sync; echo '{}'"),
                              ("reset", V.BLK_RESET), ("c0", V.SNAP),
                              ("bench", V.kb("rocksdb", **put)), ("sync", "sync; echo '{}'"),
                              ("c1", V.SNAP), ("stats", V.BLK_STATS), ("umount", V.UMOUNT)],
                  fresh=False, meta={"ops": n}),
           C.Step("rawhash", [("discard", V.DISCARD), ("reset", V.BLK_RESET), ("c0", V.SNAP),
                              ("bench", V.kb("rawhash", **put)), ("sync", "sync; echo '{}'"),
                              ("c1", V.SNAP), ("stats", V.BLK_STATS)],
                  fresh=False, meta={"ops": n})]
    return [C.Boot(NAME, kv + blk, props=props(), block_props=V.block_props(props()),
                   timeout_s=2400)]


def measure(raw):
    pts = {}
    x = V.engine_phase(C.part(raw, NAME, "kvssd", "bench"), "load")
    if x and x.get("h2d_bytes_per_op") is not None:
        pts["kvssd"] = {"ops": x["ops"], "h2d_bytes_per_op": x["h2d_bytes_per_op"],
                        "wall_ops_per_s": x["wall_ops_per_s"],
                        "user_bytes_per_op": x["user_bytes"] / x["ops"]}
    for e in ("rocksdb", "rawhash"):
        b = NAME
        x = V.engine_phase(C.part(raw, b, e, "bench"), "load")
        st = V.blk_stats(raw, b, e, "stats")
        d = V.snap_delta(C.part(raw, b, e, "c0"), C.part(raw, b, e, "c1"))
        if not x:
            continue
        h2d = V.stats_h2d(st)
        pts[e] = {"ops": x["ops"], "wall_ops_per_s": x["wall_ops_per_s"],
                  "user_bytes_per_op": x["user_bytes"] / x["ops"],
                  "h2d_bytes_per_op": h2d / x["ops"] if h2d is not None else None,
                  "device_write_bytes_per_op": d["write_bytes"] / x["ops"] if d else None,
                  "waf": st["waf_milli"] / 1000.0 if st and "waf_milli" in st else None}
    return pts


def judge(pts):
    kv, rdb = pts.get("kvssd", {}), pts.get("rocksdb", {})
    red = None
    if kv.get("h2d_bytes_per_op") and rdb.get("h2d_bytes_per_op"):
        red = 100.0 * (1 - kv["h2d_bytes_per_op"] / rdb["h2d_bytes_per_op"])
    q = V.ratio(kv.get("wall_ops_per_s"), rdb.get("wall_ops_per_s"))
    wb = rdb.get("device_write_bytes_per_op")
    if wb is None and rdb.get("h2d_bytes_per_op") is not None:
        wb = rdb["h2d_bytes_per_op"]
    bg = V.ratio(wb, rdb.get("user_bytes_per_op"))
    return [
        V.claim("KV-SSD: 90+ % less host-to-device traffic than RocksDB", "90+ %",
                V.fnum(red, "%.1f %%"), CRITERIA["traffic"],
                V.graded(red, lambda x: x >= 85, lambda x: x > 0)),
        V.claim("KV-SSD: 8x the PUTs per second of RocksDB", "8x",
                V.fnum(q, "%.2fx") + " (guest wall clock)", CRITERIA["qps"],
                V.graded(q, lambda x: 4 <= x <= 16, lambda x: x > 1)),
        V.revised(V.claim("host KV store's background operations write 5x the data", "5x",
                          V.fnum(bg, "%.2fx") + " (RocksDB device writes / key+value)",
                          CRITERIA["bg5x"],
                          V.graded(bg, lambda x: 5 / 1.5 <= x <= 5 * 1.5, lambda x: x > 1)),
                  V.graded(bg, lambda x: 2.5 <= x <= 10, lambda x: x > 1), BG5X_WAS, BG5X_WHY),
    ]


def rejudge(rec):
    """The claims from a record's series (run.py --report-only --rejudge)."""
    return judge(rec.get("series") or {})


def analyze(raw, scale):
    pts = measure(raw)
    claims = judge(pts)
    rec = {"series": pts, "claims": claims, "met": V.overall(claims)}
    if rec["met"] is None:
        rec.update(ours="not measured", why="no engine produced traffic numbers")
        return rec
    table = [["engine", "PUTs", "host-to-device bytes/PUT", "device write bytes/PUT (block "
              "layer)", "key+value bytes/PUT", "PUTs/s (guest wall)", "device WAF"]]
    for e in V.ENGINES:
        p = pts.get(e)
        if p:
            table.append([e, p["ops"], V.fnum(p.get("h2d_bytes_per_op"), "%.0f"),
                          V.fnum(p.get("device_write_bytes_per_op"), "%.0f"),
                          V.fnum(p.get("user_bytes_per_op"), "%.0f"),
                          V.fnum(p.get("wall_ops_per_s"), "%.0f"), V.fnum(p.get("waf"), "%.2f")])
    rec["table"] = table
    rec["ours"] = V.summarize(claims) + "; " + "; ".join(
        "%s: %s" % (c["claim"].split(": ")[-1], c["ours"]) for c in claims)
    rec["why"] = ("a KV Store moves its 4 KiB value once (one PRP data unit plus a 64-byte SQE "
                  "and doorbells); RocksDB writes each pair to its WAL, again in the L0 flush "
                  "and again per compaction, plus ext4's journal and metadata. How many "
                  "compactions a pair sees depends on how many levels the tree has: at this "
                  "scale few, at the slides' 50 M records more")
    return rec


def plot(rec, figdir):
    pts = rec["series"]
    fig, (a1, a2) = C.figure(2, (10, 3.6))
    es = [e for e in V.ENGINES if e in pts]
    a1.bar(es, [pts[e].get("h2d_bytes_per_op") or float("nan") for e in es])
    if "rocksdb" in pts and pts["rocksdb"].get("h2d_bytes_per_op"):
        y = 0.1 * pts["rocksdb"]["h2d_bytes_per_op"]
        a1.axhline(y, ls="--", c="gray", lw=0.8)
        a1.annotate("slides: KV <= 10 % of RocksDB", (0, y), textcoords="offset points",
                    xytext=(0, 3), fontsize=7)
    a1.set_ylabel("host-to-device bytes per PUT (device counters)")
    a1.set_title("traffic per 4 KiB PUT")
    a2.bar(es, [pts[e]["wall_ops_per_s"] for e in es])
    if "rocksdb" in pts:
        y = 8 * pts["rocksdb"]["wall_ops_per_s"]
        a2.axhline(y, ls="--", c="gray", lw=0.8)
        a2.annotate("slides: KV 8x RocksDB", (0, y), textcoords="offset points", xytext=(0, -10),
                    fontsize=7)
    a2.set_ylabel("PUTs/s (guest wall clock, TCG)")
    a2.set_title("throughput")
    C.caption(fig, "KV-SSD (kvssd preset pm983) vs RocksDB on its block personality; 16 B keys, "
                   "4 KiB values; %s; traffic: device counters (payload, no TLP framing); PUTs/s: "
                   "guest clock." % C.scale_text(rec))
    return [C.save(fig, figdir, "char-traffic.png")]
