# SPDX-License-Identifier: GPL-2.0-or-later
"""Characterization paper: the maximum number of pairs (~3.1 billion on a
3.84 TB PM983 KV-SSD) and the space amplification of small pairs (up to 20x).

Scaled down: the pm983 preset on a small geometry (GEOMETRY, 48 MiB raw).
The guest reads the namespace's maximum number of keys (`kvssd info`
max_keys, Identify KVMNK: the device property max-keys, whose default is
the user capacity / the 1 KiB placement unit) and its user capacity
(nsze_bytes), then stores OVER x max_keys pairs of 16-byte keys, so the
fill runs into the device's limit: with the paper's 512-byte values (its
Fig. 3 fill) and with 20-byte values (below the paper's smallest, 50 B).
Pairs stored = Stores that succeeded; the count per byte of user capacity,
times 3.84 TB, is the drive's count. Space amplification = live NAND bytes
/ live key+value bytes (`kvssd stats`) at the end of each fill.

Both results follow from the pm983 preset's placement-unit-bytes = 1024,
chosen from the paper's own "1KB padding" (Fig. 7): they are labelled by
construction (verdicts.BY_CONSTRUCTION) and not counted as yes.
"""

import common as C
import verdicts as V

NAME = "char-maxkeys"
FIGURE = "Characterization §IV (max pairs, space amplification)"
PAPER = ("the maximum number of pairs on a 3.84 TB PM983 KV-SSD is ~3.1 billion; small pairs "
         "see up to 20x space amplification (1 KiB padding)")
TARGET = ("a fill to max-keys on a scaled pm983: pairs per byte of capacity, scaled to 3.84 TB, "
          "and the space amplification of 20-byte values (by construction: placement unit)")
# an erase stripe must hold the largest blob (2 MiB + header): 2 dies x 64 pages of 32 KiB
GEOMETRY = {"channels": 1, "dies-per-channel": 2, "blocks-per-die": 12, "pages-per-block": 64}
SETUP = ("Device preset pm983 with channels=1, dies-per-channel=2, blocks-per-die=12, "
         "pages-per-block=64 (48 MiB raw); 16-byte keys, sequential Stores past max-keys. ")
OVER = 1.05
DRIVE_BYTES = 3.84e12
PAPER_PAIRS = 3.1e9
VALUES = [512, 20]
PARAM = ("the pm983 preset's placement-unit-bytes = 1024 (the paper's \"1KB padding\", Fig. 7) "
         "and max-keys' default, user capacity / placement unit")
SCALE = ("paper: a 3.84 TB drive filled to its limit; here a 48 MiB device filled to %.2fx its "
         "max-keys (~%d pairs per fill), at any --scale" % (OVER, 40000))

_FIELD = "$(kvssd info -d /dev/ng0n1 --json | sed -n 's/.*\"%s\":\\([0-9]*\\).*/\\1/p')"


def boots(scale):
    steps = []
    for v in VALUES:
        fill = ("N=$(( %s * %d / 100 )); " % (_FIELD % "max_keys", round(OVER * 100)) +
                C.kvbench(keys="$N", key_size=16, value_size=v, load_order="sequential",
                          no_run=True, mode="prp").replace("'$N'", "$N"))
        steps.append(C.Step("v%d" % v, [("info", C.INFO), ("fill", fill), ("stats", C.STATS),
                                        ("after", C.INFO)], meta={"value": v}))
    props = {"preset": "pm983"}
    props.update(GEOMETRY)
    return [C.Boot(NAME, steps, props=props, timeout_s=1800)]


def _json(raw, step, part):
    """A part's JSON even when the command exited non-zero (kvbench exits 3
    when Stores failed, which a fill past the limit makes happen)."""
    p = (raw.get(NAME) or {}).get("parts", {}).get(step + "/" + part)
    return p.get("json") if p else None


def analyze(raw, scale):
    pts = {}
    for v in VALUES:
        info, fill, st = (_json(raw, "v%d" % v, k) for k in ("info", "fill", "stats"))
        ph = C.phase(fill, "load") if fill else None
        if not (info and ph and st):
            continue
        stored = ph["ops"] - ph["errors"]
        pts[str(v)] = {"max_keys": info.get("max_keys"), "nsze_bytes": info.get("nsze_bytes"),
                       "attempted": ph["ops"], "stored": stored, "live_keys": st.get("live_keys"),
                       "pairs_per_tb": stored / info["nsze_bytes"] * 1e12
                       if info.get("nsze_bytes") else None,
                       "space_amp": st["live_nand_bytes"] / st["live_user_bytes"]
                       if st.get("live_user_bytes") else None}
    rec = {"series": pts}
    p512, p20 = pts.get("512"), pts.get("20")
    drive = p512["pairs_per_tb"] * DRIVE_BYTES / 1e12 if p512 else None
    claims = [
        V.by_construction("A 3.84 TB PM983 KV-SSD holds at most ~3.1 billion pairs (16 B keys, "
                          "512 B values; ours: pairs stored per byte of user capacity x 3.84 TB)",
                          "3.1 billion", "%.2f billion" % (drive / 1e9) if drive else "n/a",
                          V.within(3.1, 0.15, 0.3, " billion").text, PARAM,
                          measured=drive is not None),
        V.by_construction("Small pairs see up to 20x space amplification (16 B keys, 20 B "
                          "values at the fill's end)", "up to 20x",
                          "%.1fx" % p20["space_amp"] if p20 and p20["space_amp"] else "n/a",
                          V.within(20, 0.25, unit="x").text, PARAM,
                          measured=bool(p20 and p20["space_amp"])),
    ]
    rec["claims"] = claims
    rec["met"] = V.overall(claims)
    if not p512:
        rec.update(ours="incomplete run", why="the 512-byte fill did not run")
        return rec
    rec["numbers"] = {"max_keys (KVMNK)": p512["max_keys"], "nsze_bytes": p512["nsze_bytes"],
                      "pairs stored, 512 B values": p512["stored"],
                      "pairs stored, 20 B values": p20["stored"] if p20 else None,
                      "bytes of capacity per pair": round(p512["nsze_bytes"] / p512["stored"], 1),
                      "paper: bytes per pair": round(DRIVE_BYTES / PAPER_PAIRS, 1),
                      "space amplification at the fill, 512 B / 20 B values": "%.2f / %s" % (
                          p512["space_amp"], C.fmt(p20["space_amp"], 1) if p20 else "n/a")}
    rec["ours"] = ("%s; %d of %d pairs stored (max-keys %d): %.2f billion on 3.84 TB, %.0f bytes "
                   "of capacity per pair against the paper's %.0f" % (
                       V.summarize(claims), p512["stored"], p512["attempted"],
                       p512["max_keys"], drive / 1e9, p512["nsze_bytes"] / p512["stored"],
                       DRIVE_BYTES / PAPER_PAIRS))
    rec["why"] = ("every pair smaller than 1 KiB takes one 1 KiB placement unit, and max-keys "
                  "defaults to the user capacity / 1 KiB, so the device holds ~1 pair per KiB "
                  "of capacity whatever the value size (20 B and 512 B values stop at the same "
                  "count); the paper's drive holds one per ~1.24 KB. Both follow from the "
                  "placement unit chosen from the paper's 1 KiB padding")
    return rec


def plot(rec, figdir):
    pts = rec["series"]
    fig, (a1, a2) = C.figure(2, (10, 3.8))
    vs = [v for v in ("20", "512") if v in pts]
    a1.bar(range(len(vs)), [pts[v]["nsze_bytes"] / pts[v]["stored"] for v in vs],
           label="ours: capacity bytes per pair stored")
    a1.axhline(DRIVE_BYTES / PAPER_PAIRS, color="black", ls="--",
               label="paper: 3.84 TB / 3.1 billion")
    a1.set_xticks(range(len(vs)))
    a1.set_xticklabels(["%s B values" % v for v in vs])
    a1.set_ylabel("bytes of user capacity per pair (linear)")
    a1.set_title("Max pairs: the fill to max-keys")
    a1.legend(fontsize=7)
    a2.bar(range(len(vs)), [pts[v]["space_amp"] or 0 for v in vs], label="ours")
    a2.axhline(20, color="black", ls="--", label="paper: up to 20x")
    a2.set_xticks(range(len(vs)))
    a2.set_xticklabels(["%s B values" % v for v in vs])
    a2.set_ylabel("space amplification (linear)")
    a2.set_title("Space amplification at the fill")
    a2.legend(fontsize=7)
    fig.suptitle("device: pm983 preset (1 KiB placement unit), 1 channel x 2 dies, 12 blocks x 64 "
                 "pages of 32 KiB (48 MiB raw); 16 B keys; by construction", fontsize=8)
    return [C.save(fig, figdir, "char-maxkeys.png")]
