"""scripts/gpu_check_report.py on a made-up gpu-check folder: gtest XML of the cuda instantiations
(a pass, a failure, a skip, a binary that crashed before writing XML), benchmark pairs, the
PyTorch peer's times, and missing compare-kernels and training outputs."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "gpu_check_report.py")
SUMMARY = os.path.join(HERE, "..", "reports", "gpu_summary.py")

GTEST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1" disabled="0" errors="0" name="AllTests">
  <testsuite name="AllBackends/LinearTest" tests="2" failures="1">
    <testcase name="MatchesReference/cuda" status="run" result="completed" classname="AllBackends/LinearTest"/>
    <testcase name="Backward/cuda" status="run" result="completed" classname="AllBackends/LinearTest">
      <failure message="too far" type=""/>
    </testcase>
  </testsuite>
  <testsuite name="Bf16/Bf16Linear" tests="2">
    <testcase name="WithinTolerance/cuda" status="run" result="completed" classname="Bf16/Bf16Linear"/>
    <testcase name="Rounding/cuda" status="run" result="skipped" classname="Bf16/Bf16Linear">
      <skipped message="no device"/>
    </testcase>
  </testsuite>
</testsuites>
"""


def bench(name, real_time, unit="us"):
    return {"name": name, "real_time": real_time, "time_unit": unit}


class GpuCheckReport(unittest.TestCase):
    def make_folder(self, root):
        os.makedirs(os.path.join(root, "tests"))
        with open(os.path.join(root, "commit"), "w") as f:
            f.write("0123abcd\n M scripts/gpu-check\n")
        with open(os.path.join(root, "tests", "op_tests.xml"), "w") as f:
            f.write(GTEST_XML)
        for name in ("op_tests", "model_tests"):  # model_tests crashed: a log and no XML
            open(os.path.join(root, "tests", f"{name}.log"), "w").close()
        with open(os.path.join(root, "cuda_attention_bench.json"), "w") as f:
            json.dump({"benchmarks": [bench("BM_attention_forward/128/128/real_time", 50.0),
                                      bench("BM_naive_attention_forward/128/128/real_time", 100.0),
                                      bench("BM_attention_backward/128/128/real_time", 200.0)]}, f)
        with open(os.path.join(root, "cuda_model_bench.json"), "w") as f:
            json.dump({"benchmarks": [
                bench("BM_CudaModelTrainStep/batch:32/length:128/bf16:0/real_time", 40.0, "ms")]}, f)
        with open(os.path.join(root, "cuda_torch_peer.json"), "w") as f:
            json.dump({"torch": "2.x", "device": "GPU", "attention": [
                {"length": 128, "dtype": "bfloat16", "kernel": "flash", "forward_ms": 0.03,
                 "forward_backward_ms": 0.13, "backward_ms": 0.1}],
                "model": [{"batch": 32, "length": 128, "precision": "float32", "forward_ms": 10.0,
                           "train_step_ms": 30.0}]}, f)

    def test_report(self):
        with tempfile.TemporaryDirectory() as root:
            self.make_folder(root)
            subprocess.run([sys.executable, SCRIPT, root, "build"], check=True)
            with open(os.path.join(root, "report.json")) as f:
                report = json.load(f)
            subprocess.run([sys.executable, SUMMARY, os.path.join(root, "report.json"),
                            os.path.join(root, "summary.md")], check=True)
            with open(os.path.join(root, "summary.md")) as f:
                summary = f.read()
        self.assertEqual(report["commit"], "0123abcd")
        self.assertEqual(report["uncommitted_changes"], [" M scripts/gpu-check"])
        tests = report["tests"]
        self.assertEqual((tests["total"], tests["passed"]), (4, 2))
        self.assertEqual(tests["failed"][0], "AllBackends/LinearTest.Backward/cuda")
        self.assertIn("model_tests", tests["failed"][1])
        self.assertEqual(tests["skipped"], ["Bf16/Bf16Linear.Rounding/cuda"])
        self.assertEqual(report["bf16"]["tests"]["passed"], ["Bf16/Bf16Linear.WithinTolerance/cuda"])
        forward = next(r for r in report["benchmarks"] if r["name"].startswith("BM_attention_forward"))
        self.assertAlmostEqual(forward["peer_over_ours"], 2.0)
        pairs = {p["what"]: p for p in report["pytorch"]["pairs"]}
        flash = pairs["attention forward T=128 vs sdpa bfloat16 flash"]
        self.assertAlmostEqual(flash["pytorch_over_ours"], 0.6)  # 30 us / 50 us
        self.assertFalse(flash["met"])  # within 1.5x means >= 0.667
        self.assertAlmostEqual(pairs["attention backward T=128 vs sdpa bfloat16 flash"]["pytorch_over_ours"], 0.5)
        step = pairs["paper-base 32x128 float32 vs nn.Transformer training step"]
        self.assertAlmostEqual(step["pytorch_over_ours"], 0.75)
        self.assertFalse(step["met"])
        self.assertNotIn("paper-base 32x128 float32 vs nn.Transformer forward", pairs)  # ours not run
        self.assertIn("unavailable", report["bf16"]["compare_kernels"]["float32"])
        # The markdown summary: counts, the failures by name, a PyTorch row with its goal.
        self.assertIn("cuda tests: 2 passed, 2 failed, 1 skipped of 4", summary)
        self.assertIn("- `AllBackends/LinearTest.Backward/cuda`", summary)
        self.assertIn("| paper-base 32x128 float32 vs nn.Transformer training step | 40 | 30 | 0.75 | >= 1 | no |",
                      summary)


if __name__ == "__main__":
    unittest.main()
