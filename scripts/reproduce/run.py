#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Run reproduction experiments in the guest and write the results page.

usage: scripts/reproduce/run.py [options] EXPERIMENT... | all
       scripts/reproduce/run.py --list

Each experiment boots the guest (scripts/run-guest.sh, in icount mode)
once per set of device properties, runs kvbench/kvssd inside it, saves the
raw output under OUT/raw, analyses it, draws its figures into OUT/figures/
and updates its entry in OUT/results.json; OUT/results.md is then rendered
from OUT/results.json. OUT is --out (default
$KVSSD_CACHE/reproduce/results); the tracked docs/results.{md,json} and
docs/figures/ change only with --update-docs (or --docs docs). See
docs/reproduce.md.
"""

import argparse
import contextlib
import datetime
import fcntl
import importlib
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import report  # noqa: E402
import verdicts as V  # noqa: E402

EXPERIMENTS = [
    "exp_bandslim_fig4",
    "exp_bandslim_fig8",
    "exp_bandslim_fig9",
    "exp_bandslim_fig10",
    "exp_bandslim_fig11",
    "exp_bandslim_fig12",
    "exp_char_fig7",
    "exp_char_fig8",
    "exp_char_fig3",
    "exp_char_fig6",
    "exp_char_fig5",
    "exp_char_maxkeys",
    # KV-SSD versus block SSD + RocksDB / rawhash (issue 12; versus.py)
    "exp_char_fig2",
    "exp_char_fig3_block",
    "exp_char_fig4",
    "exp_char_fig5a",
    "exp_char_fig6a",
    "exp_char_fig7_block",
    "exp_char_cpu",
    "exp_char_traffic",
    "exp_char_direct",
    "exp_sdc_scaleup",
    "exp_systor_scaleout",
    "exp_bandslim_wm",
]


def modules():
    return [importlib.import_module(m) for m in EXPERIMENTS]


def experiment_scale(m, given):
    """The scale experiment module m runs at: --scale when given, else the
    module's DEFAULT_SCALE (1 unless it says otherwise)."""
    if given is not None:
        return given
    return float(getattr(m, "DEFAULT_SCALE", 1.0))


def git_head():
    try:
        return subprocess.run(["git", "-C", C.TOP, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def qemu_note():
    """Which QEMU ran, when run-guest.sh was given one ($QEMU) instead of
    building it from this checkout (scripts/build-qemu.sh)."""
    q = os.environ.get("QEMU")
    if not q or not os.path.exists(q):
        return ""
    built = datetime.datetime.utcfromtimestamp(os.path.getmtime(q)).strftime("%Y-%m-%d %H:%M")
    return "QEMU: %s, built %s UTC (given as $QEMU, not rebuilt for this commit). " % (q, built)


def main():
    cache = os.environ.get("KVSSD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kvssd")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("experiments", nargs="*", help="names (see --list) or 'all'")
    ap.add_argument("--list", action="store_true", help="list the experiments")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the run-guest.sh command lines and guest scripts; run nothing")
    ap.add_argument("--scale", type=float, default=None,
                    help="multiply every count by this, for every experiment named (default: "
                    "each experiment's DEFAULT_SCALE, 1 unless its module says otherwise; with "
                    "--report-only: the scale the saved output ran at, default the record's)")
    ap.add_argument("--out", default=os.path.join(cache, "reproduce", "results"),
                    help="results directory: results.json, results.md, figures/ and raw/ "
                    "(default $KVSSD_CACHE/reproduce/results)")
    ap.add_argument("--raw", default=None,
                    help="where raw guest output is kept (default OUT/raw)")
    ap.add_argument("--docs", default=None,
                    help="write results.json, results.md and figures/ here instead of OUT "
                    "(e.g. --docs docs: the tracked page)")
    ap.add_argument("--update-docs", action="store_true",
                    help="the same as --docs docs (this checkout's docs/)")
    ap.add_argument("--repeat", action="store_true",
                    help="keep the experiment's previous record and add this run under it as a "
                    "repeat (the page prints both runs' numbers and verdicts)")
    ap.add_argument("--report-only", action="store_true",
                    help="re-analyse saved raw output (or, without it, redraw from results.json)")
    ap.add_argument("--rejudge", action="store_true",
                    help="with --report-only and no raw output: judge the recorded series by the "
                    "experiment's current criteria (the page says they postdate the run)")
    ap.add_argument("--accel", default=None, help="passed to run-guest.sh --accel")
    ap.add_argument("--jobs", type=int, default=None,
                    help="boots of one experiment run at once, 1-8 (default 2 under icount on a "
                    "host with 2 or more CPUs, else 1); under icount their device-time numbers "
                    "do not depend on it, only the wall time")
    ap.add_argument("--icount", default=str(C.ICOUNT_SHIFT),
                    help="run-guest.sh --icount SHIFT for every boot, or 'off' (the host's "
                    "real time; needed with --accel kvm). Default %d" % C.ICOUNT_SHIFT)
    ap.add_argument("--beside", action="store_true",
                    help="with --index D: keep the experiment's record and add this run under "
                    "it as design D's (the page shows each design's verdicts beside the "
                    "record's own)")
    ap.add_argument("--index", choices=("hash", "pm983", "lsm"), default=None,
                    help="every KV-SSD boot with this index design where the experiment names "
                    "none (default: the preset's); the page then answers for that design, so "
                    "give --out DIR, not --update-docs")
    a = ap.parse_args()

    mods = modules()
    by_name = {m.NAME: m for m in mods}
    if a.list:
        for m in mods:
            print("%-16s %s: %s" % (m.NAME, m.FIGURE, m.TARGET))
        return 0
    names = a.experiments
    if not names:
        ap.error("name an experiment (see --list) or 'all'")
    if names == ["all"]:
        names = [m.NAME for m in mods]
    for n in names:
        if n not in by_name:
            ap.error("unknown experiment '%s'; --list shows them" % n)
    scale_given = a.scale is not None
    if scale_given and not (a.scale > 0 and a.scale <= 100):
        ap.error("--scale %g is not valid: give a number above 0 and at most 100" % a.scale)
    if a.icount == "off":
        icount = None
    elif a.icount.isdigit() and 0 <= int(a.icount) <= 10:
        icount = int(a.icount)
    else:
        ap.error("--icount '%s' is not valid: give a shift from 0 to 10, or off" % a.icount)
    if a.jobs is None:
        a.jobs = 2 if icount is not None and (os.cpu_count() or 1) >= 2 else 1
    if not 1 <= a.jobs <= 8:
        ap.error("--jobs %d is not valid: give 1 to 8 boots at once" % a.jobs)
    if a.jobs > 1 and icount is None:
        ap.error("--jobs %d needs icount (without it a boot's device time follows the host's "
                 "pace, which the other boots change)" % a.jobs)
    if a.accel == "kvm" and icount is not None:
        ap.error("--accel kvm needs --icount off (icount counts instructions TCG emulates)")
    if a.update_docs:
        if a.docs:
            ap.error("give --update-docs or --docs DIR, not both")
        a.docs = os.path.join(C.TOP, "docs")
    if a.beside and (a.index is None or a.repeat or a.report_only):
        ap.error("--beside needs --index D, and not --repeat or --report-only")
    if a.index is not None and a.docs and not a.beside:
        ap.error("--index %s judges another design than the tracked page's: give --out DIR, "
                 "not --docs or --update-docs, or --beside to add it beside the page's "
                 "records" % a.index)
    C.INDEX = a.index
    out = a.docs or a.out
    rawroot = a.raw or os.path.join(a.out, "raw")

    extra = ["--accel", a.accel] if a.accel else None
    jpath = os.path.join(out, "results.json")
    figdir = os.path.join(out, "figures")
    results = report.load(jpath)
    if not a.dry_run:
        print("results: %s (page %s, figures %s/); raw guest output under %s" % (
            jpath, os.path.join(out, "results.md"), figdir, rawroot), file=sys.stderr)
    t_all = time.time()
    for i, n in enumerate(names):
        m = by_name[n]
        run_scale = experiment_scale(m, a.scale)
        boots = m.boots(run_scale)
        rawdir = os.path.join(rawroot, n)
        t0 = time.time()
        print("== [%d/%d] %s (%s): %d boot(s), %d step(s); started %s UTC" % (
            i + 1, len(names), n, m.FIGURE, len(boots), sum(len(b.steps) for b in boots),
            time.strftime("%H:%M:%S", time.gmtime(t0))), file=sys.stderr, flush=True)
        host = getattr(m, "host_run", None)
        if a.dry_run:
            if host:
                host(rawdir, dry_run=True, log=sys.stdout)
            for b in boots:
                C.run_boot(b, rawdir, dry_run=True, extra=extra, log=sys.stdout, icount=icount)
            continue
        if a.report_only:
            # an experiment without a guest (host_run) saves its raw record as a boot's
            raw = m.load_host_raw(rawdir) if host else C.load_raw(rawdir, boots)
            if not raw:
                rec = results["experiments"].get(n)
                if rec:
                    if hasattr(m, "rejudge") and a.rejudge:
                        with results_lock(jpath):
                            results = report.load(jpath)
                            rec = results["experiments"][n]
                            rejudge(m, rec)
                            report.save(jpath, results)
                    rec["figures"] = [os.path.relpath(p, out) for p in m.plot(rec, figdir)]
                continue
            prev = results["experiments"].get(n, {})
            # when the saved output was produced: the newest raw record's time
            newest = max(os.path.getmtime(os.path.join(rawdir, b + ".json")) for b in raw)
            run_at = datetime.datetime.utcfromtimestamp(newest).strftime("%Y-%m-%d %H:%M")
            scale = run_scale if scale_given else prev.get("scale", run_scale)
        elif host:
            raw = host(rawdir)
            run_at, scale = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), run_scale
        else:
            raw = run_boots(boots, rawdir, extra, icount, a.jobs)
            run_at, scale = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), run_scale
        rec = m.analyze(raw, scale)
        if host:
            rec["host"] = True
        rec.update(name=n, figure=m.FIGURE, paper=m.PAPER, target=m.TARGET, scale=scale,
                   run_at=run_at, commit=git_head(),
                   setup=getattr(m, "SETUP", "") + rec.get("setup_extra", "") + (
                       "" if host else qemu_note() + icount_note(raw)),
                   scale_note=getattr(m, "SCALE", ""),
                   # a fabrics host's devices are its target's (common.Boot.target)
                   boots=[{"name": b.name, "props": (b.target or b).props,
                           "block_props": b.block_props,
                           "wall_s": raw.get(b.name, {}).get("wall_s", 0),
                           "icount_shift": raw.get(b.name, {}).get("icount_shift"),
                           "rc": raw.get(b.name, {}).get("rc")} for b in boots if raw.get(b.name)])
        design = C.observed_design(raw)
        if getattr(m, "INDEX_FREE", False):
            rec["index_free"] = True  # no claim depends on the KV-SSD's index design
        elif design:
            rec["design"] = design
        rec.setdefault("met", None)
        if rec.get("claims") is not None and rec["met"] != V.overall(rec["claims"]):
            # every experiment's verdict is its claims' (verdicts.overall)
            print("   %s: its verdict %r is not overall(claims) = %r; using the latter" % (
                n, rec["met"], V.overall(rec["claims"])), file=sys.stderr)
            rec["met"] = V.overall(rec["claims"])
        # read the file again, under a lock until it is written back: another run.py
        # writing the same results.json (other experiments) keeps its records
        with results_lock(jpath):
            results = report.load(jpath)
            if a.beside:
                # beside the record of the page, under its design (report.designs_line)
                first = results["experiments"].get(n)
                if first is None:
                    print("   %s: no record to put index=%s beside; run it first without "
                          "--beside" % (n, a.index), file=sys.stderr)
                    continue
                first.setdefault("designs", {})[a.index] = repeat_of(rec)
                rec = first
            elif a.repeat and n in results["experiments"]:
                first = results["experiments"][n]
                first.setdefault("repeats", []).append(repeat_of(rec))
                rec = first
            else:
                carry_designs(results["experiments"].get(n), rec)
                try:
                    rec["figures"] = [os.path.relpath(p, out) for p in m.plot(rec, figdir)]
                except (KeyError, ValueError, TypeError) as e:
                    rec["figures"] = []
                    rec["plot_error"] = "%s: %s" % (type(e).__name__, e)
            results["experiments"][n] = rec
            report.save(jpath, results)
        shown = rec["designs"][a.index] if a.beside else rec
        print("   [%d/%d] %s: done in %.0f s; verdict %s%s; %s" % (
            i + 1, len(names), n, time.time() - t0,
            report.VERDICT.get(shown["met"], shown["met"]),
            " (index=%s, beside)" % a.index if a.beside else "", shown.get("ours", "")),
            file=sys.stderr, flush=True)
    if not a.dry_run:
        order = [m.NAME for m in mods]
        results = report.load(jpath)
        with open(os.path.join(out, "results.md"), "w") as f:
            f.write(report.render(results, order, out))
        print("%d experiment(s) in %.0f s; page: %s" % (
            len(names), time.time() - t_all, os.path.join(out, "results.md")), file=sys.stderr)
    return 0


@contextlib.contextmanager
def results_lock(jpath):
    """An exclusive lock on results.json's directory (flock) while a run.py reads,
    changes and writes the file: two run.py processes finishing at once (e.g. one
    per experiment, as on 2026-11-25 13:36, when one's record was lost) take turns."""
    d = os.path.dirname(os.path.abspath(jpath))
    os.makedirs(d, exist_ok=True)
    fd = os.open(d, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def run_boots(boots, rawdir, extra, icount, jobs):
    """{boot name: raw record} of an experiment's boots, up to jobs at once (each
    boot is its own QEMU; under icount its device time is a function of its own
    guest's instructions, so running two side by side changes only the wall time)."""
    # a fabrics boot is two QEMUs without icount, whose device time follows
    # the host's pace: alone, after the others
    alone = [b for b in boots if b.target is not None]
    boots = [b for b in boots if b.target is None]
    if alone:
        out = run_boots(boots, rawdir, extra, icount, jobs) if boots else {}
        out.update({b.name: C.run_boot(b, rawdir, extra=extra, icount=None) for b in alone})
        return out
    if jobs <= 1 or len(boots) <= 1:
        return {b.name: C.run_boot(b, rawdir, extra=extra, icount=icount) for b in boots}
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {b.name: ex.submit(C.run_boot, b, rawdir, extra=extra, icount=icount)
                for b in boots}
        return {name: f.result() for name, f in futs.items()}


def rejudge(m, rec):
    """The experiment's claims from its recorded series by today's criteria, for a record
    whose raw output is gone; the record says the criteria postdate its run."""
    old = V.summarize(rec.get("claims") or [])
    claims = m.rejudge(rec)
    rec["claims"] = claims
    rec["met"] = V.overall(claims)
    if hasattr(m, "explain"):
        rec["why"] = m.explain(rec)
    rec["rejudged"] = ("claims judged at commit %s from the series this run (%s, commit %s) "
                       "recorded, by that commit's criteria and labels, written after the run; "
                       "a criterion changed since the run shows its earlier verdict beside it. "
                       "Re-run the experiment for criteria fixed before it" % (
                           git_head(), rec.get("run_at", "?"), rec.get("commit", "?")))
    # the old summary of the claims, when the record's "ours" starts with it, is replaced
    ours = rec.get("ours", "")
    for prefix in (old + " (re-judged); ", old + ". ", old + "; ", old + ": ", old + " ", old):
        if ours.startswith(prefix):
            ours = ours[len(prefix):]
            break
    sep = " " if ours.startswith("(") else "; "
    rec["ours"] = V.summarize(claims) + " (re-judged)" + (sep + ours if ours else "")


def icount_note(raw):
    shifts = sorted({str(r.get("icount_shift")) for r in raw.values() if r})
    if shifts == ["None"] or not shifts:
        return "QEMU without icount: device time followed the host's real time. "
    off = sorted(b for b, r in raw.items() if r and r.get("icount_shift") is None)
    shifts = [x for x in shifts if x != "None"]
    return ("QEMU in icount mode (shift %s, sleep=off): device time is a function of the "
            "guest's instructions, not the host's speed%s. " % (
                "/".join(shifts), "; without icount (the host's real time): " +
                ", ".join(off) if off else ""))


def carry_designs(prev, rec):
    """A new record keeps the runs beside the one it replaces, of designs other
    than its own, and when its design differs from the previous record's (a
    preset that now takes its device's design), that record beside it too, so
    the page still shows what the other design measured. A record of an
    experiment that judges no index design (index_free) keeps none."""
    if not prev or rec.get("index_free"):
        return
    own = report.record_design(rec)
    kept = {d: r for d, r in (prev.get("designs") or {}).items() if d != own}
    before = report.record_design(prev)
    if before and before != own:
        kept[before] = repeat_of(dict(prev, design=before))
    if kept:
        rec["designs"] = kept


def repeat_of(rec):
    """What the page prints of a second run: its time, verdicts and numbers."""
    return {k: rec.get(k) for k in ("run_at", "commit", "met", "ours", "claims", "numbers",
                                    "scale", "boots", "design")}


if __name__ == "__main__":
    sys.exit(main())
