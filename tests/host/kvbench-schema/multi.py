#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""kvbench on several sim: devices at once (--device given more than once).

usage: multi.py KVBENCH SCHEMA KVSSD

Runs the built kvbench on two and four sim:IMAGE devices in temporary
directories and checks, as TAP:
  - every device runs the whole workload: --keys and --ops are per device, so
    its load has --keys inserts (its own Stores in its log) and its run --ops
    operations; the aggregate's counts are the devices' sums;
  - each device holds its own keys afterwards: `kvssd list` of device i of N
    lists exactly the key indexes i, i+N, ... (the first 8 key bytes);
  - the report validates against SCHEMA; aggregate device time is the longest
    device's sim_time_s; one device keeps the one-device shape (no "devices");
  - the text report's aggregate line, the INI's ';' list, and the refusals
    (another engine, a device twice, calibrate on several, more than 16).
Needs Debian's python3-jsonschema.
"""
import json
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

KVBENCH, SCHEMA, KVSSD = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(SCHEMA)), "..", "schemas"))
import provenance_schema  # noqa: E402  (tests/host/schemas)

GEOMETRY = ("channels=2,dies-per-channel=2,blocks-per-die=32,pages-per-block=64,"
            "page-size-bytes=16384")
results = []


def check(cond, what):
    results.append((bool(cond), what))
    return bool(cond)


def kvbench(tmp, *args):
    return subprocess.run([KVBENCH, "--progress", "off"] + list(args), cwd=tmp,
                          capture_output=True, text=True, timeout=120)


def devices(n):
    return ["sim:d%d.img,%s" % (i, GEOMETRY) for i in range(n)]


def device_flags(paths):
    return [a for p in paths for a in ("--device", p)]


def listed_indexes(tmp, path):
    """The key indexes on @path: each key's first 8 bytes, big-endian (kvbench's keys)."""
    p = subprocess.run([KVSSD, "list", path], cwd=tmp, capture_output=True, text=True,
                       timeout=120)
    if p.returncode:
        return None
    return sorted(int(line[2:18], 16) for line in p.stdout.split())


def several(validator, ndev, threads, extra):
    """@ndev devices, @threads threads each: exact counts per device, keys, schema."""
    keys, ops = 300, 600
    with tempfile.TemporaryDirectory() as tmp:
        paths = devices(ndev)
        p = kvbench(tmp, *device_flags(paths), "--keys", str(keys), "--ops", str(ops),
                    "--threads", str(threads), "--json", *extra)
        try:
            r = json.loads(p.stdout)
        except ValueError:
            r = {"stderr": p.stderr[-300:]}
        errs = list(validator.iter_errors(r))
        what = "%d devices, %d thread(s) each%s" % (ndev, threads, " " + " ".join(extra))
        check(p.returncode == 0 and not errs,
              "%s: exit 0, the report validates%s" % (what, ": " + errs[0].message if errs
                                                      else " (%r)" % r.get("stderr", "")))
        if not check("devices" in r and "aggregate" in r,
                     "%s: the report has \"devices\" and \"aggregate\" (%s)" %
                     (what, sorted(r))[:400]) or p.returncode or errs:
            return
        devs, agg = r["devices"], r["aggregate"]
        check([d["device_path"] for d in devs] == paths and agg["devices"] == ndev and
              r["device_path"] == paths[0] and
              all(d["config"]["channels"] == 2 for d in devs),
              "%s: a \"devices\" entry per device, in order, each with its configuration log" %
              what)
        per = [[ph["ops"] for ph in d["phases"]] for d in devs]
        stores = [d["phases"][0]["device"]["sim_latency_us"]["store"]["count"] for d in devs]
        check(per == [[keys, ops]] * ndev and stores == [keys] * ndev,
              "%s: every device %d inserts (%d Stores in its log) and %d run ops (%s, %s)" %
              (what, keys, keys, ops, per, stores))
        for i, name in enumerate(("load", "run")):
            a = agg["phases"][i]
            sums = {k: sum(d["phases"][i]["op_counts"][k] for d in devs) for k in a["op_counts"]}
            longest = max(d["phases"][i]["device"]["sim_time_s"] for d in devs)
            check(a["phase"] == name and a["ops"] == ndev * (keys if i == 0 else ops) and
                  a["op_counts"] == sums and r["phases"][i]["ops"] == a["ops"] and
                  a["errors"] == 0 and a["mismatches"] == 0 and
                  a["device_time_s"] == longest and
                  # both printed to 6 digits after the point: within 1e-4 of each other
                  abs(a["ops_per_s_device_time"] / (a["ops"] / longest) - 1) < 1e-4,
                  "%s: %s: the aggregate is the devices' sum (%d ops), its device time the "
                  "longest device's (%s s)" % (what, name, a["ops"], a["device_time_s"]))
        want = [list(range(d, ndev * keys, ndev)) for d in range(ndev)]
        got = [listed_indexes(tmp, path) for path in paths]
        check(got == want,
              "%s: device i of %d holds exactly the key indexes i, i+%d, ... (%d each)" %
              (what, ndev, ndev, keys))


def main():
    with open(SCHEMA, encoding="utf-8") as f:
        validator = provenance_schema.validator(jsonschema.Draft7Validator, json.load(f))

    # 1. two and four devices, sync and io_uring, one and two threads each
    several(validator, 2, 1, [])
    several(validator, 4, 2, [])
    several(validator, 2, 1, ["--qd", "4"])

    with tempfile.TemporaryDirectory() as tmp:
        # 2. one device: the one-device report, no "devices" nor "aggregate"
        p = kvbench(tmp, *device_flags(devices(1)), "--keys", "50", "--ops", "50", "--json")
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        check(p.returncode == 0 and "devices" not in r and "aggregate" not in r and
              r["phases"][0]["device"]["sim_latency_us"]["store"]["count"] == 50,
              "one device: the one-device report, no \"devices\" nor \"aggregate\" (rc %d)" %
              p.returncode)

        # 3. the text report: a table per device, then the aggregate line
        p = kvbench(tmp, *device_flags(devices(2)), "--keys", "50", "--ops", "100")
        lines = [l for l in p.stdout.splitlines() if l.startswith("== run")]
        check(p.returncode == 0 and len(lines) == 3 and
              lines[0].startswith("== run on device 1 of 2, sim:d0.img,") and
              lines[1].startswith("== run on device 2 of 2, sim:d1.img,") and
              lines[2].startswith("== run on all 2 devices: 200 ops in ") and
              "ops/s wall clock; " in lines[2] and
              lines[2].endswith("ops/s aggregate device time"),
              "text: a table per device, then the aggregate's wall-clock and device-time "
              "line (%r)" % lines)

        # 4. the INI's device key as a ';' list (GKeyFile's separator); a flag replaces it
        ini = os.path.join(tmp, "multi.ini")
        with open(ini, "w", encoding="utf-8") as f:
            f.write("[benchmark]\ndevice = %s\n" % ";".join(devices(3)))
        p = kvbench(tmp, "--config", ini, "--keys", "20", "--ops", "20", "--json")
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        check(p.returncode == 0 and [d["device_path"] for d in r.get("devices", [])] ==
              devices(3), "INI: device = A;B;C runs on the three (rc %d)" % p.returncode)
        p = kvbench(tmp, "--config", ini, "--device", devices(1)[0], "--keys", "20", "--ops",
                    "20", "--json")
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        check(p.returncode == 0 and "devices" not in r and r["device_path"] == devices(1)[0],
              "a --device flag replaces the INI's list (rc %d)" % p.returncode)

        # 5. the refusals, in the tools' shape
        two = device_flags(devices(2))
        for args, want in (
                (["--engine", "rawhash", "--rawhash-dev", "rh.img"] + two,
                 "kvbench: engine is 'rawhash'; it must be kvssd alone with several devices "
                 "(2 given): the other engines run on one file system or raw device"),
                (["--engine", "kvssd,rocksdb"] + two,
                 "kvbench: engine is 'rocksdb'; it must be kvssd alone with several devices "
                 "(2 given): the other engines run on one file system or raw device"),
                (two + ["--device", devices(1)[0]],
                 "kvbench: device is '%s'; it must be given once (each device holds its own "
                 "keys)" % devices(1)[0]),
                (device_flags(["sim:%d.img" % i for i in range(17)]),
                 "kvbench: device is 'sim:16.img'; it must be one of at most 16 devices "
                 "(--device given more than once, or a ';' list)"),
                # --output: a kvbench that ran it anyway must not write the default path
                (["calibrate", "--output", "calibrate.conf"] + two,
                 "kvbench: device is '%s'; it must be one device for calibrate (several "
                 "devices are for run)" % ";".join(devices(2)))):
            if args[0] == "calibrate":
                p = subprocess.run([KVBENCH] + args, cwd=tmp, capture_output=True, text=True,
                                   timeout=120)
            else:
                p = kvbench(tmp, *args)
            want += "\n(run kvbench --help for usage)\n"  # a usage error (bench/usage.h)
            check(p.returncode == 2 and p.stderr == want and not p.stdout,
                  "refused with exit 2: %s (%r)" % (want, p.stderr))

    print("1..%d" % len(results))
    for i, (ok, what) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
