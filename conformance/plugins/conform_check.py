"""`trepro conform` end to end, on reference-f32 and the plain-C example plugin:

- the reports validate against reports/conformance_schema.json, and so do the committed ones
  (reports/conformance/*.json);
- example-c-f32 passes norm forward and log_softmax forward, and every other op x direction is
  "not provided"; reference-f32 fails nothing;
- the broken copy fails log_softmax forward and nothing else, and conform exits 1;
- an expectations file turns that failure into xfail, counted apart, and conform exits 0.

    conform_check.py --trepro TREPRO --good LIB --broken LIB --repo DIR     (ctest: conform_report)
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("jsonschema is missing (scripts/setup installs it)")
    sys.exit(77)

OWN = {("norm", "forward"), ("log_softmax", "forward")}


def main():
    parser = argparse.ArgumentParser()
    for option in ("--trepro", "--good", "--broken", "--repo"):
        parser.add_argument(option, required=True)
    args = parser.parse_args()
    with open(os.path.join(args.repo, "reports", "conformance_schema.json")) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    problems = []

    def validate(path):
        with open(path) as f:
            report = json.load(f)
        for e in validator.iter_errors(report):
            problems.append(f"{path}: {list(e.path)}: {e.message}")
        return report

    def conform(plugin, backends, folder, *extra):
        command = [args.trepro, "--plugin", plugin, "conform", "--out", folder, *extra]
        for b in backends:
            command += ["--backend", b]
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(proc.stdout)
        return proc.returncode, {b: validate(os.path.join(folder, b + ".json")) for b in backends}

    def verdicts(report):
        return {(r["op"], r["direction"]): r["verdict"] for r in report["results"]}

    with tempfile.TemporaryDirectory() as folder:
        code, reports = conform(args.good, ["reference-f32", "example-c-f32"], os.path.join(folder, "good"))
        if code != 0:
            problems.append(f"conform on the example plugin exited {code}")
        for key, verdict in verdicts(reports["example-c-f32"]).items():
            wanted = "pass" if key in OWN else "not_provided"
            if verdict != wanted:
                problems.append(f"example-c-f32 {key}: {verdict}, expected {wanted}")
        if reports["example-c-f32"]["subject"]["kind"] != "plugin":
            problems.append("example-c-f32 is not reported as a plugin")
        if reports["reference-f32"]["summary"]["fail"] != 0:
            problems.append("reference-f32 fails conformance tests")
        if not os.path.exists(os.path.join(folder, "good", "example-c-f32.md")):
            problems.append("conform wrote no Markdown report")

        code, reports = conform(args.broken, ["example-c-broken-f32"], os.path.join(folder, "broken"))
        failing = {k for k, v in verdicts(reports["example-c-broken-f32"]).items() if v == "fail"}
        if code != 1 or failing != {("log_softmax", "forward")}:
            problems.append(f"the broken copy: exit {code}, failing {sorted(failing)}; expected 1 and log_softmax forward")

        expectations = os.path.join(folder, "expected.txt")
        with open(expectations, "w") as f:
            f.write("# the example's deliberate error\nexample-c-broken-f32/log_softmax/*  # leaves the row maximum out\n")
        code, reports = conform(args.broken, ["example-c-broken-f32"], os.path.join(folder, "expected"),
                                "--expectations", expectations)
        summary = reports["example-c-broken-f32"]["summary"]
        entries = reports["example-c-broken-f32"]["expectations"]["entries"]
        if code != 0 or summary["xfail"] != 1 or summary["fail"] != 0 or entries[0]["matched"] != 1:
            problems.append(f"with expectations: exit {code}, summary {summary}, entries {entries}")

    committed = sorted(glob.glob(os.path.join(args.repo, "reports", "conformance", "*.json")))
    if not committed:
        problems.append("reports/conformance/ holds no report")
    for path in committed:
        validate(path)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
    print(f"conform: reports valid, {len(committed)} committed reports valid")


if __name__ == "__main__":
    main()
