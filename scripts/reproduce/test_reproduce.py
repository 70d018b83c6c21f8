#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of the reproduction harness: parsing, numbers, plots, page.

Run: /usr/bin/python3 scripts/reproduce/test_reproduce.py  (no guest needed)

testdata/bandslim-fig8-guest.out is recorded output of a real guest run of
exp_bandslim_fig8 at --scale 0.1 (100 Stores per point): the prp points of
every size and the inline/adaptive points of 4-32 B, with the markers the
guest script prints.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common as C  # noqa: E402
import exp_bandslim_fig8 as F8  # noqa: E402
import report  # noqa: E402


def recorded():
    with open(os.path.join(HERE, "testdata", "bandslim-fig8-guest.out")) as f:
        return f.read()


class ParseOutput(unittest.TestCase):
    def test_markers_split_parts(self):
        """Recorded run: 15 prp + 4 inline + 4 adaptive parts, all exit 0 with a JSON object."""
        parts = C.parse_output(recorded())
        self.assertEqual(len(parts), 23)
        self.assertTrue(all(p["rc"] == 0 and p["json"] for p in parts.values()))
        self.assertEqual(parts["prp-32/bench"]["json"]["transfer_mode"], "prp")
        self.assertEqual(parts["inline-32/bench"]["json"]["value_size"], "fixed:32")

    def test_noise_between_parts_is_ignored(self):
        """Console noise outside markers is dropped; text inside a part keeps its JSON."""
        text = ("[  1.2] nvme nvme0: 1/0/0 queues\n@@RP BEGIN s/a\nwarning: x\n"
                "{\"a\": 1}\n@@RP END s/a 0\nstray\n")
        parts = C.parse_output(text)
        self.assertEqual(list(parts), ["s/a"])
        self.assertEqual(parts["s/a"]["json"], {"a": 1})

    def test_failed_command_keeps_status_and_text(self):
        """A command that fails: its exit status and message, no JSON."""
        parts = C.parse_output("@@RP BEGIN s/b\nkvbench: bad flag\n@@RP END s/b 2\n")
        self.assertEqual(parts["s/b"]["rc"], 2)
        self.assertIsNone(parts["s/b"]["json"])
        self.assertIn("bad flag", parts["s/b"]["text"])

    def test_guest_stopped_inside_a_command(self):
        """No END marker (QEMU killed by --timeout): rc is None, partial JSON is not invented."""
        parts = C.parse_output("@@RP BEGIN s/c\n{\"phases\": [\n")
        self.assertIsNone(parts["s/c"]["rc"])
        self.assertIsNone(parts["s/c"]["json"])

    def test_series_part_keeps_every_sample(self):
        """A part named */series keeps one object per line, in order."""
        text = ("@@RP BEGIN g/series\n{\"stores\": 1}\n{\"stores\": 5}\n"
                "{\"phases\": []}\n@@RP END g/series 0\n")
        parts = C.parse_output(text)
        self.assertEqual([j.get("stores") for j in parts["g/series"]["jsons"]], [1, 5, None])


    def test_console_drops_marked_parts(self):
        """What a person reads: the lines outside the parts, the markers and JSON left out."""
        text = ["boot\n", "@@RP BEGIN M\n", "{\"a\": 1}\n", "@@RP END M 0\n", "--- info\n",
                "@@RP BEGIN x\n", "{\n"]
        self.assertEqual(list(C.console(text)), ["boot\n", "--- info\n"])

    def test_rp_function_brackets_a_command(self):
        """The sh function rp, run by sh: each part's JSON and exit status come back through
        parse_output; under set -e a failing command still ends its part, then stops the script."""
        script = (C.RP_FUNCTION + "\nset -e\nrp ok 'echo {\\\"n\\\": 7}'\n"
                  "rp bad 'echo nope; exit 3'\necho after\n")
        p = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
        self.assertEqual(p.returncode, 3)
        self.assertNotIn("after", p.stdout)
        parts = C.parse_output(p.stdout)
        self.assertEqual(parts["ok"], {"rc": 0, "json": {"n": 7}, "text": '{"n": 7}'})
        self.assertEqual(parts["bad"]["rc"], 3)
        self.assertIsNone(parts["bad"]["json"])


class Numbers(unittest.TestCase):
    def dev(self, name):
        return C.parse_output(recorded())[name]["json"]["phases"][0]

    def test_prp_store_traffic_is_one_sqe_cqe_doorbells_and_a_4k_unit(self):
        """prp 32 B: 64 (SQE) + 16 (CQE) + 8 (doorbells) + 4096 (one DMA unit) = 4184 per Store,
        once kvbench's own Get Log Page (88 B + 4096 B log) is taken out."""
        ph = self.dev("prp-32/bench")
        self.assertEqual(C.admin_commands(ph["device"]), 1)
        self.assertEqual(C.io_pcie_bytes(ph["device"]), 4184 * ph["ops"])

    def test_inline_32_bytes_is_two_commands(self):
        """inline 32 B with a 4-byte key: head (20 B) + one transfer (12 B) = 2 x 88 bytes."""
        ph = self.dev("inline-32/bench")
        self.assertEqual(ph["device"]["commands"], 2 * ph["ops"])
        self.assertEqual(C.io_pcie_bytes(ph["device"]), 176 * ph["ops"])

    def test_inline_command_counts_follow_docs(self):
        """docs/host.md: 1 + ceil((v - 20) / 28) with a 4-byte key; 2 MiB is 74 899 commands."""
        self.assertEqual(C.inline_commands(20), 1)
        self.assertEqual(C.inline_commands(21), 2)
        self.assertEqual(C.inline_commands(48), 2)
        self.assertEqual(C.inline_commands(49), 3)
        self.assertEqual(C.inline_commands(2 * 1024 * 1024), 74899)
        self.assertEqual(C.inline_commands(8, key_bytes=16), 1)   # 24 - 16 = 8 bytes in the head
        self.assertEqual(C.inline_commands(21, key_bytes=17), 2)  # staged key: 20 in the head

    def test_reduction_and_budget(self):
        self.assertAlmostEqual(C.reduction(88, 4184), 97.8967, places=3)
        self.assertEqual(C.ops_for_budget(586, 30000, 100, 1000), 100)
        self.assertEqual(C.ops_for_budget(1, 30000, 100, 1000), 1000)
        self.assertEqual(C.ops_for_budget(37, 30000, 100, 1000), 810)

    def test_dilation_keeps_ratios(self):
        """x1000: times multiplied, rates divided (rounded up to 1 B/us)."""
        p = C.dilated(dict(C.COSMOS_TIMING), 1000)
        self.assertEqual(p["program-latency-ns"], 1000000000)
        self.assertEqual(p["read-latency-ns"], 60000000)
        self.assertEqual(p["dram-copy-bytes-per-us"], 1)
        self.assertEqual(p["channel-bytes-per-us"], 1)


    def test_best_phase_of_rounds(self):
        """Rounds r0-r2: r1 had an error, r2 did not run; the best of the rest is r0's 300/s."""
        def bench(ops_per_s, errors):
            return {"phases": [{"phase": "load", "ops_per_s": ops_per_s, "errors": errors,
                                "device": {"commands": 1}}]}
        parts = {"s-r0/bench": {"rc": 0, "json": bench(300, 0)},
                 "s-r1/bench": {"rc": 0, "json": bench(900, 1)},
                 "s-r3/bench": {"rc": 0, "json": bench(200, 0)}}
        raw = {"b": {"parts": parts}}
        ph = C.best_phase(raw, "b", ["s-r0", "s-r1", "s-r2", "s-r3"])
        self.assertEqual(ph["ops_per_s"], 300)
        self.assertIsNone(C.best_phase(raw, "b", ["s-r1", "s-r2"]))


class Plots(unittest.TestCase):
    def test_plot_series_sorts_the_numeric_keys(self):
        """Points keyed "64", "8", "1024" are drawn at 8, 64, 1024 with round markers."""
        calls = []

        class Axes:
            def plot(self, *a, **kw):
                calls.append((a, kw))
        s = {"64": {"y": 2}, "8": {"y": 1}, "1024": {"y": 3}}
        self.assertEqual(C.plot_series(Axes(), s, "y", label="m"), [8, 64, 1024])
        self.assertEqual(calls, [(([8, 64, 1024], [1, 2, 3]), {"marker": "o", "label": "m"})])

    def test_figure_has_the_columns_asked(self):
        fig, axs = C.figure(3, (9, 3))
        self.assertEqual(len(axs), 3)
        self.assertEqual(list(fig.get_size_inches()), [9, 3])
        fig, ax = C.figure(figsize=(6.5, 3.8))
        self.assertTrue(hasattr(ax, "plot"))


class Commands(unittest.TestCase):
    def test_kvbench_flags(self):
        cmd = C.kvbench(preset="B", keys=5000, mode="adaptive", no_run=True, engine=None)
        self.assertEqual(cmd, "kvbench --json --progress off --preset B --keys 5000 "
                              "--mode adaptive --no-run --seed 1")

    def test_guest_script_and_argv(self):
        """One boot: a format before each fresh step, markers around every command; props
        sorted into --prop flags; --latency only when asked."""
        b = C.Boot("x", [C.Step("s1", [("bench", "kvbench --json"), ("stats", C.STATS)]),
                         C.Step("s2", [("bench", "true")], fresh=False)],
                   props={"packing": "all", "preset": "cosmos"})
        sh = C.guest_script(b)
        self.assertEqual(sh.count("kvssd format --yes"), 1)
        self.assertIn("rp s1/bench 'kvbench --json'", sh)
        self.assertIn("rp s1/stats 'kvssd stats --json'", sh)
        self.assertIn("rp s2/bench true", sh)
        argv = C.run_guest_argv(b, "/tmp/s.sh")
        self.assertEqual(argv[-6:], ["--prop", "packing=all", "--prop", "preset=cosmos",
                                     "--script", "/tmp/s.sh"])
        self.assertNotIn("--latency", argv)
        self.assertEqual(argv[-2:], ["--script", "/tmp/s.sh"])


class Fig8FromRecording(unittest.TestCase):
    def setUp(self):
        parts = C.parse_output(recorded())
        self.raw = {F8.NAME: {"parts": parts}}
        self.rec = F8.analyze(self.raw, 0.1)

    def test_reductions(self):
        """4-16 B: one inline command (88 B) vs 4184 B = 97.9 %; 32 B: 176 B = 95.8 %."""
        self.assertEqual(self.rec["inline_reduction_pct"]["4"], 97.9)
        self.assertEqual(self.rec["inline_reduction_pct"]["16"], 97.9)
        self.assertEqual(self.rec["inline_reduction_pct"]["32"], 95.79)
        self.assertEqual(self.rec["met"], "partly")
        self.assertIn("CDW2-3 and CDW10-15", self.rec["why"])

    def test_staircase(self):
        """prp: flat to 4 KiB; +4096 at 6 and 8 KiB; +8192 and +12288 (+ PRP list) at 12/16 KiB."""
        st = self.rec["staircase"]
        self.assertTrue(st["flat_below_4k"])
        e = st["extra_bytes_at_6k_8k_12k_16k"]
        self.assertEqual(e[:2], [4096, 4096])
        self.assertTrue(8192 <= e[2] < 8192 + 64 and 12288 <= e[3] < 12288 + 64)

    def test_plot_and_page(self):
        """The figure is a PNG; the page has the summary row; results.json round-trips."""
        with tempfile.TemporaryDirectory() as d:
            figs = F8.plot(self.rec, os.path.join(d, "figures"))
            with open(figs[0], "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            rec = dict(self.rec, name=F8.NAME, figure=F8.FIGURE, paper=F8.PAPER,
                       target=F8.TARGET, figures=[os.path.relpath(figs[0], d)],
                       run_at="2026-11-22 03:00", scale=0.1)
            res = {"experiments": {F8.NAME: rec}}
            report.save(os.path.join(d, "results.json"), res)
            self.assertEqual(report.load(os.path.join(d, "results.json")), json.loads(
                json.dumps(res)))
            page = report.render(res, [F8.NAME, "char-fig7"], d)
            self.assertIn("| bandslim-fig8 | BandSlim Fig. 3 and 8: ", page)
            self.assertIn("| partly |", page)
            self.assertIn("![bandslim-fig8](figures/bandslim-fig8-traffic.png)", page)
            self.assertIn("Not run yet (no numbers are shown for them): char-fig7.", page)


if __name__ == "__main__":
    unittest.main(verbosity=1)
