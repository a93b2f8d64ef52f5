#!/usr/bin/python3
"""The suite's rules for tests that run Python or may skip, checked on this build's ctest list
(`ctest --show-only=json-v1`):
- a test whose command is a Python interpreter runs /usr/bin/python3, Debian's, for which
  scripts/setup installs the packages (the first python3 on PATH may be another one without
  them: sacrebleu_check skipped there);
- a test that may skip for a missing requirement (SKIP_RETURN_CODE) runs through
  support/skip_fails_in_ci.sh, so that in CI (CI=true) the skip is a failure; and that script
  turns exit 77 into a failure in CI only, passing every other status through.
gtest cases that skip (GTEST_SKIP: no GPU for the cuda tests) are not SKIP_RETURN_CODE tests.

Usage: test_commands_check.py CTEST BUILD_DIR
"""
import json
import os
import subprocess
import sys

WRAPPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "skip_fails_in_ci.sh")
SYSTEM_PYTHON = "/usr/bin/python3"


def tests(ctest, build_dir):
    listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=build_dir, check=True,
                             capture_output=True, text=True).stdout
    return json.loads(listing)["tests"]


def is_python(program):
    return os.path.basename(program).startswith("python")


def command_problems(test):
    command = test.get("command") or []
    properties = {p["name"]: p["value"] for p in test.get("properties", [])}
    problems = []
    wrapped = bool(command) and os.path.realpath(command[0]) == os.path.realpath(WRAPPER)
    if "SKIP_RETURN_CODE" in properties and not wrapped:
        problems.append(f"may skip (SKIP_RETURN_CODE) but does not run through {WRAPPER}")
    if wrapped:
        command = command[1:]
    if command and is_python(command[0]) and command[0] != SYSTEM_PYTHON:
        problems.append(f"runs {command[0]}, not {SYSTEM_PYTHON}")
    return [f"{test['name']}: {p}" for p in problems]


def wrapper_problems():
    problems = []
    for status in (0, 1, 77):
        for ci, expected in (("true", 1 if status == 77 else status), (None, status)):
            env = {k: v for k, v in os.environ.items() if k != "CI"}
            if ci is not None:
                env["CI"] = ci
            got = subprocess.run([WRAPPER, "sh", "-c", f"exit {status}"], env=env,
                                 capture_output=True).returncode
            if got != expected:
                problems.append(f"{WRAPPER}: a test exiting {status} with CI={ci} gave {got}, expected {expected}")
    return problems


def main():
    ctest, build_dir = sys.argv[1:3]
    all_tests = tests(ctest, build_dir)
    problems = [p for t in all_tests for p in command_problems(t)] + wrapper_problems()
    skipping = [t["name"] for t in all_tests
                if any(p["name"] == "SKIP_RETURN_CODE" for p in t.get("properties", []))]
    for problem in problems:
        print("FAIL:", problem)
    if not skipping:
        print("FAIL: no test has SKIP_RETURN_CODE: the listing is not this suite's")
        return 1
    if problems:
        return 1
    print(f"PASS: {len(all_tests)} tests; may skip, failing in CI: {', '.join(skipping)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
