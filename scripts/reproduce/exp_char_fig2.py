# SPDX-License-Identifier: GPL-2.0-or-later
"""Characterization paper Fig. 2: end-to-end latency of inserts, updates and
reads by key order -- KV-SSD against RocksDB (ext4, block SSD) and
Aerospike (raw block SSD).

The paper issued 10 million inserts, updates or reads of 16-byte keys and
4 KiB values in sequential, uniform and Zipfian order through KVbench and
found: on the KV-SSD sequential order is only marginally better than
random for inserts and reads, and all orders are alike for updates (the
hash index takes away the benefit of sequential access); the KV-SSD beats
RocksDB (10 MB block cache) on inserts and updates but loses on reads, and
beats Aerospike only on updates; and (abstract) "up to 23.08x and 3.64x
better performance for inserts and updates".

Here: kvbench's three engines run the same workload definition -- kvssd on
the KV personality, rocksdb on ext4 on the block personality, rawhash (an
Aerospike-like DRAM hash index over a log on the raw namespace) -- on the
same device model (preset pm983, BLOCKS_PER_DIE blocks per die), with
latency=on so that every completion waits for its simulated NAND time.
Per engine and order: N inserts, then N reads, then (a second run) N
updates, each in that order; ROUNDS rounds interleaved, the least mean of
the rounds counts. The metric is kvbench's mean latency per
operation in guest wall clock: end to end, like the paper's, but under TCG
the host-side part (RocksDB's memtable and WAL, ext4, the kernel's NVMe
path, the passthrough ioctl) is emulated and costs far more against the
device than on a Xeon -- so magnitudes are not the paper's, and the page
says so.
"""

import common as C
import versus as V

NAME = "char-fig2"
FIGURE = "Characterization Fig. 2"
PAPER = ("KV-SSD: sequential ~ random for inserts, updates and reads; KV-SSD beats RocksDB on "
         "inserts (up to 23.08x) and updates, loses on reads; beats Aerospike only on updates "
         "(up to 3.64x)")
ORDERS = ["sequential", "uniform", "zipfian"]
BLOCKS_PER_DIE = 32
ROUNDS = 2
CRITERIA = {
    "kv_order": "yes if, for each operation, the KV-SSD's mean latency in uniform and Zipfian "
                "order is within 0.8-1.25x of sequential; partly if within 0.67-1.5x; no "
                "otherwise (judged per operation: insert, update, read)",
    "insert_rocksdb": "yes if the largest RocksDB/KV mean insert latency ratio (over orders) is "
                      "within a factor 2 of 23.08 (11.54-46.16); partly if above 1 but outside; "
                      "no if <= 1",
    "update_best": "yes if the largest (RocksDB or rawhash)/KV mean update latency ratio is "
                   "within a factor 2 of 3.64 (1.82-7.28); partly if above 1 but outside; no "
                   "if <= 1",
    "update_both": "yes if KV updates are faster than both RocksDB and rawhash in every order; "
                   "partly in some; no in none",
    "read_rocksdb": "yes if RocksDB's mean read latency is at most 0.8x the KV-SSD's in every "
                    "order; partly if below 1x in some; no otherwise",
    "aerospike_only_updates": "yes if rawhash beats the KV-SSD (ratio < 1) on inserts and on "
                              "reads in every order; partly in some; no in none",
}
TARGET = ("KV-SSD latency independent of key order; KV-SSD vs RocksDB and rawhash per "
          "operation, with the paper's magnitudes "
          "(criteria: the claims table, fixed in CRITERIA before the run)")
SETUP = ("Device preset pm983 with blocks-per-die=%d (2 GiB), latency=on; KV: kvbench kvssd "
         "engine (sync, PRP); block (command-set=nvm, 4 KiB LBAs): kvbench rocksdb engine on "
         "ext4, kvbench rawhash engine on the raw namespace; 16-byte keys, 4 KiB values. "
         "Latency: guest wall clock, mean per operation, the least of %d interleaved rounds. "
         % (BLOCKS_PER_DIE, ROUNDS))
SETUP += V.ROCKSDB_NOTE
SCALE = ("paper: 10 M operations per workload; here 3 000 keys and 3 000 operations, 2 rounds, "
         "at --scale 1")


def props():
    return {"preset": "pm983", "blocks-per-die": BLOCKS_PER_DIE}


def _steps(engine, n, r):
    out = []
    for o in ORDERS:
        cmds = []
        if engine == "rocksdb":
            cmds.append(("mkfs", V.MKFS))
        elif engine == "rawhash":
            cmds.append(("discard", V.DISCARD))
        cmds += [("ins-read", V.kb(engine, keys=n, key_size=16, value_size=4096, load_order=o,
                                   ops=n, mix="read=1", order=o)),
                 ("update", V.kb(engine, keep=True, no_load=True, keys=n, key_size=16,
                                 value_size=4096, ops=n, mix="update=1", order=o))]
        if engine == "rocksdb":
            cmds.append(("umount", V.UMOUNT))
        out.append(C.Step("%s-%s-r%d" % (engine, o, r), cmds, fresh=(engine == "kvssd"),
                          meta={"engine": engine, "order": o, "ops": n, "round": r}))
    return out


def boots(scale):
    n = C.scaled(3000, scale, lo=500)
    # ROUNDS rounds, each engine and order once per round: a burst of host
    # load (TCG: it slows the emulated host, not the device) hits one round
    steps = [st for r in range(ROUNDS) for e in V.ENGINES for st in _steps(e, n, r)]
    return [C.Boot(NAME, steps, props=props(), block_props=V.block_props(props()), latency=True,
                   timeout_s=2400)]


def measure(raw):
    """{engine: {order: {insert, read, update: mean us (guest wall)}}}."""
    pts = {}
    for e in V.ENGINES:
        boot = NAME
        for o in ORDERS:
            p = {}
            for r in range(ROUNDS):
                s = "%s-%s-r%d" % (e, o, r)
                a = C.part(raw, boot, s, "ins-read")
                b = C.part(raw, boot, s, "update")
                for key, bench, ph in (("insert", a, "load"), ("read", a, "run"),
                                       ("update", b, "run")):
                    x = V.engine_phase(bench, ph)
                    # the round with the least mean counts (host load only adds)
                    if x and x.get("wall_mean_us") and (key not in p or
                                                        x["wall_mean_us"] < p[key]):
                        p[key] = x["wall_mean_us"]
                        p[key + "_p50"] = x.get("wall_p50_us")
                        p[key + "_p99"] = x.get("wall_p99_us")
            if p:
                pts.setdefault(e, {})[o] = p
    return pts


def _get(pts, e, o, op):
    return pts.get(e, {}).get(o, {}).get(op)


def judge(pts):
    claims = []
    for op in ("insert", "update", "read"):
        seq = _get(pts, "kvssd", "sequential", op)
        rs = [V.ratio(_get(pts, "kvssd", o, op), seq) for o in ("uniform", "zipfian")]
        rs = [r for r in rs if r is not None]
        h = None
        if len(rs) == 2:
            h = (True if all(0.8 <= r <= 1.25 for r in rs) else
                 "partly" if all(0.67 <= r <= 1.5 for r in rs) else False)
        claims.append(V.claim("KV-SSD %s latency, uniform and Zipfian vs sequential" % op,
                              "~1x (\"marginally\" better sequential)" if op != "update" else
                              "~1x (\"similar\")",
                              ", ".join("%.2fx" % r for r in rs) if rs else "n/a",
                              CRITERIA["kv_order"], h))

    def rat(e, op, o):
        return V.ratio(_get(pts, e, o, op), _get(pts, "kvssd", o, op))
    ins = [r for r in (rat("rocksdb", "insert", o) for o in ORDERS) if r is not None]
    mi = max(ins) if ins else None
    claims.append(V.claim("KV-SSD inserts faster than RocksDB, up to 23.08x", "23.08x",
                          V.fnum(mi, "%.2fx"), CRITERIA["insert_rocksdb"],
                          V.graded(mi, lambda x: 11.54 <= x <= 46.16, lambda x: x > 1)))
    upd = {(e, o): rat(e, "update", o) for e in ("rocksdb", "rawhash") for o in ORDERS}
    uv = [r for r in upd.values() if r is not None]
    mu = max(uv) if uv else None
    claims.append(V.claim("KV-SSD updates faster, up to 3.64x", "3.64x", V.fnum(mu, "%.2fx"),
                          CRITERIA["update_best"],
                          V.graded(mu, lambda x: 1.82 <= x <= 7.28, lambda x: x > 1)))
    both = [all(upd[(e, o)] is not None and upd[(e, o)] > 1 for e in ("rocksdb", "rawhash"))
            for o in ORDERS if all(upd[(e, o)] is not None for e in ("rocksdb", "rawhash"))]
    claims.append(V.claim("KV-SSD updates faster than RocksDB and Aerospike", "every order",
                          "%d of %d orders" % (sum(both), len(both)) if both else "n/a",
                          CRITERIA["update_both"],
                          None if not both else (True if all(both) else
                                                 "partly" if any(both) else False)))
    rd = [r for r in (rat("rocksdb", "read", o) for o in ORDERS) if r is not None]
    claims.append(V.claim("KV-SSD reads slower than RocksDB (10 MB block cache)",
                          "RocksDB faster", ", ".join("%.2fx" % r for r in rd) if rd else "n/a",
                          CRITERIA["read_rocksdb"],
                          None if not rd else (True if all(r <= 0.8 for r in rd) else
                                               "partly" if any(r < 1 for r in rd) else False)))
    ae = [r for r in (rat("rawhash", op, o) for op in ("insert", "read") for o in ORDERS)
          if r is not None]
    claims.append(V.claim("against Aerospike the KV-SSD wins only updates",
                          "Aerospike faster on inserts and reads",
                          ", ".join("%.2fx" % r for r in ae) if ae else "n/a",
                          CRITERIA["aerospike_only_updates"],
                          None if not ae else (True if all(r < 1 for r in ae) else
                                               "partly" if any(r < 1 for r in ae) else False)))
    return claims


def explain(rec):
    """The record's "why", from its series (analyze, and run.py --rejudge)."""
    pts = rec.get("series") or {}
    return ("the KV-SSD's hash index makes key order irrelevant to its placement, as the "
            "paper says, except that kvbench's Zipfian load repeats hot keys, so many of "
            "its 'inserts' replace a stored pair (KV-SSD Zipfian insert mean %s us against "
            "%s us sequential). The comparisons with RocksDB and rawhash are end to end in "
            "a TCG guest, where every host instruction is emulated: a passthrough Store "
            "costs %s us of guest time under icount (the KV-SSD's sequential insert "
            "mean, device time included), so the KV-SSD's per-operation cost is "
            "mostly the guest's, not the device's; rawhash buffers writes in 1 MiB blocks "
            "(one device write per ~250 PUTs) and answers from its DRAM index, so it wins "
            "inserts and updates here, where the paper's Aerospike lost updates. RocksDB's "
            "reads come from its 8 MiB block cache or SST files by direct I/O; ratios are "
            "not the Xeon testbed's" % (V.fnum(_get(pts, "kvssd", "zipfian", "insert"),
                                               "%.0f"),
                                        V.fnum(_get(pts, "kvssd", "sequential", "insert"),
                                               "%.0f"),
                                        V.fnum(_get(pts, "kvssd", "sequential", "insert"),
                                               "%.0f")))


def rejudge(rec):
    """The claims from a record's series (run.py --report-only --rejudge)."""
    return judge(rec.get("series") or {})


def analyze(raw, scale):
    pts = measure(raw)
    claims = judge(pts)
    rec = {"series": pts, "claims": claims, "met": V.overall(claims)}
    if rec["met"] is None:
        rec.update(ours="not measured", why="no engine produced latencies (raw output of boot "
                   "%s)" % NAME)
        return rec
    table = [["engine", "order", "insert mean (p50) us", "read mean (p50) us",
              "update mean (p50) us"]]
    for e in V.ENGINES:
        for o in ORDERS:
            table.append([e, o] + ["%s (%s)" % (V.fnum(_get(pts, e, o, op), "%.0f"),
                                                V.fnum(_get(pts, e, o, op + "_p50"), "%.0f"))
                                   for op in ("insert", "read", "update")])
    rec["table"] = table
    rec["ours"] = V.summarize(claims) + " (guest wall clock, mean latency per operation)"
    rec["why"] = explain(rec)
    return rec


def plot(rec, figdir):
    pts = rec["series"]
    fig, axs = C.figure(3, (12, 3.6))
    for ax, op in zip(axs, ("insert", "update", "read")):
        vals = {e: {o: _get(pts, e, o, op) or float("nan") for o in ORDERS} for e in V.ENGINES}
        C.bars(ax, ORDERS, list(V.ENGINES), vals, "mean latency, us (guest wall clock)")
        top = max([y for d in vals.values() for y in d.values() if y == y] or [1])
        ax.set_ylim(0, top * 1.35)  # room for the legend above the bars
        ax.legend(fontsize=7, ncol=3, loc="upper left")
        ax.set_title("Fig. 2: %s" % op)
    axs[0].annotate("paper: KV up to 23.08x faster than RocksDB", (0, 0), xycoords="axes fraction",
                    xytext=(4, -28), textcoords="offset points", fontsize=7)
    axs[1].annotate("paper: KV up to 3.64x faster", (0, 0), xycoords="axes fraction",
                    xytext=(4, -28), textcoords="offset points", fontsize=7)
    axs[2].annotate("paper: RocksDB faster than KV", (0, 0), xycoords="axes fraction",
                    xytext=(4, -28), textcoords="offset points", fontsize=7)
    C.caption(fig, "KV-SSD (kvssd preset pm983) vs RocksDB (ext4) and rawhash on the block "
                   "personality, one guest; 16 B keys, 4 KiB values; %s; guest clock."
                   % C.scale_text(rec))
    return [C.save(fig, figdir, "char-fig2-engines.png")]
