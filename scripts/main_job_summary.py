#!/usr/bin/env python3
"""What the main job showed, in the few lines a person reads at its end: the conformance suite's
result per backend (from ctest's JUnit file: a test parameterized by backend ends in
/<backend>, e.g. /cpu_avx2), and each trained run's test perplexity and BLEU with where its
report is.

usage: main_job_summary.py CTEST_JUNIT.xml RUN...
Exit status 2 with a message naming the file when one cannot be read.
"""
import collections
import json
import re
import sys
import xml.etree.ElementTree as ET

# ctest names a GoogleTest parameter's case "Suite.Test/cpu_avx2  # GetParam() = \"cpu-avx2\"".
BACKEND = re.compile(r"/(reference_f32|reference_f64|cpu_[a-z0-9]+|cuda)(?:\s|$)")


class SummaryError(Exception):
    pass


def conformance_by_backend(junit_path):
    """{backend: Counter(passed=, failed=, skipped=)}; tests of no one backend under "(shared)"."""
    try:
        root = ET.parse(junit_path).getroot()
    except (OSError, ET.ParseError) as e:
        raise SummaryError(f"{junit_path}: not ctest's JUnit output ({e})") from e
    counts = collections.defaultdict(collections.Counter)
    for case in root.iter("testcase"):
        match = BACKEND.search(case.get("name", ""))
        backend = match.group(1).replace("_", "-") if match else "(shared)"
        if case.find("failure") is not None or case.find("error") is not None or case.get("status") == "fail":
            outcome = "failed"
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            outcome = "skipped"
        else:
            outcome = "passed"
        counts[backend][outcome] += 1
    if not counts:
        raise SummaryError(f"{junit_path}: no test case")
    return counts


def run_lines(run_dir):
    path = f"{run_dir}/report.json"
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise SummaryError(f"{path}: cannot read the run report ({e})") from e
    test = report.get("test") or {}
    parts = [f"{run_dir}: {report.get('status', '?')}, best step {report.get('best', {}).get('step', '?')}"]
    if "perplexity" in test:
        parts.append(f"test perplexity {test['perplexity']:.2f} on {test.get('split', 'test')}")
    if "bleu" in test:
        parts.append(f"sacreBLEU {test['bleu']:.2f} ({test.get('decoding', {}).get('search', '')})")
    return "  " + ", ".join(parts) + f"; report {path}"


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        counts = conformance_by_backend(argv[0])
        lines = ["main-job: what it showed", "conformance suite (ctest), by backend:"]
        for backend in sorted(counts, key=lambda b: (b == "(shared)", b)):
            c = counts[backend]
            lines.append(f"  {backend:14} {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped")
        lines.append("trained runs:")
        lines += [run_lines(run) for run in argv[1:]]
    except SummaryError as e:
        print(f"main_job_summary: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
