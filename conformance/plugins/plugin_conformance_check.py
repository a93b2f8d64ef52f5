"""The plain-C example plugin (examples/plugin) through the conformance binaries, unchanged:

- with the example plugin, every test of its backend "example-c-f32" passes or is skipped as
  not provided; a passing test called no op but the plugin's two (norm forward, log_softmax
  forward: the gtest property "ops" that TREPRO_RECORD_OPS=1 records), each of them is called by
  some passing test, and nothing fails;
- with the copy that has a deliberate error in log_softmax forward, its comparison with the
  reference fails, every test that fails passed on the example and called log_softmax forward
  (the ones that do not see this error, argument checks and shift invariance, still pass), and
  every test that did not call it has the result it had;
- `trepro --plugin PATH backends` lists it.

    plugin_conformance_check.py --good LIB --broken LIB --trepro TREPRO BINARY...   (ctest: plugin_conformance)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

OWN = {"norm forward", "log_softmax forward"}


def run(binary, plugin, backend):
    """{test id: (result, ops called, not_provided)} of `binary`'s tests of `backend`."""
    suffix = backend.replace("-", "_")
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "out.json")
        env = dict(os.environ, TREPRO_BACKEND_PLUGINS=plugin, TREPRO_RECORD_OPS="1")
        proc = subprocess.run([binary, f"--gtest_filter=*/{suffix}", f"--gtest_output=json:{out}"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if not os.path.exists(out):
            sys.exit(f"{binary} wrote no report (exit {proc.returncode}):\n{proc.stdout[-3000:]}")
        with open(out) as f:
            report = json.load(f)
    tests = {}
    for suite in report["testsuites"]:
        for t in suite["testsuite"]:
            result = "fail" if t.get("failures") else ("skip" if t["result"] == "SKIPPED" else "pass")
            ops = set(filter(None, t.get("ops", "").split(",")))
            tests[f"{os.path.basename(binary)}:{t['classname']}.{t['name'].rsplit('/', 1)[0]}"] = (result, ops, t.get("not_provided"))
    return tests


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--good", required=True)
    parser.add_argument("--broken", required=True)
    parser.add_argument("--trepro", required=True)
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    problems = []

    listed = subprocess.run([args.trepro, "--plugin", args.good, "backends"], stdout=subprocess.PIPE, text=True, check=True)
    names = [b["name"] for b in json.loads(listed.stdout)]
    if "example-c-f32" not in names:
        problems.append(f"trepro --plugin {args.good} backends does not list example-c-f32: {names}")

    good, broken = {}, {}
    for binary in args.binaries:
        good.update(run(binary, args.good, "example-c-f32"))
        broken.update(run(binary, args.broken, "example-c-broken-f32"))
    count = lambda tests, r: sum(1 for v in tests.values() if v[0] == r)
    print(f"example-c-f32: {count(good, 'pass')} pass, {count(good, 'fail')} fail, {count(good, 'skip')} not provided")
    print(f"example-c-broken-f32: {count(broken, 'pass')} pass, {count(broken, 'fail')} fail, "
          f"{count(broken, 'skip')} not provided")

    for test, (result, ops, not_provided) in sorted(good.items()):
        if result == "fail":
            problems.append(f"{test} fails on the example plugin")
        if result == "pass" and not ops <= OWN:
            problems.append(f"{test} passed on the example plugin but called {sorted(ops - OWN)}, which it does not provide")
        if result == "skip" and (not not_provided or not_provided in OWN):
            problems.append(f"{test} was skipped on the example plugin, not as an op it does not provide ({not_provided})")
    for op in sorted(OWN):
        if not any(r == "pass" and op in ops for r, ops, _ in good.values()):
            problems.append(f"no test of {op} passed on the example plugin")

    may_fail = {t for t, (r, ops, _) in good.items() if r == "pass" and "log_softmax forward" in ops}
    failures = {t for t, (r, _, _) in broken.items() if r == "fail"}
    direct = "op_tests:AllBackends/LogSoftmaxTest.ForwardMatchesReference"
    if direct not in failures:
        problems.append(f"{direct} does not fail on the broken copy")
    for t in sorted(failures - may_fail):
        problems.append(f"{t} fails on the broken copy, though it does not test its log_softmax")
    for t in sorted(set(good) - may_fail):
        if broken.get(t, (None,))[0] != good[t][0]:
            problems.append(f"{t}: {good[t][0]} on the example plugin, {broken.get(t, ('missing',))[0]} on its broken copy")
    print(f"the broken copy fails {len(failures)} of the {len(may_fail)} tests that call log_softmax forward, and no other")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
