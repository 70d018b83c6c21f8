#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Run reproduction experiments in the guest and write the results page.

usage: scripts/reproduce/run.py [options] EXPERIMENT... | all
       scripts/reproduce/run.py --list

Each experiment boots the guest (scripts/run-guest.sh) once per set of
device properties, runs kvbench/kvssd inside it, saves the raw output
under --raw, analyses it, draws its figures into docs/figures/ and updates
its entry in docs/results.json; docs/results.md is then rendered from
docs/results.json. See docs/reproduce.md.
"""

import argparse
import datetime
import importlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import report  # noqa: E402

EXPERIMENTS = [
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
    # KV-SSD versus block SSD + RocksDB / rawhash (issue 12; versus.py)
    "exp_char_fig2",
    "exp_char_fig3_block",
    "exp_char_fig4",
    "exp_char_fig5a",
    "exp_char_fig6a",
    "exp_char_fig7_block",
    "exp_char_cpu",
    "exp_char_traffic",
]


def modules():
    return [importlib.import_module(m) for m in EXPERIMENTS]


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
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply every count by this (default 1 = all.sh's counts)")
    ap.add_argument("--raw", default=os.path.join(cache, "reproduce", "raw"),
                    help="where raw guest output is kept (default $KVSSD_CACHE/reproduce/raw)")
    ap.add_argument("--docs", default=os.path.join(C.TOP, "docs"),
                    help="where results.json, results.md and figures/ go (default docs/)")
    ap.add_argument("--report-only", action="store_true",
                    help="re-analyse saved raw output (or, without it, redraw from results.json)")
    ap.add_argument("--accel", default=None, help="passed to run-guest.sh --accel")
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
    if not (a.scale > 0 and a.scale <= 100):
        ap.error("--scale %g is not valid: give a number above 0 and at most 100" % a.scale)

    extra = ["--accel", a.accel] if a.accel else None
    jpath = os.path.join(a.docs, "results.json")
    figdir = os.path.join(a.docs, "figures")
    results = report.load(jpath)
    for n in names:
        m = by_name[n]
        boots = m.boots(a.scale)
        rawdir = os.path.join(a.raw, n)
        print("== %s (%s): %d boot(s), %d step(s)" % (
            n, m.FIGURE, len(boots), sum(len(b.steps) for b in boots)), file=sys.stderr)
        if a.dry_run:
            for b in boots:
                C.run_boot(b, rawdir, dry_run=True, extra=extra, log=sys.stdout)
            continue
        if a.report_only:
            raw = C.load_raw(rawdir, boots)
            if not raw:
                rec = results["experiments"].get(n)
                if rec:
                    rec["figures"] = [os.path.relpath(p, a.docs) for p in m.plot(rec, figdir)]
                continue
            prev = results["experiments"].get(n, {})
            # when the saved output was produced: the newest raw record's time
            newest = max(os.path.getmtime(os.path.join(rawdir, b + ".json")) for b in raw)
            run_at = datetime.datetime.utcfromtimestamp(newest).strftime("%Y-%m-%d %H:%M")
            scale = prev.get("scale", a.scale)
        else:
            raw = {}
            for b in boots:
                raw[b.name] = C.run_boot(b, rawdir, extra=extra)
            run_at, scale = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), a.scale
        rec = m.analyze(raw, scale)
        rec.update(name=n, figure=m.FIGURE, paper=m.PAPER, target=m.TARGET, scale=scale,
                   run_at=run_at, commit=git_head(),
                   setup=getattr(m, "SETUP", "") + rec.get("setup_extra", "") + qemu_note(),
                   scale_note=getattr(m, "SCALE", ""),
                   boots=[{"name": b.name, "props": b.props, "block_props": b.block_props,
                           "wall_s": raw.get(b.name, {}).get("wall_s", 0),
                           "rc": raw.get(b.name, {}).get("rc")} for b in boots if raw.get(b.name)])
        rec.setdefault("met", None)
        try:
            rec["figures"] = [os.path.relpath(p, a.docs) for p in m.plot(rec, figdir)]
        except (KeyError, ValueError, TypeError) as e:
            rec["figures"] = []
            rec["plot_error"] = "%s: %s" % (type(e).__name__, e)
        results["experiments"][n] = rec
        report.save(jpath, results)
        print("   %s: match=%s; %s" % (n, report.VERDICT.get(rec["met"], rec["met"]),
                                      rec.get("ours", "")), file=sys.stderr)
    if not a.dry_run:
        order = [m.NAME for m in mods]
        with open(os.path.join(a.docs, "results.md"), "w") as f:
            f.write(report.render(results, order, a.docs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
