#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""scripts/plot-kvbench on a recorded kvbench report (report.json, TAP).

usage: test_plot.py PLOT_KVBENCH REPORT_JSON

report.json was recorded with
  kvbench --engine rawhash --rawhash-dev FILE --rawhash-size 33554432 --json --keys 2000
          --value-size 200 --duration 0.3 --mix read=70,update=20,rmw=10
          --report-interval 0.1 --percentiles 50,90,99 --seed 7
(a load of 0.016411 s in one interval, a run of four intervals). The series
are checked exactly against the report's numbers; the PNG must be written.
"""
import contextlib
import io
import os
import sys
import tempfile
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader

PLOT, REPORT = sys.argv[1], sys.argv[2]
results = []


def check(cond, what):
    results.append((bool(cond), what))


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("1..1\nnot ok 1 - python3-matplotlib is not installed (apt-get install "
              "python3-matplotlib)")
        return 1
    loader = SourceFileLoader("plot_kvbench", PLOT)
    mod = module_from_spec(spec_from_loader("plot_kvbench", loader))
    loader.exec_module(mod)
    import json
    report = json.load(open(REPORT))

    t = mod.throughput_series(report)
    # the load's one interval [0, 0.006735] at 296975.0 ops/s, then the run's first
    # three intervals shifted by the load's 0.016411 s: mid-points 0.016411 + (a + b) / 2;
    # the run's fourth, [0.3001, 0.320547] (0.02 s of a 0.1 s period, 1 op: 48.9 ops/s),
    # is the partial tail, not drawn; the load's only interval is drawn however short
    check(t == {"rawhash": [(0.003367, 296975.0), (0.074683, 339554.7), (0.18277, 299607.5),
                            (0.274548, 248911.0)]},
          "throughput series: interval mid-points, phases back to back, no partial tail (%s)" % t)
    c = mod.cdf_series(report)
    check(sorted(c) == ["rawhash load insert", "rawhash run read", "rawhash run rmw",
                        "rawhash run update"], "one CDF per engine, phase and op type")
    check(c["rawhash run rmw"] == [(0.876, 0.5), (1.256, 0.9), (1.736, 0.99), (9974.661, 1.0)],
          "run rmw CDF: p50/p90/p99 then the max at 1.0 (%s)" % c["rawhash run rmw"])
    check(c["rawhash load insert"] == [(0.201, 0.5), (0.31, 0.9), (0.54, 0.99), (996.219, 1.0)],
          "load insert CDF (%s)" % c["rawhash load insert"])
    # without intervals: one point per phase at its mean ops/s
    for ph in report["phases"] + report["engines"][0]["phases"]:
        ph["intervals"] = []
    t = mod.throughput_series(report)
    check(t == {"rawhash": [(0.008205, report["phases"][0]["ops_per_s"]),
                            (0.179075, report["phases"][1]["ops_per_s"])]},
          "no intervals: a point per phase at its middle (%s)" % t)

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.png")
        with contextlib.redirect_stdout(io.StringIO()) as said:
            rc = mod.main([REPORT, "-o", out])
        check(said.getvalue() == out + "\n", "it prints the PNG's path (%r)" % said.getvalue())
        data = open(out, "rb").read() if os.path.exists(out) else b""
        check(rc == 0 and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000,
              "plot-kvbench writes a PNG (%d bytes)" % len(data))
        bad = os.path.join(tmp, "bad.json")
        open(bad, "w").write("{\"x\": 1}")
        with contextlib.redirect_stderr(io.StringIO()) as why:
            rc = mod.main([bad, "-o", out])
        check(rc == 2 and why.getvalue() == "plot-kvbench: %s is not a kvbench --json report "
              "(no \"phases\")\n" % bad, "a JSON that is not a kvbench report: exit 2")

    print("1..%d" % len(results))
    for i, (ok, what) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
