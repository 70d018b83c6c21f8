# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/results.json and docs/results.md from the experiments' records.

results.json holds one object per experiment (key numbers, verdict, the
series the figures are drawn from, the scale it ran at); results.md is
rendered from it alone, so `run.py --report-only` redraws everything
without booting a guest.
"""

import json
import os

import common as C
import verdicts as V

# the page's word for an experiment's verdict ("met") or a claim's ("holds")
VERDICT = V.HOLDS

# Stated once on the page; each experiment's "why" names the ones it hits.
DIFFERENCES = [
    "**Command layout.** Stock Linux passthrough (`NVME_IOCTL_IO64_CMD`, io_uring "
    "`NVME_URING_CMD_IO`) copies only CDW2-3 and CDW10-15 from user space; the kernel fills "
    "CDW4-9 itself. So an inline head carries 24 bytes of key + value (20 value bytes with a "
    "4-byte key) and a transfer 28 value bytes (docs/protocol.md), where BandSlim's own "
    "driver also uses CDW4-9 (35 bytes in the head, 56 per transfer). The device implements "
    "that full layout (opcodes 89h/8Dh, and a hybrid head whose tail comes in 8Dh "
    "transfers); no stock-kernel path can send it, so the BandSlim experiments also run "
    "over libkvssd's pci transport, a polled user-space NVMe driver in the guest that writes "
    "whole SQEs (docs/host.md), and their verdicts use those series. Over stock "
    "passthrough every piggybacked byte costs about twice the commands.",
    "**Host speed.** The guest runs under TCG (no KVM on this machine): every guest "
    "instruction is emulated, so a passthrough Store's round trip costs about 14 us of guest "
    "time under icount (char-fig2: the KV-SSD's mean insert, device time included) while "
    "a 4 KiB DMA costs little. Host-side numbers (guest wall clock) are labelled and only "
    "their ratios are used; they are measured in several interleaved rounds, and a claim on "
    "them gives the median and spread and is judged in every round.",
    "**Device time.** The device's clock is QEMU's virtual clock; its NAND, channel and DRAM "
    "copy times are kvftl's model (presets cosmos and pm983). Where device throughput is "
    "measured, the device is made slower than the guest by dilating its times by a stated "
    "factor and shrinking its parallelism and page buffer, then scaled back.",
    "**Firmware.** kvftl is this project's firmware, not the PM983's or Cosmos+'s: blobs "
    "(header + key + value) are rounded to the placement unit and may straddle NAND pages "
    "(preset pm983: only blobs under its 1 KiB unit are padded, larger ones are byte-granular, "
    "and a blob that fits one page but not the rest of the current one starts a fresh page; "
    "these pm983 parameters were chosen from the characterization paper's Figs. 5 and 7, so "
    "the claims that follow from them are by construction); "
    "the packing memcpys run one at a time on one firmware CPU and add to each Store's "
    "latency.",
    "**KV-SSD versus block SSD** (char-fig2, -fig3-block, -fig4, -fig5a, -fig6a, -fig7-block, "
    "-cpu, -traffic). The paper compared two PM983 firmwares; here one flash model runs "
    "either kvftl's KV firmware or its page-mapping block FTL (docs/kvftl.md), both this "
    "project's and neither Samsung's, attached to one guest side by side (run-guest.sh "
    "--block) with the same properties. kvftl's firmware time (the pm983 preset's fw-* "
    "tunables, docs/kvftl.md) charges each command's fetch and decode, index or map probes, "
    "DMA setups and completion to one controller CPU, by the same rules for both "
    "personalities; key hashing and index merging beyond those probes are not modelled, and "
    "a whole 4 KiB unit lands in the page buffer with no controller copy. RocksDB (kvbench's "
    "rocksdb engine: "
    "compression off, direct I/O, 8 MiB block cache, a 4 MiB memtable, ext4) and rawhash (kvbench's "
    "Aerospike-like hash store on the raw namespace) run in the same TCG guest as the "
    "KV-SSD's kvbench, so host-side numbers (end-to-end latency, CPU time, ops/s) are "
    "emulated: only their ratios between engines in one guest are used, and the page says "
    "which numbers are device time and which are guest wall clock.",
    "**PCIe traffic is payload.** The device counts the bytes of every SQE fetch (64), CQE "
    "post (16), doorbell write (4), PRP list and data transfer; it does not model the link "
    "layer: no TLP headers and framing, no DLLP acknowledgements and flow-control updates, "
    "and no MSI-X interrupt writes are counted (kvssd does not model them, and says so here "
    "instead). A PCIe analyser or Intel PCM's counters see more bytes per command (about 20-30 "
    "bytes of TLP overhead per transfer of up to the max payload size), so BandSlim's ratios "
    "of traffic compare with ours, its absolute bytes do not.",
    "**Index and log.** kvftl has three index designs over one value log of packed blobs "
    "(docs/kvftl.md, property index): hash (an extendible hash over flash-resident index "
    "pages, an LRU cache of them in the index DRAM budget, a Bloom filter), pm983 (a DRAM "
    "local index merged into a multi-level global hash, after the characterization paper's "
    "description of the PM983) and lsm (an LSM-tree of key signatures and blob addresses, "
    "after BandSlim's firmware); none is Samsung's or Cosmos+'s code. Each preset runs its "
    "device's design (pm983: pm983, cosmos: lsm), so a record judges the characterization "
    "and Samsung claims with pm983 and BandSlim's with lsm, and names the design its devices "
    "reported; a record of another design (the hash records before the presets took their "
    "devices' designs, or run.py --index D --beside) follows it, and the summary counts "
    "claims per design. Block-only experiments name none. Where an experiment measures index "
    "behaviour (char-fig3: the local index's merges, index pages missing from DRAM), the "
    "costs are those of the design that ran; BandSlim's experiments measure the transfer and "
    "packing paths, which depend on the index through its firmware time per Store (one "
    "probe under lsm, three for a new key under hash) and the NAND pages it reads and "
    "programs.",
    "**Dilated runs.** `common.dilated()` multiplies tR, tPROG, tBERS and the five firmware "
    "times (fw-*) by the dilation factor and divides the channel and DRAM-copy rates by it, "
    "rounding a rate below 1 byte/us up to 1 (a clamp: the channel would then run faster "
    "relative to the NAND than the preset's). No run here is clamped: bandslim-fig4, -fig11 "
    "and -fig12 (Cosmos+ timing, x200) run the channel at 200 / 200 = 1 byte/us and copy at "
    "1000 / 200 = 5; char-fig5, -fig5a and -fig6 (pm983, x20) at 40 and 100 bytes/us; "
    "char-fig4's QD 64 boot (pm983, x50) at 16 and 40.",
    "**Same answer twice.** Device time is QEMU's virtual clock. Every reproduction boot runs "
    "QEMU in icount mode (`run-guest.sh --icount`, `-icount shift=N,sleep=off`): the virtual "
    "clock advances by 2^N ns per emulated guest instruction and jumps over idle time, so the "
    "guest's pace in device time is a function of the instructions it runs, not of how fast "
    "this host emulates them or how loaded it is. Every boot also pins the device's key-hash "
    "seed (hash-seed), which decides which keys share an index page and so every index cache "
    "hit and miss; with the device's default, a secret seed drawn at every Format, index-bound "
    "means differed by 4-8 % between runs. Under icount the device runs its queues from its "
    "virtual-clock timer, so QEMU stops the guest at each doorbell until they have run, and the "
    "guest's inputs from the host are fixed (RDRAND's seed, the RTC, no KASLR, a byte-identical "
    "per-run archive): a boot of the same script runs the same instructions, and its numbers "
    "repeat bit for bit, except in boots that read the tools disk (the block personality's "
    "fio and RocksDB), whose reads take host time. The page shows repeats beside their runs, "
    "with the largest difference of each number. The guest's own clock is the same virtual "
    "clock, so *guest wall clock* numbers count emulated instructions at a fixed rate rather "
    "than host seconds; they are taken in several interleaved rounds whose spread is printed.",
    "**Scale.** The papers stored millions to billions of pairs; each experiment states its "
    "counts. Per-Store quantities (traffic, commands, pages per Store, amplification) do not "
    "depend on the count; occupancy effects are reproduced by shrinking the device or its "
    "DRAM budget instead.",
]


def load(path):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {"experiments": {}}


def save(path, results):
    """Write results.json whole or not at all (a temporary file renamed over it), so
    a reader never sees half a file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def experiment_verdict(r):
    """An experiment's verdict on the page: its met, and when the record has
    no claims table (an experiment not yet converted), a flag saying so; the
    verdicts of other index designs run beside it follow."""
    v = VERDICT.get(r.get("met"), str(r.get("met")))
    if not r.get("claims"):
        v += " (no claims table)"
    beside = r.get("designs") or {}
    if beside:
        v += " (%s; %s)" % (record_design(r) or "?", "; ".join(
            "%s: %s" % (d, VERDICT.get(x.get("met"), x.get("met")))
            for d, x in sorted(beside.items())))
    return v


def record_design(r):
    """The index design the record's KV-SSDs ran with: what their configuration
    log reported during the run (run.py's "design"), else their boots' "index"
    property, else hash (every design but hash is newer than the records that
    lack both); None for a record without device boots, or whose experiment
    measures only the block personality (run.py's "index_free")."""
    if r.get("index_free"):
        return None
    if r.get("design"):
        return r["design"]
    boots = [b for b in r.get("boots") or [] if b.get("props")]
    if not boots:
        return None
    return "/".join(sorted({b["props"].get("index") or "hash" for b in boots}))


def designs_summary(ex, order):
    """One line per design: the claims of the records that ran with it, and of
    the runs beside them (run.py --index D --beside)."""
    by = {}
    for n in order:
        r = ex.get(n)
        if not r:
            continue
        own = record_design(r)
        if own:
            by.setdefault(own, []).append(r)
        for d, rec in sorted((r.get("designs") or {}).items()):
            by.setdefault(d, []).append(rec)
    if len(by) < 2:
        return []
    out = ["", "Per index design (each record's own design, and runs of the same experiment "
           "beside it with another; an experiment counts once per design):"]
    for d in sorted(by):
        rs = by[d]
        cl = [c["holds"] for r in rs for c in r.get("claims", [])]
        out.append("* %s, %d experiment%s: %s" % (
            d, len(rs), "" if len(rs) == 1 else "s", V.counts_text(V.counts(cl), "claims")))
    return out


def summary_counts(ex, order):
    """The summary's counts: over every claim of every experiment, and over
    the experiments' verdicts; experiments without a claims table named."""
    rs = [ex[n] for n in order if n in ex]
    if not rs:
        return []
    claims = [c["holds"] for r in rs for c in r.get("claims", [])]
    out = ["", "Claims: " + V.counts_text(V.counts(claims), "claims") + ".", "",
           "Experiments: " + V.counts_text(V.counts(r.get("met") for r in rs), "experiments") +
           "."]
    yes = [c for r in rs for c in r.get("claims", []) if c["holds"] is True]
    if yes:
        spanned = sum(1 for c in yes if c.get("can_fail") is True)
        could = sum(1 for c in yes if c.get("can_fail") is not False)
        out += ["", "Yes verdicts that could have come out otherwise: %d of %d%s; %d of them "
                "record%s the span of values their measurement can take, which their criterion "
                "does not wholly accept." % (
                    could, len(yes), "" if could == len(yes) else " (the others rest on a "
                    "counting rule or layout that fixes their number)", spanned,
                    "s" if spanned == 1 else "")]
    out += designs_summary(ex, order)
    bare = [n for n in order if n in ex and not ex[n].get("claims")]
    if bare:
        out += ["", "Without a claims table (their verdict is the experiment's own rule, not "
                "derived from claims; not counted above as claims): " + ", ".join(bare) + "."]
    return out


def other_run_line(label, rep):
    """The page's line for another run kept under a record (a repeat, or a
    design run beside it): when, which commit, verdict, numbers, each claim's."""
    return "*%s (%s%s):* %s — %s; claims: %s" % (
        label, rep.get("run_at", "?"), ", commit " + rep["commit"] if rep.get("commit") else "",
        VERDICT.get(rep.get("met"), rep.get("met")), rep.get("ours", ""),
        "; ".join("%s %s (%s)" % (c["claim"], c["ours"], VERDICT.get(c["holds"], c["holds"]))
                  for c in rep.get("claims", [])))


def repeat_numbers(r):
    """A table of the record's numbers beside each repeat's, with the largest
    relative difference: the page's evidence that a run gives the same answer
    twice (or not)."""
    reps = [rep for rep in r.get("repeats", []) if rep.get("numbers")]
    nums = r.get("numbers") or {}
    if not reps or not nums:
        return []
    out = ["| number | this run | " + " | ".join("repeat %d" % (i + 1) for i in range(len(reps))) +
           " | largest difference |", "|---|---|" + "---|" * len(reps) + "---|"]
    for k in sorted(nums):
        vals = [nums[k]] + [rep["numbers"].get(k) for rep in reps]
        diff = ""
        xs = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(xs) == len(vals) and max(abs(x) for x in xs) > 0:
            diff = "%.1f %%" % (100.0 * (max(xs) - min(xs)) / max(abs(x) for x in xs))
        elif len(set(json.dumps(v, sort_keys=True) for v in vals)) == 1:
            diff = "same"
        out.append("| %s | %s | %s | %s |" % (cell(k), cell(vals[0]), " | ".join(
            cell(v) for v in vals[1:]), diff))
    return out + [""]


def seed_pinned(rec):
    """Did every boot of @rec run with a pinned key-hash seed (hash-seed nonzero)?"""
    boots = rec.get("boots") or []
    return bool(boots) and all(str(b.get("props", {}).get("hash-seed", "0")) not in ("0", "")
                               for b in boots)


def seed_line(order, ex):
    """The page's sentence on the key-hash seed: which records ran with it pinned."""
    host = [n for n in order if n in ex and ex[n].get("host")]
    names = [n for n in order if n in ex and n not in host]
    pinned = [n for n in names if seed_pinned(ex[n])]
    line = ("Key-hash seed: %d of %d experiments ran with it pinned (hash-seed=%d on every "
            "device), so their index layouts and index cache hits and misses repeat from run "
            "to run" % (len(pinned), len(names), C.HASH_SEED))
    rest = [n for n in names if n not in pinned]
    if rest:
        line += ("; %s ran with a secret seed drawn at every Format (the device's default), "
                 "whose index cache misses differ between runs (docs/reproduce.md, \"Same "
                 "answer twice\")" % ", ".join(rest))
    if host:
        line += "; %s ran on the host, with no device" % ", ".join(host)
    return line + "."


def render(results, order, docs_dir):
    """The markdown page. order: experiment names in page order."""
    ex = results["experiments"]
    L = []
    L.append("# Reproducing the KV-SSD papers in emulation")
    L.append("")
    L.append("Every number on this page comes from a real run of `scripts/reproduce/all.sh` "
             "(or `scripts/reproduce/run.py EXPERIMENT`) on this project's build machine: "
             "kvbench inside a TCG guest booted by `scripts/run-guest.sh`, talking to "
             "`-device kvssd` through stock Linux NVMe passthrough (or, for the BandSlim "
             "figures' full-layout series, libkvssd's user-space pci transport), except the "
             "numbers a claim labels *projection* (computed from measured counters for a "
             "configuration that did not run). Device numbers are the "
             "device's own counters and simulated time (the statistics log page, read by "
             "kvbench's `--json` \"device\" deltas and `kvssd stats`), not the guest's wall "
             "clock, except where a paper measured the host; those are labelled *guest "
             "wall clock* (under TCG every guest instruction is emulated, so only ratios "
             "between configurations mean anything). How to run it: docs/reproduce.md.")
    L.append("")
    L.append("Papers: \"BandSlim: A Novel Bandwidth and Space-Efficient KV-SSD with an "
             "Escape-from-Block Approach\" (ICPP '24, and its slides) and \"KV-SSD: What Is It "
             "Good For?\" (the characterization paper); Samsung's slides \"Key Value SSD "
             "Explained\" (SDC 2017) and \"Towards Building a High-Performance, Scale-In "
             "Key-Value Storage System\" (SYSTOR 2019) for char-traffic.")
    L.append("")
    L.append("Verdicts: each experiment lists every quantitative claim of its figure with the "
             "paper's number, ours, and the criterion (a tolerance on magnitude) written in the "
             "experiment's code. The criteria were first written on 2026-11-25, after earlier "
             "runs of the same experiments had been seen, so they are not blind. Where a "
             "criterion was changed after the run it judges, the claim shows the earlier "
             "criterion and its verdict beside the new one with the reason, and the record "
             "says it was re-judged (*Re-judged*). A claim is *yes*, *partly* or *no* by that "
             "criterion; *by construction* when the result follows from a parameter chosen "
             "from the same figure, or from a counting rule or layout that fixes the measured "
             "number whatever the device does (the claim names the parameter or the rule), "
             "*projection* when the number is "
             "computed rather than measured, *not measured* when the run gave no number or "
             "the number's verdict flips between rounds. Neither by construction nor "
             "projection counts as a yes. An experiment's verdict is yes when all its "
             "measured claims hold, no when none does, partly otherwise.")
    L.append("")
    runs = [ex[n] for n in order if n in ex]
    if runs:
        when = sorted((r.get("run_at") or "?")[:16] for r in runs)
        L.append("Runs: %s UTC; scale " % (when[0] if when[0] == when[-1] else
                                            "%s to %s" % (when[0], when[-1])) +
                 ", ".join(sorted({str(r.get("scale")) for r in runs})) +
                 " (1 = all.sh's counts; every count is stated per experiment below).")
        L.append("")
        L.append(seed_line(order, ex))
        L.append("")
    L.append("## Summary")
    L.append("")
    L.append("| experiment | paper's figure and number | ours | verdict | why |")
    L.append("|---|---|---|---|---|")
    for n in order:
        r = ex.get(n)
        if not r:
            continue
        L.append("| %s | %s: %s | %s | %s | %s |" % (
            cell(n), cell(r["figure"]), cell(r["paper"]), cell(r.get("ours", "n/a")),
            cell(experiment_verdict(r)), cell(r.get("why", ""))))
    L += summary_counts(ex, order)
    missing = [n for n in order if n not in ex]
    if missing:
        L.append("")
        L.append("Not run yet (no numbers are shown for them): " + ", ".join(missing) + ".")
    L.append("")
    L.append("## How the emulated setup differs from the papers' devices")
    L.append("")
    for item in DIFFERENCES:
        L.append("* " + item)
    for n in order:
        r = ex.get(n)
        if not r:
            continue
        L.append("")
        L.append("## %s — %s" % (n, r["figure"]))
        L.append("")
        L.append("*Target:* %s  " % r["target"])
        L.append("*Paper:* %s  " % r["paper"])
        L.append("*Ours:* %s  " % r.get("ours", "n/a"))
        L.append("*Verdict:* %s — %s" % (experiment_verdict(r), r.get("why", "")))
        L.append("")
        if record_design(r):
            L.append("*Index design:* %s (%s)" % (
                record_design(r), "reported by the devices" if r.get("design") else
                "by the boots' properties; hash was every preset's design then"))
            L.append("")
        for d, rep in sorted((r.get("designs") or {}).items()):
            # the same experiment with another index design (run.py --index D --beside)
            L += [other_run_line("Under index=" + d, rep), ""]
        for rep in r.get("repeats", []):
            # another run of the same experiment: its verdicts beside this one's
            L += [other_run_line("Repeat", rep), ""]
        L += repeat_numbers(r)
        if r.get("rejudged"):
            L.append("*Re-judged:* " + r["rejudged"] + ".")
            L.append("")
        if r.get("setup"):
            L.append("*Setup:* " + r["setup"])
            L.append("")
        if r.get("scale_note"):
            L.append("*Scale:* %s (this run: --scale %s)." % (r["scale_note"], r.get("scale")))
            L.append("")
        for fig in r.get("figures", []):
            rel = os.path.relpath(fig, docs_dir) if os.path.isabs(fig) else fig
            L.append("![%s](%s)" % (n, rel))
            L.append("")
        if r.get("claims"):
            # every quantitative claim of the figure, ours beside it, and the
            # criterion in the experiment's code (a changed one beside its predecessor)
            rows = V.claims_table(r["claims"])
            L.append("| " + " | ".join(rows[0]) + " |")
            L.append("|---|---|---|---|---|")
            for row in rows[1:]:
                L.append("| " + " | ".join(cell(x) for x in row) + " |")
            L.append("")
        if r.get("numbers"):
            L.append("| number | value |")
            L.append("|---|---|")
            for k in sorted(r["numbers"]):
                L.append("| %s | %s |" % (cell(k), cell(r["numbers"][k])))
            L.append("")
        if r.get("table"):
            hdr = r["table"][0]
            L.append("| " + " | ".join(cell(h) for h in hdr) + " |")
            L.append("|" + "---|" * len(hdr))
            for row in r["table"][1:]:
                L.append("| " + " | ".join(cell(c) for c in row) + " |")
            L.append("")
        boots = r.get("boots", [])
        if boots:
            L.append("Guest boots: " + "; ".join(
                "`%s` (%s%s, %.0f s)" % (
                    b["name"], ", ".join("%s=%s" % kv for kv in sorted(b["props"].items()))
                    or "defaults",
                    "; block personality: " + (", ".join("%s=%s" % kv for kv in sorted(
                        b["block_props"].items())) or "defaults")
                    if b.get("block_props") is not None else "", b["wall_s"]) for b in boots) + ".")
            L.append("")
    return "\n".join(L) + "\n"
