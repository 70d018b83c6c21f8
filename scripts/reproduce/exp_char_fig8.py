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
import verdicts as V

NAME = "char-fig8"
FIGURE = "Characterization Fig. 8"
PAPER = ("keys over 16 B need a second NVMe command; bandwidth falls (to 0.53x for larger "
         "keys), sync and async")
TARGET = "keys over 16 bytes cost the extra command"
SETUP = ("Device preset pm983 with latency=on (a completion waits for its simulated device "
         "time, so bandwidth includes the device's time per command), 4096-byte values by PRP, "
         "sequential Stores. ")

KEYS = [4, 8, 16, 17, 32, 64, 128, 255]
ENGINES = [("sync", 1), ("async", 16)]
VALUE = 4096
ROUNDS = 3
# run.py's scale for this experiment without --scale (all.sh, and so the page):
# every experiment fits all.sh's hour at it (docs/reproduce.md, "Scale")
DEFAULT_SCALE = 0.2
SCALE = "here 1 000 Stores per key length and engine, 3 interleaved rounds, at --scale 1"
PAPER_RATIO = 0.53
# The command count follows from the protocol's key field, which follows
# Samsung's command set: it is a property of the design, not a measurement.
PARAM_CMDS = ("the KV command set's 16-byte key field in CDW10-13 (docs/protocol.md, after "
              "Samsung's), with a Key Stage command for longer keys")
CRITERIA = {
    "commands": V.rule("yes if every Store takes 1 command with a key <= 16 B and 2 above "
                       "(within 0.01 per Store: a phase holds one command of kvbench's own)",
                       lambda ok: ok is True),
    # bandwidth of keys > 16 B over keys <= 16 B (mean of each group), per round
    "bw": V.Criterion("yes if within 25 % of 0.53 (0.40-0.66); partly if below 0.9 (falls, "
                      "magnitude outside); else no, judged in every round (a verdict that "
                      "differs between rounds is not measured)",
                      lambda x: abs(x - PAPER_RATIO) <= 0.25 * PAPER_RATIO,
                      lambda x: x < 0.9),
}


def boots(scale):
    n = C.scaled(1000, scale, lo=200)
    # ROUNDS interleaved rounds: every round is judged (verdicts.stable); the series keep
    # each point's best round
    steps = [C.Step("%s-k%d-r%d" % (eng, k, r), [("bench", C.kvbench(
        keys=n, key_size=k, value_size=VALUE, load_order="sequential", no_run=True, mode="prp",
        engine=eng, qd=qd))], meta={"engine": eng, "key": k, "ops": n, "round": r})
        for r in range(ROUNDS) for eng, qd in ENGINES for k in KEYS]
    return [C.Boot(NAME, steps, props={"preset": "pm983"}, latency=True, timeout_s=1800,
                   cpus=1)]


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
    rounds = round_ratios(raw)
    rec = {"series": pts, "round_ratios": rounds}
    if "sync" not in pts or len(pts["sync"]) < len(KEYS):
        rec.update(met=None, ours="incomplete run", why="some key lengths did not run",
                   claims=judge(pts, rounds))
        return rec
    s = pts["sync"]
    claims = judge(pts, rounds)
    rec["claims"] = claims
    rec["met"] = V.overall(claims)
    sp = {eng: V.spread(rounds.get(eng, [])) for eng, _ in ENGINES}
    rec["numbers"] = {"pcie_bytes_per_store_key16": round(s["16"]["pcie_bytes_per_op"], 1),
                      "pcie_bytes_per_store_key17": round(s["17"]["pcie_bytes_per_op"], 1)}
    for eng, _ in ENGINES:
        if sp[eng]:
            rec["numbers"]["bandwidth_ratio_%s_rounds_guest_clock" % eng] = [
                round(x, 3) for x in rounds[eng]]
    rec["ours"] = ("%s; PCIe bytes per Store %.0f -> %.0f from 16 to 17-byte keys; bandwidth "
                   "(guest clock) of >16 B keys over <=16 B: sync %s, async %s" % (
                       V.summarize(claims), s["16"]["pcie_bytes_per_op"],
                       s["17"]["pcie_bytes_per_op"], V.spread_text(sp["sync"]),
                       V.spread_text(sp["async"])))
    rec["why"] = ("the Key Stage command is counted by the device and moves the key by PRP, "
                  "i.e. one more 4 KiB DMA unit (%.0f -> %.0f PCIe bytes per Store), and it "
                  "costs a second passthrough round trip in the guest and the device's "
                  "per-command firmware time. Bandwidth is the guest's clock (under icount: "
                  "emulated instructions at 1 per ns plus the device's time the guest waits "
                  "for, latency=on), so the ratio weighs the guest kernel's per-command path "
                  "as TCG executes it, not a Xeon's; with async I/O (queue depth 16) the "
                  "second command overlaps others. The command count is the protocol's rule "
                  "(by construction)" % (s["16"]["pcie_bytes_per_op"],
                                         s["17"]["pcie_bytes_per_op"]))
    return rec


def round_ratios(raw):
    """{engine: [bandwidth of keys > 16 B / keys <= 16 B, one per round]} (guest clock)."""
    out = {}
    for eng, _ in ENGINES:
        for r in range(ROUNDS):
            short, long_ = [], []
            for k in KEYS:
                ph = C.phase(C.part(raw, NAME, "%s-k%d-r%d" % (eng, k, r), "bench"), "load")
                if not ph or ph.get("errors"):
                    continue
                (long_ if k > 16 else short).append(ph["ops_per_s"] * (VALUE + k))
            if short and long_:
                out.setdefault(eng, []).append(
                    (sum(long_) / len(long_)) / (sum(short) / len(short)))
    return out


def rejudge(rec):
    """The claims from a record's series (run.py --report-only --rejudge): the bandwidth
    claims need every round's ratio, which only a new run records."""
    return judge(rec.get("series") or {}, rec.get("round_ratios") or {})


def judge(pts, rounds):
    """Fig. 8's claims with ours beside them (criteria: CRITERIA, fixed before the run)."""
    def cmds_ok(eng):
        p = pts.get(eng, {})
        if len(p) < len(KEYS):
            return None
        # one command per phase besides the Stores (kvbench's own, e.g. 1 in 200 Stores = 0.005)
        return all(abs(p[str(k)]["commands_per_op"] - (2 if k > 16 else 1)) < 0.01 for k in KEYS)
    ok = [cmds_ok(eng) for eng, _ in ENGINES]
    measured = all(o is not None for o in ok)
    out = [V.by_construction(
        "keys larger than 16 B need two NVMe commands per operation", "2 commands above 16 B",
        ("1 command per Store up to 16 B, 2 above (sync and async)" if all(ok) else
         "command counts differ from 1 / 2: see the series") if measured else "n/a",
        CRITERIA["commands"], PARAM_CMDS, measured=measured,
        would_hold=CRITERIA["commands"].judge(all(ok)) if measured else None)]
    for eng, label in (("sync", "synchronous"), ("async", "asynchronous (QD 16)")):
        out.append(V.stable("bandwidth falls for keys over 16 B, to 0.53x (%s)" % label,
                            "0.53x", rounds.get(eng, []), CRITERIA["bw"], "%.2fx",
                            note="guest clock"))
    return out


def plot(rec, figdir):
    fig, (a1, a2) = C.figure(2, (11, 4.2))
    for eng, _ in ENGINES:
        s = rec["series"].get(eng, {})
        if not s:
            continue
        ks = sorted(int(k) for k in s)
        short = [s[str(k)]["guest_mb_per_s"] for k in ks if k <= 16]
        base = sum(short) / len(short) if short else float("nan")
        a1.plot(ks, [s[str(k)]["guest_mb_per_s"] / base for k in ks], marker="o",
                label="%s (best round)" % eng)
        C.plot_series(a2, s, "commands_per_op", label=eng)
    C.paper_mark(a1, 32, PAPER_RATIO, label="paper: 0.53x for larger keys")
    a1.axhline(1, c="gray", lw=0.8, ls=":")
    a1.set_ylim(0, 1.3)
    a1.set_ylabel("bandwidth / mean of keys <= 16 B (guest clock, linear)")
    a1.set_title("Fig. 8: Store bandwidth by key length, 4 KiB values")
    a2.set_ylabel("NVMe commands per Store (device count)")
    a2.set_ylim(0, 2.5)
    a2.set_title("commands per Store (by construction)")
    for a in (a1, a2):
        a.set_xscale("log", base=2)
        a.axvline(16.5, ls="--", c="gray", lw=0.8)
        a.set_xlabel("key length (bytes)")
        C.legend_outside(a)
    C.caption(fig, "Device: kvssd preset pm983, latency=on; 4 KiB values by PRP; %d rounds; %s; "
                   "bandwidth is the guest's clock, "
                   "commands are device counts." % (ROUNDS, C.scale_text(rec)))
    return [C.save(fig, figdir, "char-fig8-key-length.png")]
