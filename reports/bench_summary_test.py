#!/usr/bin/env python3
"""reports/bench_summary.py on small benchmark JSON files written here: the goal rows (met or
not, from the ratios), thread scaling, the machine table, and the errors."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_summary  # noqa: E402


def run(name, real_time, **counters):
    return {"name": name, "run_type": "iteration", "real_time": real_time, "time_unit": "ms", **counters}


CONTEXT = {"date": "2026-11-23T12:00:00+00:00", "num_cpus": 2, "mhz_per_cpu": 3560, "load_avg": [0.5, 1.0, 2.0],
           "cpu_model": "AMD EPYC", "cpu_backend": "cpu-avx2", "libtorch": "libtorch 1.13.0 (CPU)"}

LINEAR = [
    run("BM_LinearForward/rows:512/K:512/M:512/threads:1/min_time:0.300/real_time", 4.0, GFLOPs=100.0,
        x_openblas=1.2, x_eigen=1.1),
    run("BM_LinearForward/rows:512/K:512/M:512/threads:2/min_time:0.300/real_time", 2.5, GFLOPs=160.0,
        x_openblas=0.8, x_eigen=1.0),
    run("BM_LinearBackward/rows:512/K:512/M:512/threads:1/min_time:0.300/real_time", 8.0, GFLOPs=100.0,
        x_openblas=1.5, x_eigen=1.1),
    run("BM_LinearBackward/rows:512/K:512/M:512/threads:2/min_time:0.300/real_time", 4.0, GFLOPs=200.0,
        x_openblas=1.25, x_eigen=1.0),
]
MODEL = [
    run("BM_ModelTrainStep/batch:32/length:128/threads:1/min_time:0.500/real_time", 3000.0, GFLOPs=90.0,
        peak_fraction=0.8, x_libtorch=1.6),
    run("BM_ModelTrainStep/batch:32/length:128/threads:2/min_time:0.500/real_time", 1600.0, GFLOPs=170.0,
        peak_fraction=0.75, x_libtorch=1.4),
    run("BM_ModelForward/batch:8/length:32/threads:1/min_time:0.500/real_time", 100.0, GFLOPs=80.0,
        peak_fraction=0.7),
]

ATTENTION = [
    run("BM_AttentionForward/T:32/threads:1/min_time:0.200/real_time", 1.0, x_reference=1.5, peak_MiB=0.1,
        reference_peak_MiB=0.02),
    run("BM_AttentionForward/T:4096/threads:1/min_time:0.200/real_time", 900.0, x_reference=6.0, peak_MiB=0.2,
        reference_peak_MiB=256.0),
]


OPS_ACTIVATION = [
    run(f"BM_ActivationForward/{kind}/rows:4096/threads:{threads}/real_time", t, x_reference=x, GB_per_s=g)
    for kind, threads, t, x, g in (("relu", 1, 6.0, 1.8, 10.0), ("relu", 2, 4.0, 1.5, 15.0),
                                   ("gelu", 1, 47.0, 5.8, 1.4), ("gelu", 2, 25.0, 5.5, 2.7))]
OPS_NORM = [
    run("BM_NormBackward/layer/rows:4096/threads:1/real_time", 5.6, x_reference=0.7, GB_per_s=3.0),
    run("BM_NormBackward/layer/rows:4/threads:1/real_time", 0.01, x_reference=0.95, GB_per_s=3.0),
]


class BenchSummaryTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.dir.name, "summary.md")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, benchmarks, context=CONTEXT):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"context": context, "benchmarks": benchmarks}, f)
        return path

    def summary(self, *paths):
        self.assertEqual(bench_summary.main([*paths, "--out", self.out]), 0)
        with open(self.out, encoding="utf-8") as f:
            return f.read()

    def row(self, text, start):
        rows = [line for line in text.splitlines() if line.startswith("| " + start)]
        self.assertTrue(rows, f"no row starting with {start!r}")
        return [cell.strip() for cell in rows[0].strip("|").split("|")]

    def test_gemm_goal_is_met_only_when_every_shape_is(self):
        text = self.summary(self.write("linear.json", LINEAR))
        rows = [line for line in text.splitlines() if line.startswith("| GEMM >= 1.0x")]
        self.assertEqual(len(rows), 2)
        one = [c.strip() for c in rows[0].strip("|").split("|")]
        two = [c.strip() for c in rows[1].strip("|").split("|")]
        self.assertEqual(one[1], "1")
        self.assertIn("min 1.20, max 1.50", one[2])
        self.assertEqual(one[3], "met")
        self.assertEqual(two[1], "2")
        self.assertIn("geomean 1.00", two[2])  # sqrt(0.8 x 1.25)
        self.assertEqual(two[3], "not met: 1 of 2 shapes below")

    def test_model_goals_and_missing_peer(self):
        text = self.summary(self.write("model.json", MODEL))
        train = [line for line in text.splitlines() if line.startswith("| training step >= 1.5x")]
        self.assertEqual([c.strip() for c in train[0].strip("|").split("|")][2:], ["1.60", "met"])
        self.assertEqual([c.strip() for c in train[1].strip("|").split("|")][2:], ["1.40", "not met"])
        forward = self.row(text, "forward >= 1.3x libtorch (batch 8 x 32)")
        self.assertEqual(forward[2:], ["no libtorch peer in this build", "not measured"])

    def test_model_goals_against_the_fma_peak(self):
        # GFLOPs / fma_peak_GFLOPs (medians of different repetitions) is 0.95; the measured
        # peak_fraction, 0.9, is what the row reports.
        runs = [run("BM_ModelTrainStep/batch:8/length:32/threads:1/min_time:0.500/real_time", 1000.0, GFLOPs=95.0,
                    fma_peak_GFLOPs=100.0, peak_fraction=0.9, x_libtorch=1.6),
                run("BM_ModelForward/batch:8/length:32/threads:1/min_time:0.500/real_time", 500.0, GFLOPs=60.0,
                    fma_peak_GFLOPs=100.0, peak_fraction=0.6, x_libtorch=0.75)]
        text = self.summary(self.write("model.json", runs))
        train = self.row(text, "training step >= 1.5x libtorch (batch 8 x 32)")
        # libtorch: 0.9 / 1.6 = 0.56 of the peak; 1.5x that is 0.84.
        self.assertEqual(train[2:], ["1.60; of the FMA peak: ours 0.90, libtorch 0.56, 1.5x libtorch needs 0.84", "met"])
        forward = self.row(text, "forward >= 1.3x libtorch (batch 8 x 32)")
        # libtorch: 60 / 0.75 = 80 GFLOP/s; 1.3x that is 104 > the peak of 100.
        self.assertEqual(forward[2:], ["0.75; of the FMA peak: ours 0.60, libtorch 0.80, 1.3x libtorch needs "
                                       "1.04 (beyond the peak)", "not met"])

    def test_thread_scaling_and_machine(self):
        text = self.summary(self.write("linear.json", LINEAR), self.write("model.json", MODEL))
        forward = self.row(text, "LinearForward | rows 512, K 512, M 512")
        self.assertEqual(forward[-1], "1.60")  # 4.0 ms / 2.5 ms
        train = self.row(text, "ModelTrainStep")
        self.assertEqual(train[-1], "1.88")  # 3000 / 1600
        only_one = self.row(text, "ModelForward")
        self.assertEqual(only_one[-1], "-")
        machine = self.row(text, "linear.json")
        self.assertIn("0.50, 1.00, 2.00", machine)
        self.assertIn("cpu-avx2", machine)

    def test_repetitions_are_summarized_by_their_medians(self):
        name = "BM_LinearForward/rows:512/K:512/M:512/threads:1/min_time:0.300/real_time"
        repeated = [dict(run(name, t, GFLOPs=100.0, x_openblas=r, x_eigen=1.0), repetitions=3)
                    for t, r in ((4.0, 0.5), (4.1, 1.1), (4.2, 1.2))]
        repeated += [dict(run(name + "_" + kind, t, GFLOPs=100.0, x_openblas=r, x_eigen=1.0), run_type="aggregate",
                          aggregate_name=kind, run_name=name, repetitions=3)
                     for kind, t, r in (("mean", 4.1, 0.93), ("median", 4.1, 1.1), ("stddev", 0.1, 0.3))]
        text = self.summary(self.write("linear.json", repeated))
        goal = self.row(text, "GEMM >= 1.0x OpenBLAS")
        self.assertIn("geomean 1.10", goal[2])  # the median, not the 0.5 outlier nor the mean
        self.assertIn("medians of 3 repetitions", self.row(text, "linear.json"))
        self.assertIn("one run", self.row(self.summary(self.write("linear.json", LINEAR)), "linear.json"))

    def test_times_are_in_ms_whatever_each_rows_unit(self):
        name = "BM_AttentionForward/T:32/threads:{}/min_time:0.200/real_time"
        runs = [dict(run(name.format(1), 250.0, x_reference=1.5, peak_MiB=0.1, reference_peak_MiB=0.02),
                     time_unit="us"),
                run(name.format(2), 0.2, x_reference=1.5, peak_MiB=0.1, reference_peak_MiB=0.02)]
        text = self.summary(self.write("attention.json", runs))
        self.assertIn("| benchmark | shape | 1 thread (ms) |", text)
        row = self.row(text, "AttentionForward | T 32")
        self.assertEqual(row[2], "0.25")  # 250 us
        self.assertEqual(row[-1], "1.25")  # 0.25 ms / 0.2 ms, not 250 / 0.2

    def test_attention_range_and_memory(self):
        text = self.summary(self.write("attention.json", ATTENTION))
        row = self.row(text, "attention forward vs the reference, T 32..4096")
        self.assertEqual(row[1], "1")
        self.assertEqual(row[2], "x_reference 1.50..6.00; peak heap at most 0.20 MiB (reference 256.00 MiB)")
        lengths = [line.split("|")[2].strip() for line in text.splitlines() if line.startswith("| AttentionForward")]
        self.assertEqual(lengths, ["T 32", "T 4096"])  # numeric order

    def test_op_benchmarks_form_one_table_with_their_named_cases(self):
        text = self.summary(self.write("activation.json", OPS_ACTIVATION), self.write("norm.json", OPS_NORM))
        self.assertEqual(text.count("## Per-op kernels vs the reference"), 1)
        self.assertIn("From `activation.json, norm.json`.", text)
        relu = self.row(text, "ActivationForward/relu | rows 4096")
        gelu = self.row(text, "ActivationForward/gelu | rows 4096")
        self.assertEqual(relu[2:4] + [relu[-1]], ["6.000", "1.80", "1.50"])  # 6 ms / 4 ms
        self.assertEqual(gelu[2:4] + [gelu[-1]], ["47.000", "5.80", "1.88"])  # 47 / 25
        # Only the 1-thread rows below 0.9 are named (0.95 is within the repetitions' spread).
        self.assertIn("Slower than the reference at 1 thread (x_reference < 0.9): NormBackward/layer (rows 4096: 0.70).",
                      text)
        alone = self.summary(self.write("activation.json", OPS_ACTIVATION))
        self.assertIn("None slower", alone)
        self.assertNotIn("## Goals", alone)  # no op has a goal: no empty table

    def test_bad_input_names_the_file_and_writes_nothing(self):
        bad = os.path.join(self.dir.name, "broken.json")
        with open(bad, "w", encoding="utf-8") as f:
            f.write("{not json")
        other = self.write("other.json", [run("BM_Something/threads:1", 1.0)])
        empty = self.write("empty.json", [])
        for path in (bad, other, empty):
            self.assertEqual(bench_summary.main([self.write("linear.json", LINEAR), path, "--out", self.out]), 2)
            self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    unittest.main()
