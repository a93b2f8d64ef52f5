#!/usr/bin/python3
"""reports/bench_targets.py on small run_benches.sh outputs written here: the target table (each
target's time over the default's, and how many benchmarks another target won), the decode
section, and the errors (a file in the wrong target's folder, no target folder)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_targets  # noqa: E402


def linear(backend, forward_ms, backward_ms):
    runs = [{"name": f"BM_Linear{kind}/rows:512/K:512/M:512/threads:1/min_time:0.300/real_time",
             "run_type": "iteration", "real_time": ms, "cpu_time": ms / 2, "time_unit": "ms", "GFLOPs": 100.0,
             "x_openblas": 1.0,
             "x_eigen": 1.0} for kind, ms in (("Forward", forward_ms), ("Backward", backward_ms))]
    return {"context": {"cpu_model": "AMD EPYC 9B14", "cpu_backend": backend, "load_avg": [1.0, 1.0, 1.0]},
            "benchmarks": runs}


DECODE = {"machine": {"cpu_model": "AMD EPYC 9B14", "load_average_start": [2.0, 2.0, 2.0],
                      "load_average_end": [2.5, 2.0, 2.0]},
          "input": "/data/test_2016_flickr.de.gz", "beam": 4, "alpha": 0.6, "repeat": 3,
          "agreement": {"greedy_identical": 1.0, "beam_identical": 0.988, "beam_identical_after_reranking": 1.0,
                        "sentences": 1000, "checked_with": "cpu-avx3, 2 threads, batch 32"},
          "rows": [{"engine": e, "threads": t, "batch": 32, "sentences": 1000, "seconds": s,
                    "sentences_per_s": 1000 / s, "target_tokens_per_s": 14000 / s, "peak_rss_mib": 100.0,
                    "x_ct2_float32": p / s, "cpu_x_ct2_float32": p / s}
                   for t, p in ((1, 10.0), (2, 40.0))
                   for e, s in (("cpu-avx3", 8.0), ("cpu-avx2", 12.5), ("ctranslate2-float32", p))]}


class BenchTargetsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def write(self, relative, data):
        path = os.path.join(self.out, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(data, f)

    def summary(self):
        self.assertEqual(bench_targets.main([self.out]), 0)
        with open(os.path.join(self.out, "summary.md")) as f:
            return f.read()

    def test_each_target_over_the_default_and_the_decode_rows(self):
        self.write("cpu-avx3/linear.json", linear("cpu-avx3", 4.0, 10.0))
        self.write("cpu-avx2/linear.json", linear("cpu-avx2", 5.0, 8.0))
        self.write("decode.json", DECODE)
        text = self.summary()
        # avx2 / avx3: forward 5 / 4 = 1.25 (avx3 faster), backward 8 / 10 = 0.80 (avx2 faster).
        self.assertIn("| LinearForward | rows 512, K 512, M 512 | 1 | 4.000 | 1.25 | 1.25 |", text)
        self.assertIn("| LinearBackward | rows 512, K 512, M 512 | 1 | 10.000 | 0.80 | 0.80 |", text)
        self.assertIn("avx2 was faster than cpu-avx3 on 1 of 2 benchmarks", text)
        self.assertIn("| cpu-avx3 | 1 | 32 | 8.00 | 125.0 | 1750 | 100 | 1.25 | 1.25 |", text)
        # At 2 threads the peer took 40 s against 10 s at 1 thread: a disturbed run, left out of
        # the goal (ours at 5x its speed there says nothing about ours).
        self.assertIn("met in 1 of 1 configurations; left out: 2 threads batch 32", text)
        self.assertIn("load average 2.00, 2.00, 2.00 at the start", text)
        self.assertIn("beam 0.988 identical as decoded, 1.000 after re-ranking", text)
        self.assertLess(text.index("# cpu-avx3"), text.index("# cpu-avx2"))

    def test_the_per_op_files_of_a_target_are_read_from_its_ops_folder(self):
        self.write("cpu-avx2/linear.json", linear("cpu-avx2", 5.0, 8.0))
        self.write("cpu-avx2/ops/norm.json", {
            "context": {"cpu_model": "AMD EPYC", "cpu_backend": "cpu-avx2", "load_avg": [1.0, 1.0, 1.0]},
            "benchmarks": [{"name": "BM_NormBackward/layer/rows:4096/threads:1/real_time", "run_type": "iteration",
                            "real_time": 5.6, "time_unit": "ms", "x_reference": 0.7, "GB_per_s": 3.0}]})
        text = self.summary()
        self.assertIn("| NormBackward/layer | rows 4096 | 5.600 | 0.70 | 3.00 |", text)
        self.write("cpu-avx2/ops/rope.json", linear("cpu-avx3", 1.0, 1.0))  # in the wrong target's folder
        self.assertEqual(bench_targets.main([self.out]), 2)

    def test_a_file_measured_on_another_target_is_an_error(self):
        self.write("cpu-avx3/linear.json", linear("cpu-avx2", 4.0, 10.0))
        self.assertEqual(bench_targets.main([self.out]), 2)
        self.assertFalse(os.path.exists(os.path.join(self.out, "summary.md")))

    def test_no_target_folder_is_an_error(self):
        self.write("decode.json", DECODE)
        self.assertEqual(bench_targets.main([self.out]), 2)

    def test_a_broken_decode_file_is_an_error(self):
        self.write("cpu-avx3/linear.json", linear("cpu-avx3", 4.0, 10.0))
        self.write("decode.json", {"rows": []})
        self.assertEqual(bench_targets.main([self.out]), 2)


if __name__ == "__main__":
    unittest.main()
