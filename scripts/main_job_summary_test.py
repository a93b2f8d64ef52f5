#!/usr/bin/env python3
"""scripts/main_job_summary.py on a made-up ctest JUnit file and run reports: per-backend counts
(failures and skips apart), the run's test perplexity and BLEU, and an error naming an unreadable
file."""
import json
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "main_job_summary.py")

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux" tests="5">
 <testcase name="AllBackends/LinearTest.Forward/reference_f32  # GetParam() = &quot;reference-f32&quot;" status="run"/>
 <testcase name="AllBackends/LinearTest.Forward/cpu_avx2  # GetParam() = &quot;cpu-avx2&quot;" status="fail"><failure message="x"/></testcase>
 <testcase name="AllBackends/LinearTest.Backward/cpu_avx2" status="run"/>
 <testcase name="CudaTest.Device/cuda" status="run"><skipped message="no GPU"/></testcase>
 <testcase name="Config.Reads" status="run"/>
</testsuite>
"""


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        junit = os.path.join(tmp, "ctest.xml")
        with open(junit, "w") as f:
            f.write(JUNIT)
        run_dir = os.path.join(tmp, "run")
        os.makedirs(run_dir)
        with open(os.path.join(run_dir, "report.json"), "w") as f:
            json.dump({"status": "finished", "best": {"step": 300},
                       "test": {"split": "test_2016_flickr", "perplexity": 41.234, "bleu": 3.456,
                                "decoding": {"search": "beam 4"}}}, f)
        result = run(junit, run_dir)
        assert result.returncode == 0, result.stderr
        out = result.stdout
        for expected in ("cpu-avx2       1 passed, 1 failed, 0 skipped",
                         "reference-f32  1 passed, 0 failed, 0 skipped",
                         "cuda           0 passed, 0 failed, 1 skipped",
                         "(shared)       1 passed, 0 failed, 0 skipped",
                         "test perplexity 41.23 on test_2016_flickr", "sacreBLEU 3.46 (beam 4)"):
            assert expected in out, f"missing {expected!r} in:\n{out}"
        assert out.index("cpu-avx2") < out.index("(shared)"), out
        bad = run(os.path.join(tmp, "missing.xml"), run_dir)
        assert bad.returncode == 2 and "missing.xml: not ctest's JUnit output" in bad.stderr, bad
        bad = run(junit, os.path.join(tmp, "no_run"))
        assert bad.returncode == 2 and "no_run/report.json: cannot read the run report" in bad.stderr, bad
    print("PASS")


if __name__ == "__main__":
    main()
