# SPDX-License-Identifier: GPL-2.0-or-later
"""Characterization paper Fig. 8: bandwidth vs key length.

4 KiB values stored by PRP with keys of 4 ... 255 bytes, synchronously
(queue depth 1) and asynchronously (io_uring, queue depth 16). The device
counts the commands it completed and the Key Stage commands among them
(a key over 16 bytes does not fit CDW10-13 and is staged by an extra
command first). Bandwidth is the guest's wall clock (the paper measured
host-side bandwidth; the device's own time per command is nanoseconds),
so only its ratio between key lengths is meaningful under TCG.
"""

import common as C

NAME = "char-fig8"
FIGURE = "Characterization Fig. 8"
PAPER = ("keys over 16 B need a second NVMe command; bandwidth falls (to 0.53x for larger "
         "keys), sync and async")
TARGET = "keys over 16 bytes cost the extra command"
SETUP = "Device preset pm983, 4096-byte values by PRP, sequential Stores. "

KEYS = [4, 8, 16, 17, 32, 64, 128, 255]
ENGINES = [("sync", 1), ("async", 16)]
VALUE = 4096
ROUNDS = 3
SCALE = "here 1 000 Stores per key length and engine, best of 3 rounds, at --scale 1"


def boots(scale):
    n = C.scaled(1000, scale, lo=200)
    # ROUNDS interleaved rounds; each point's best round counts (TCG timing noise)
    steps = [C.Step("%s-k%d-r%d" % (eng, k, r), [("bench", C.kvbench(
        keys=n, key_size=k, value_size=VALUE, load_order="sequential", no_run=True, mode="prp",
        engine=eng, qd=qd))], meta={"engine": eng, "key": k, "ops": n, "round": r})
        for r in range(ROUNDS) for eng, qd in ENGINES for k in KEYS]
    return [C.Boot(NAME, steps, props={"preset": "pm983"}, timeout_s=1800, cpus=1)]


def analyze(raw, scale):
    pts = {}
    for eng, _ in ENGINES:
        for k in KEYS:
            ph = C.best_phase(raw, NAME, ["%s-k%d-r%d" % (eng, k, r) for r in range(ROUNDS)])
            if not ph:
                continue
            dev = ph["device"]
            pts.setdefault(eng, {})[str(k)] = {
                "ops": ph["ops"],
                "commands_per_op": C.per_op(dev["commands"], ph["ops"]),
                "key_stage_per_op": C.per_op(dev["key_stage_commands"], ph["ops"]),
                "pcie_bytes_per_op": C.per_op(C.io_pcie_bytes(dev), ph["ops"]),
                "guest_mb_per_s": ph["ops_per_s"] * (VALUE + k) / 1e6,
            }
    rec = {"series": pts}
    if "sync" not in pts or len(pts["sync"]) < len(KEYS):
        rec.update(met=None, ours="incomplete run", why="some key lengths did not run")
        return rec
    s = pts["sync"]
    extra_ok = all(abs(s[str(k)]["commands_per_op"] - (2 if k > 16 else 1)) < 1e-9 for k in KEYS)
    if "async" in pts and len(pts["async"]) == len(KEYS):
        extra_ok = extra_ok and all(abs(pts["async"][str(k)]["commands_per_op"] -
                                        (2 if k > 16 else 1)) < 1e-9 for k in KEYS)

    def ratio(eng):
        p = pts.get(eng, {})
        short = [p[str(k)]["guest_mb_per_s"] for k in KEYS if k <= 16 and str(k) in p]
        long_ = [p[str(k)]["guest_mb_per_s"] for k in KEYS if k > 16 and str(k) in p]
        if not short or not long_:
            return float("nan")
        return (sum(long_) / len(long_)) / (sum(short) / len(short))

    rs, ra = ratio("sync"), ratio("async")
    rec["numbers"] = {"commands_per_store_key_le_16": 1 if extra_ok else "see series",
                      "commands_per_store_key_gt_16": 2 if extra_ok else "see series",
                      "pcie_bytes_per_store_key16": round(s["16"]["pcie_bytes_per_op"], 1),
                      "pcie_bytes_per_store_key17": round(s["17"]["pcie_bytes_per_op"], 1),
                      "bandwidth_ratio_long_vs_short_sync_guest_wall": round(rs, 3),
                      "bandwidth_ratio_long_vs_short_async_guest_wall": round(ra, 3)}
    rec["ours"] = ("%s; PCIe bytes per Store %.0f -> %.0f from 16 to 17-byte keys; bandwidth "
                   "(guest wall clock) of >16 B keys %.2fx sync, %.2fx async of <=16 B" % (
                       "1 command per Store for keys <= 16 B, 2 (Key Stage + Store) above"
                       if extra_ok else "command counts differ from 1/2",
                       s["16"]["pcie_bytes_per_op"], s["17"]["pcie_bytes_per_op"], rs, ra))
    rec["met"] = extra_ok
    rec["why"] = ("the Key Stage command is counted by the device, and it moves the key by PRP, "
                  "i.e. one more 4 KiB DMA unit (4184 -> 8368 PCIe bytes per Store); the "
                  "bandwidth drop is smaller "
                  "than the paper's 0.53x because a TCG guest spends most of each Store moving "
                  "the 4 KiB value and in the kernel, so one more 64-byte command costs "
                  "relatively less than on real hardware" if rs > 0.6 else
                  "the Key Stage command is counted by the device (and moves the key as one more "
                  "4 KiB DMA unit); bandwidth falls as on the PM983")
    return rec


def plot(rec, figdir):
    fig, (a1, a2) = C.figure(2, (10, 3.6))
    for eng, _ in ENGINES:
        s = rec["series"].get(eng, {})
        C.plot_series(a1, s, "guest_mb_per_s", label=eng)
        C.plot_series(a2, s, "commands_per_op", label=eng)
    for a in (a1, a2):
        a.set_xscale("log", base=2)
        a.axvline(16.5, ls="--", c="gray", lw=0.8)
        a.set_xlabel("key length (bytes)")
        a.legend()
    a1.set_ylabel("MB/s (guest wall clock)")
    a1.set_title("Fig. 8: Store bandwidth, 4 KiB values")
    a2.set_ylabel("NVMe commands per Store (device count)")
    a2.set_title("commands per Store")
    return [C.save(fig, figdir, "char-fig8-key-length.png")]
