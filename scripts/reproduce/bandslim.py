# SPDX-License-Identifier: GPL-2.0-or-later
"""What the BandSlim experiments (exp_bandslim_*.py) share: the Cosmos+
device's firmware time, device-bound (dilated) properties, the response
times read from the device, and the marks and criteria their figures and
claims use.

Response time here is *device time*: the firmware's simulated time per
Store (kvftl's firmware-time model, docs/kvftl.md "Firmware time", with the
cosmos preset's Cosmos+ ARM estimates). Two readings:

* transfer response time (BandSlim Figs. 3a, 8, 9b, 10a, which the paper
  measured with NAND I/O disabled): the mean simulated latency of a Store
  (kvbench's device.sim_latency_us.store.mean) on the cosmos preset with
  latency=on: each completion is held until its simulated time, so the
  guest (QD1, sync) issues the next Store only then, a closed loop whatever
  the guest's pace (with latency=off a guest faster than the device, as the
  pci transport under icount is, queues Stores and the mean grows with the
  run). These boots run with sync-programs off (TRANSFER_PROPS): programs
  go on in the background and the 512-entry page buffer absorbs every one
  of such a run, so no Store waits for NAND, as with NAND I/O disabled: the
  latency is the firmware's CPU time for the command (fetch and decode,
  inline transfer commands, index probes, DMA setups, memcpy, completion).
* write response time (Figs. 4a, 11b, 12a, NAND I/O enabled): device time
  per Store with the device the bottleneck, a QD1 host that takes no time
  of its own. Every device time (NAND, channel, memcpy rate and the five
  firmware times) is stretched by DILATION, so the TCG guest issues Stores
  faster than the device completes them; a warm-up phase fills the page
  buffer, and the measured phase's simulated time per Store, divided by
  DILATION, is the steady-state time per Store at queue depth 1. The
  preset's sync-programs is on (BandSlim's firmware, tunables.def): a Store
  whose append programs a page busy-waits until the NAND is idle, so pages
  program one at a time, each on a Store's time.

BandSlim's own response times are host-measured and include its driver's
synchronous round trip per command, which is not device time: where the
paper's number depends on that, the claim's note says so.
"""

import common as C

# the cosmos preset's firmware times (docs/properties.md, tunables.def;
# sources in docs/kvftl.md "Firmware time"), part of common.COSMOS_TIMING
COSMOS_FW = {k: C.COSMOS_TIMING[k] for k in C.FW_TIMES}

# The transfer response time's boots (Figs. 3a, 8, 9b, 10a: "We disabled NAND I/O", §4.2):
# the cosmos preset with its programs in the background, none on a Store's time.
TRANSFER_PROPS = {"preset": "cosmos", "sync-programs": "off"}

# 200: the channel rate (200 B/us) divides exactly, and a Store's ~5 us of
# firmware time becomes ~1 ms, several times what the guest takes per Store
DILATION = 200

DEVICE_CAPTION = ("device: cosmos preset (Cosmos+ OpenSSD: 4 channels x 8 dies, 16 KiB pages, "
                  "tPROG 1 ms, firmware times of docs/kvftl.md)")


# kvbench's BandSlim presets' value mixes (host/kvbench/config.c preset_bandslim):
# spelled out where a run phase follows the load, which the presets switch off
WORKLOAD_VALUES = {
    "B": "weighted:8:9,2048:1",
    "C": "weighted:8:1,2048:9",
    "D": "weighted:8:1,16:1,32:1,64:1,128:1,256:1,512:1,1024:1,2048:1",
    "M": "mixgraph:max=1024",
}


def workload_bench(w, warm, run, **kw):
    """kvbench for workload w (4-byte keys in random order, the preset's value
    mix): a warm-up load of warm Stores, then a run phase of run inserts."""
    return C.kvbench(keys=warm, ops=run, mix="insert=1", key_size=4, load_order="uniform",
                     value_size=WORKLOAD_VALUES[w], **kw)


def dilated_cosmos(factor=DILATION, **extra):
    """The cosmos preset with every device time (NAND, channel, memcpy and
    firmware) stretched by factor; tBERS stays (nothing is erased in these
    runs, but the Format between steps waits for its erases)."""
    props = C.dilated(dict(C.COSMOS_TIMING), factor)  # the fw-* times with the rest
    props["erase-latency-ns"] = C.COSMOS_TIMING["erase-latency-ns"]
    props["preset"] = "cosmos"
    props.update(extra)
    return props


# A device-bound phase's clock is the statistics log's sim_now_ns, the latest completion the
# device has scheduled, NAND programs included: when the phase begins, a page program may
# already be scheduled up to a tPROG or two ahead, and the phase's own work hides behind
# it. A phase of 120 Stores of ~4 us (0.48 ms) is shorter than one tPROG (1 ms): its time
# per Store came out below the firmware's floor (bandslim-fig11's Piggy+Pack, 2.73 us) or
# in steps of tPROG / Stores (bandslim-fig4, 4 and 8 KiB both 20.0 us). A measured phase
# spans at least RT_PROGS tPROG of device time, so that error stays within 2 / RT_PROGS.
RT_PROGS = 40

# The same clock after a Format: its erases (tBERS, not dilated, die by die) are scheduled
# behind the previous step's backlog, and a step's Stores that complete before that horizon
# do not move sim_now_ns. Every device-bound step therefore settles after its Format
# (common.settle: 30 s, past the erases of every block, 256 a die x 3.5 ms = 0.9 s, then a
# Flush): free under icount, whose sleeps cost no host time. Without it the lsm design's
# Piggy+Pack at 32 B came out at about 0.1 us per Store (bandslim-fig11, 2026-12-02).
SETTLE = ("settle", C.settle(30, 5))


def device_bound_ops(floor_us, progs=RT_PROGS):
    """Stores for a device-bound phase to span at least progs tPROG of device time, each
    Store taking at least floor_us (its firmware time, undilated)."""
    tprog_us = C.COSMOS_TIMING["program-latency-ns"] / 1000.0
    return int(-(-progs * tprog_us // floor_us))


def store_floor_us(value_bytes, inline_cmds=1):
    """A Store's firmware time on the cosmos preset, lower bound (us): fetch and decode,
    one index probe, completion, and per extra inline command one transfer (inline), or
    one DMA setup per 4 KiB unit (prp, inline_cmds=0)."""
    t = sum(COSMOS_FW[k] for k in ("fw-fetch-decode-ns", "fw-index-probe-ns",
                                   "fw-completion-ns"))
    if inline_cmds:
        t += (inline_cmds - 1) * COSMOS_FW["fw-inline-fragment-ns"]
    else:
        t += -(-max(1, value_bytes) // 4096) * COSMOS_FW["fw-dma-setup-ns"]
    return t / 1000.0


def store_latency_us(ph):
    """A phase's mean simulated Store latency (us), None without one."""
    try:
        x = ph["device"]["sim_latency_us"]["store"]["mean"]
    except (KeyError, TypeError):
        return None
    return x if x else None


def per_store_us(ph, factor=DILATION):
    """Device time per operation of a device-bound phase, undilated (us)."""
    dev = ph.get("device") if ph else None
    if not dev or not ph.get("ops"):
        return None
    return dev["sim_time_s"] / ph["ops"] * 1e6 / factor


def ratio(a, b):
    if a is None or b is None or not b:
        return float("nan")
    return a / b


def points_near(paper, yes_pts, partly_pts, unit=" %"):
    """A criterion on a percentage: yes within yes_pts points of paper,
    partly within partly_pts."""
    import verdicts as V
    return V.rule("yes if within %g points of %g%s (%g-%g%s); partly within %g points; else no" % (
        yes_pts, paper, unit, paper - yes_pts, min(100, paper + yes_pts), unit, partly_pts),
        lambda x: abs(x - paper) <= yes_pts, lambda x: abs(x - paper) <= partly_pts)


def band_crit(lo, hi, plo=None, phi=None, what="", fmt="%.3g"):
    """yes when lo <= x <= hi; partly when plo <= x <= phi (when given)."""
    import verdicts as V
    text = ("yes if %s" + fmt + "-" + fmt) % (what + " " if what else "", lo, hi)
    partly = None
    if plo is not None:
        text += ("; partly if " + fmt + "-" + fmt) % (plo, phi)
        partly = lambda x: plo <= x <= phi  # noqa: E731
    return V.rule(text + "; else no", lambda x: lo <= x <= hi, partly)


def mark(ax, x, y, text, **kw):
    """The paper's value on a figure: a star and its label."""
    ax.plot([x], [y], marker="*", ms=11, color="black", ls="none", zorder=5, **kw)
    ax.annotate(text, (x, y), textcoords="offset points", xytext=(6, 6), fontsize=7)
