#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""kvbench's --json against its JSON Schema, and its command line, without a device.

usage: validate.py KVBENCH SCHEMA [KVBENCH_LOOP]

Runs the built kvbench on the rawhash engine over a temporary file (the
engine that needs no device) and checks, as TAP:
  - the report validates against SCHEMA (kvbench.schema.json, schema_version 1);
  - exact values: op counts, the default and the chosen --percentiles keys;
  - latency_histogram: per type that ran, the counts add up to its op count
    and every percentile printed is recomputed from the buckets;
  - --report-interval: stdout is the JSON alone, one stderr line per interval,
    the intervals' ops add up to the phase's;
  - an old preset name: one notice line on stderr, "preset" the new name;
  - every --help flag line names a default; old flag spellings still parse;
  - with KVBENCH_SIM=1 in the environment (libkvssd built with its sim
    transport): kvbench on sim:IMAGE, sync and async, says its device time is
    the simulator's ("clock": "sim", and a line of text).
  - with KVBENCH_LOOP (kvbench over the in-process device, /dev/null a KV
    namespace): the kvssd engine's reports with their "device" object, on the
    sync and io_uring paths, ycsb-e's scans on the device's iterator and
    ycsb-f's read-modify-writes, the device's command counts exact.
Needs Debian's python3-jsonschema.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("1..1\nnot ok 1 - python3-jsonschema is not installed (apt-get install "
          "python3-jsonschema)")
    sys.exit(1)

KVBENCH, SCHEMA = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(SCHEMA)), "..", "schemas"))
import provenance_schema  # noqa: E402  (tests/host/schemas)
KVBENCH_LOOP = sys.argv[3] if len(sys.argv) > 3 else None
results = []


def check(cond, what):
    results.append((bool(cond), what))
    return bool(cond)


def run(tmp, *args):
    img = os.path.join(tmp, "rh.img")
    if os.path.exists(img):
        os.unlink(img)
    cmd = [KVBENCH, "--engine", "rawhash", "--rawhash-dev", img,
           "--rawhash-size", "33554432", "--json", "--progress", "off"] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def loop_run(*args):
    p = subprocess.run([KVBENCH_LOOP, "--device", "/dev/null", "--json", "--progress", "off"] +
                       list(args), capture_output=True, text=True, timeout=120)
    try:
        return p.returncode, json.loads(p.stdout)
    except ValueError:
        return p.returncode, {"stderr": p.stderr[-300:]}


SIM_GEOMETRY = ("channels=2,dies-per-channel=2,blocks-per-die=32,pages-per-block=64,"
                "page-size-bytes=16384")


def sim(tmp, validator):
    """kvbench on the sim transport: the report says whose clock the device time is."""
    for extra in ([], ["--qd", "4"]):
        img = os.path.join(tmp, "sim.img")
        if os.path.exists(img):
            os.unlink(img)
        p = subprocess.run([KVBENCH, "--device", "sim:%s,%s" % (img, SIM_GEOMETRY), "--keys",
                            "300", "--ops", "600", "--json", "--progress", "off"] + extra,
                           capture_output=True, text=True, timeout=120)
        try:
            r = json.loads(p.stdout)
        except ValueError:
            r = {"stderr": p.stderr[-300:]}
        errs = list(validator.iter_errors(r))
        load = r.get("phases", [{}])[0]
        check(p.returncode == 0 and not errs and r["io"] == ("async" if extra else "sync") and
              load["device"]["clock"] == "sim" and r["device"]["clock"] == "sim" and
              load["device"]["sim_latency_us"]["store"]["count"] == 300 and
              r["mismatches"] == 0,
              "sim: (%s): 300 Stores in the device's log, \"clock\": \"sim\", the report "
              "validates%s" % (r.get("io"), ": " + errs[0].message if errs else ""))
    os.unlink(img)
    p = subprocess.run([KVBENCH, "--device", "sim:%s,%s" % (img, SIM_GEOMETRY), "--keys", "100",
                        "--ops", "100", "--progress", "off"], capture_output=True, text=True,
                       timeout=120)
    line = "   clock     sim: device time is the firmware's simulated clock, each command " \
           "arriving when the previous one completed (no VM)"
    check(p.returncode == 0 and p.stdout.splitlines().count(line) == 2,
          "sim: the text report says so under each phase (%r)" % p.stdout[-300:])


def pct_from_buckets(h, p):
    """Percentile p in ns from a latency_histogram entry alone (docs/kvbench.md "JSON")."""
    rank = max(1, math.ceil(p / 100.0 * h["count"]))
    if rank >= h["count"]:
        return h["max"]
    seen = 0
    for lo, hi, n in h["buckets"]:
        seen += n
        if seen >= rank:
            return min(lo + (hi - lo + 1) // 2, h["max"])
    return h["max"]


def histograms(r, validator):
    """latency_histogram: per type that ran, counts adding up to its op count, buckets
    ascending and disjoint, and every percentile latency_by_op_us prints recomputed."""
    fixed = {"p50": 50, "p90": 90, "p99": 99, "p999": 99.9, "p9999": 99.99}
    bad = []
    for ph in r["phases"]:
        hs, by, oc = ph.get("latency_histogram", {}), ph["latency_by_op_us"], ph["op_counts"]
        if sorted(hs) != sorted(k for k in oc if oc[k]) or sorted(hs) != sorted(by):
            bad.append("%s: types %s" % (ph["phase"], sorted(hs)))
        for op, h in hs.items():
            b = h["buckets"]
            if sum(n for _, _, n in b) != oc[op] or h["count"] != oc[op] or \
                    any(n == 0 or lo > hi for lo, hi, n in b) or \
                    any(b[i][1] >= b[i + 1][0] for i in range(len(b) - 1)):
                bad.append("%s %s: counts %s" % (ph["phase"], op, [n for _, _, n in b]))
            want = dict((f, by[op][f]) for f in fixed)
            want.update(("percentiles." + k, v) for k, v in by[op]["percentiles"].items())
            got = dict((f, float("%.3f" % (pct_from_buckets(h, p) / 1e3)))
                       for f, p in fixed.items())
            got.update(("percentiles." + k, float("%.3f" % (pct_from_buckets(h, float(k)) / 1e3)))
                       for k in by[op]["percentiles"])
            if got != want or float("%.3f" % (h["max"] / 1e3)) != by[op]["max"]:
                bad.append("%s %s: %s != %s" % (ph["phase"], op, got, want))
    check(not bad and len(r["phases"]) == 2,
          "latency_histogram: counts = op_counts per type, every printed percentile "
          "recomputed from the buckets (%s)" % bad[:2])
    stripped = json.loads(json.dumps(r))
    stripped["phases"][0].pop("latency_histogram", None)
    check(list(validator.iter_errors(stripped)),
          "a report without a phase's latency_histogram fails validation")


def loop(validator):
    """The kvssd engine: reports with the device's statistics log deltas."""
    rc, r = loop_run("--keys", "300", "--ops", "600")
    errs = list(validator.iter_errors(r))
    check(rc == 0 and not errs, "kvssd engine (sync): exit 0, the report validates%s" %
          (": " + errs[0].message if errs else ""))
    if rc:
        return
    check(r["device"]["clock"] == "vm", "a device in a VM: \"clock\": \"vm\"")
    load, run_ph = r["phases"]
    sim = load["device"]["sim_latency_us"]
    check(list(sim) == ["store", "retrieve", "delete", "exist", "iterate"],
          "device.sim_latency_us names the five KV commands (%s)" % list(sim))
    check(sim["store"]["count"] == 300 and load["commands"] == 300,
          "load: 300 inserts = 300 Stores in the device's log (%d)" % sim["store"]["count"])
    d = run_ph["device"]
    oc = run_ph["op_counts"]
    check(d["sim_latency_us"]["store"]["count"] == oc["update"] and
          d["sim_latency_us"]["retrieve"]["count"] == oc["read"] and
          oc["read"] + oc["update"] == 600,
          "run: Stores = updates, Retrieves = reads (%s, %s)" %
          (d["sim_latency_us"]["store"]["count"], d["sim_latency_us"]["retrieve"]["count"]))
    check(r["device"] == d and r["device_phase"] == "run" and d["commands"] >= 600,
          "the top-level device object is the run phase's")
    p = r["provenance"]
    dev = p["device"] or {}
    check(p["tool"] == "kvbench" and p["command_line"][1:] ==
          ["--device", "/dev/null", "--json", "--progress", "off", "--keys", "300", "--ops", "600"]
          and (dev.get("preset"), dev.get("index"), dev.get("firmware")) == ("default", "hash", "loop"),
          "provenance: the command line and the device's configuration log (%s)" % p)
    missing = provenance_schema.missing_fields_refused(validator, r)
    check(not missing, "a report without provenance or any of its fields fails validation (%s)" %
          missing)
    # a device that cannot be opened: the sentence, no report (not an empty one), exit 1
    p = subprocess.run([KVBENCH_LOOP, "--device", "/nonexistent", "--json", "--progress", "off"],
                       capture_output=True, text=True, timeout=120)
    check((p.returncode, p.stdout, p.stderr) ==
          (1, "", "kvbench: kvssd: cannot open /nonexistent: No such file or directory\n"),
          "an unopenable device: exit 1, nothing on stdout, one sentence (%r)" %
          ((p.returncode, p.stdout[:80], p.stderr),))
    p = subprocess.run([KVBENCH_LOOP, "--device", "/nonexistent", "--progress", "off"],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 1 and p.stdout == "",
          "an unopenable device, no --json: no table (%r)" % p.stdout[:80])
    # a file that is no NVMe namespace: what to give instead
    p = subprocess.run([KVBENCH_LOOP, "--device", "/dev/zero", "--progress", "off"],
                       capture_output=True, text=True, timeout=120)
    check((p.returncode, p.stderr) ==
          (1, "kvbench: kvssd: cannot open /dev/zero: not an NVMe namespace; give a KV "
              "namespace's generic char device with --device /dev/ngXnY (or pci:BDF)\n"),
          "--device /dev/zero: not an NVMe namespace, and what to give (%r)" % p.stderr)
    # a bad threshold file: its own sentence, file and line, not the device's
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write("[transfer]\ngamma=1\n")
        f.flush()
        p = subprocess.run([KVBENCH_LOOP, "--device", "/dev/null", "--json", "--progress", "off"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, KVSSD_TRANSFER_CONFIG=f.name))
        want = ('kvbench: kvssd: %s:2: unknown key "gamma" in [transfer] (named by '
                '$KVSSD_TRANSFER_CONFIG)\n' % f.name)
        check((p.returncode, p.stdout, p.stderr) == (1, "", want),
              "a bad $KVSSD_TRANSFER_CONFIG: the file's line named, exit 1 (%r)" % p.stderr)
    rc, r = loop_run("--keys", "300", "--ops", "600", "--qd", "4")
    ph = r.get("phases", [{}])[-1]
    check(rc == 0 and r["io"] == "async" and r["queue_depth"] == 4 and ph["ops"] == 600 and
          ph["errors"] == 0 and ph["mismatches"] == 0,
          "kvssd engine, --qd 4: the io_uring path, 600 operations, no error")
    rc, r = loop_run("--preset", "ycsb-e", "--keys", "200", "--ops", "200")
    ph = r.get("phases", [{}])[-1]
    oc = ph.get("op_counts", {})
    sim = ph.get("device", {}).get("sim_latency_us", {})
    check(rc == 0 and oc["iterate"] + oc["insert"] == 200 and
          sim["iterate"]["count"] == 3 * oc["iterate"] and sim["store"]["count"] == oc["insert"],
          "ycsb-e: each scan is the device's Iterator Open, Read, Close (%s scans, %s iterator "
          "commands)" % (oc.get("iterate"), sim.get("iterate", {}).get("count")))
    rc, r = loop_run("--preset", "ycsb-f", "--keys", "200", "--ops", "400")
    ph = r.get("phases", [{}])[-1]
    oc = ph.get("op_counts", {})
    sim = ph.get("device", {}).get("sim_latency_us", {})
    check(rc == 0 and oc["read"] + oc["rmw"] == 400 and ph["mismatches"] == 0 and
          sim["store"]["count"] == oc["rmw"] and
          sim["retrieve"]["count"] == oc["read"] + oc["rmw"],
          "ycsb-f: a rmw is a Retrieve and a Store, verified (%s)" % oc)
    errs = list(validator.iter_errors(r))
    check(not errs, "the ycsb-f report validates%s" % (": " + errs[0].message if errs else ""))


def main():
    schema = json.load(open(SCHEMA))
    validator = provenance_schema.validator(jsonschema.Draft7Validator, schema)
    with tempfile.TemporaryDirectory() as tmp:
        # 1. a load and a mixed run: schema and exact values
        p = run(tmp, "--keys", "500", "--ops", "2000", "--value-size", "200",
                "--mix", "read=50,update=30,rmw=20")
        check(p.returncode == 0, "kvbench --engine rawhash exits 0 (%s)" % p.stderr.strip()[-200:])
        r = json.loads(p.stdout)
        errs = sorted(validator.iter_errors(r), key=str)
        check(not errs, "the report validates against kvbench.schema.json%s" %
              (": " + errs[0].message if errs else ""))
        check(r["schema_version"] == 1, "schema_version is 1")
        check([ph["phase"] for ph in r["phases"]] == ["load", "run"],
              "one engine: its load and run phases are also the top level's")
        run_ph = r["phases"][1]
        oc = run_ph["op_counts"]
        check(run_ph["ops"] == 2000 and sum(oc.values()) == 2000 and oc["insert"] == 0,
              "the run phase counts 2000 operations, split among read/update/rmw (%s)" % oc)
        check(r["percentiles"] == [50, 90, 99, 99.9, 99.99],
              "default percentiles 50,90,99,99.9,99.99 (%s)" % r["percentiles"])
        by = run_ph["latency_by_op_us"]
        check(sorted(by) == ["read", "rmw", "update"],
              "latency_by_op_us has exactly the op types that ran (%s)" % sorted(by))
        check(list(by["rmw"]["percentiles"]) == ["50", "90", "99", "99.9", "99.99"],
              "per-op percentile keys 50 90 99 99.9 99.99")
        check(by["read"]["count"] == oc["read"], "read latency count = read op count")
        check(all(by[k]["percentiles"]["50"] <= by[k]["percentiles"]["99"] <= by[k]["max"]
                  for k in by), "p50 <= p99 <= max for every op type")
        check(run_ph["errors"] == 0 and run_ph["mismatches"] == 0 and run_ph["device"] is None,
              "no errors, no mismatches, device null without a statistics log")
        check(r["provenance"]["tool"] == "kvbench" and r["provenance"]["device"] is None,
              "rawhash on a file: provenance names kvbench, device null (%s)" % r["provenance"])
        check(run_ph["intervals"] == [] and r["report_interval_s"] == 0,
              "no --report-interval: an empty intervals array")
        histograms(r, validator)

        # 2. intervals and chosen percentiles, a run by duration
        p = run(tmp, "--keys", "300", "--no-load", "--duration", "0.6", "--mix", "update=1",
                "--percentiles", "50,99,99.9", "--report-interval", "0.1")
        r = json.loads(p.stdout)  # stdout holds the JSON alone
        check(p.stdout.count("\n") == 1, "--json with intervals: stdout is one line")
        errs = list(validator.iter_errors(r))
        check(not errs, "the interval report validates%s" % (": " + errs[0].message if errs else ""))
        ph = r["phases"][0]
        ivs = ph["intervals"]
        lines = [l for l in p.stderr.splitlines() if l.startswith("[run ")]
        check(len(ivs) >= 5 and len(lines) == len(ivs),
              "%d intervals in the JSON, one stderr line each (%d)" % (len(ivs), len(lines)))
        check(sum(iv["ops"] for iv in ivs) == ph["ops"],
              "interval ops add up to the phase's %d" % ph["ops"])
        check(all(list(iv["latency_us"]["percentiles"]) == ["50", "99", "99.9"] for iv in ivs),
              "--percentiles 50,99,99.9: interval keys 50 99 99.9")
        check(all(ivs[i]["end_s"] == ivs[i + 1]["start_s"] for i in range(len(ivs) - 1)),
              "intervals are contiguous")
        check(list(ph["latency_by_op_us"]["update"]["percentiles"]) == ["50", "99", "99.9"],
              "phase per-op percentiles follow --percentiles")

        # --output FILE: the report goes to FILE, stdout stays empty (as fio's --output)
        out = os.path.join(tmp, "report.json")
        p = run(tmp, "--keys", "100", "--ops", "100", "--output", out)
        got = json.load(open(out)) if os.path.exists(out) else {}
        check(p.returncode == 0 and p.stdout == "" and not list(validator.iter_errors(got)) and
              got.get("phases", [{}])[-1].get("ops") == 100,
              "--output FILE: the JSON report in FILE, nothing on stdout (rc %d, stdout %r)" %
              (p.returncode, p.stdout[:80]))
        p = run(tmp, "--keys", "100", "--ops", "100", "--output", os.path.join(tmp, "no", "r"))
        check(p.returncode == 2 and p.stdout == "" and
              p.stderr.startswith("kvbench: cannot write the report to %s (--output): " %
                                  os.path.join(tmp, "no", "r")),
              "--output in a missing directory: refused before the run (%r)" % p.stderr)

        # 3. an old preset name
        p = run(tmp, "--preset", "A", "--keys", "300", "--value-size", "32")
        notice = [l for l in p.stderr.splitlines() if "preset" in l]
        check(notice == ['kvbench: preset "A" is now called "bandslim-a" (the old name '
                         'still works)'], "--preset A: one notice on stderr (%s)" % notice)
        r = json.loads(p.stdout)
        check(r["preset"] == "bandslim-a" and r["key_size"] == "fixed:4",
              "--preset A runs bandslim-a (preset %s, key size %s)" % (r["preset"], r["key_size"]))

        # 4. old spellings, both --flag VALUE and --flag=VALUE
        p = run(tmp, "--seed", "3", "--threads=1", "--queue-depth", "1", "--qd=1",
                "--keys", "200", "--key-size", "16", "--value-size=64", "--load-ops", "200",
                "--load-order", "uniform", "--load-theta", "0.9", "--ops", "100",
                "--order", "zipfian", "--theta", "0.9", "--mix", "read=1",
                "--iterate-entries", "10", "--no-reset-stats", "--no-verify", "--mode", "prp",
                "--rawhash-write-block", "131072", "--rawhash-defrag-lwm", "40",
                "--rawhash-commit", "false", "--rawhash-trim", "false",
                "--rocksdb-dir", os.path.join(tmp, "db"), "--rocksdb-wal", "true",
                "--rocksdb-sync", "false", "--rocksdb-direct-io", "true",
                "--rocksdb-block-cache", "0", "--rocksdb-write-buffer", "65536",
                "--rocksdb-compression", "none", "--io", "sync")
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        check(r.get("seed") == 3 and r.get("key_count") == 200 and
              r.get("rawhash", {}).get("defrag_lwm_pct") == 40 and
              r.get("transfer_mode") == "prp",
              "old flag spellings parse and apply (rc %d, %s)" % (p.returncode,
                                                                  p.stderr.strip()[-200:]))
        # a path that is not UTF-8: its bytes in hex, as the kvssd CLI writes them
        img = os.fsencode(tmp) + b"/rh-\xff.img"
        p = subprocess.run([os.fsencode(KVBENCH), b"--engine", b"rawhash", b"--rawhash-dev", img,
                            b"--rawhash-size", b"33554432", b"--json", b"--progress", b"off",
                            b"--keys", b"100", b"--ops", b"100"], capture_output=True,
                           timeout=120)
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        errs = list(validator.iter_errors(r))
        check(not errs and r["rawhash"]["device"] == {"hex": img.hex()} and
              r["engines"][0]["target"] == {"hex": img.hex()},
              "a non-UTF-8 path: {\"hex\": ...} in rawhash.device and engines[].target (rc %d)" %
              p.returncode)
        p = run(tmp, "--keys", "10", "--threads", "65")
        check(p.returncode == 2 and p.stderr ==
              "kvbench: threads is '65'; it must be from 1 to 64\n"
              "(run kvbench --help for usage)\n",
              "a bad value: exit 2 and the sentence (%r)" % p.stderr.strip())
        p = run(tmp, "--no-such-flag")
        check(p.returncode == 2 and "Unknown option --no-such-flag" in p.stderr,
              "an unknown flag: exit 2 naming it (%r)" % p.stderr.strip())

    # 6. the kvssd engine over the in-process device
    if KVBENCH_LOOP:
        loop(validator)
    if os.environ.get("KVBENCH_SIM") == "1":
        with tempfile.TemporaryDirectory() as tmp:
            sim(tmp, validator)

    # 5. --help: a line per flag with its default
    h = subprocess.run([KVBENCH, "--help"], capture_output=True, text=True).stdout
    # an option's text: its line and, for a long option, the indented line below
    flag_lines = []
    for l in h.splitlines():
        if l.strip().startswith("-"):
            flag_lines.append(l.strip())
        elif flag_lines and l.startswith(" " * 28):
            flag_lines[-1] += " " + l.strip()
    exempt = ("-h, --help", "--list-presets", "--version", "--queue-depth")
    missing = [l.split()[0] for l in flag_lines
               if not l.startswith(exempt) and "Default:" not in l]
    check(len(flag_lines) >= 55 and not missing,
          "--help: every flag's line names its default (%d lines; missing: %s)" %
          (len(flag_lines), missing))
    qd = [l for l in flag_lines if l.startswith("--qd N")]
    check(qd and "commands in flight per thread" in qd[0] and "Default: 1" in qd[0],
          "--help explains --qd: meaning, unit and default (%s)" % qd)

    print("1..%d" % len(results))
    for i, (ok, what) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
