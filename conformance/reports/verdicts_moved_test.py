#!/usr/bin/python3
"""reports/verdicts_moved.py on made-up sweeps: between two folders it prints the tally (moved or
unchanged), each claim whose verdict, difference, p, Holm p or "within the cap" changed and no
other, a new claim, a pool whose sd, df or left-out configs changed, and the calibration; with
--since it reads a revision's summaries from git; a summary that cannot be read or lacks a field,
or a revision that is not there, exits 2 naming it.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "reports", "verdicts_moved.py")
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def tool(*args, cwd=None):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, cwd=cwd)


def write_sweeps(folder, summaries):
    for name, summary in summaries.items():
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        with open(os.path.join(folder, name, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f)


POOL = {"backend": "cpu-avx2", "overrides": {"data.epochs": 80},
        "test_bleu": {"sd": 0.394, "df": 30.0}, "log_test_perplexity": {"sd": 0.01267, "df": 30.0},
        "left_out": [{"configs": ["alpha/narrow"], "why": "two budgets"}]}
BEFORE = {
    "alpha": {"adjustment": {"sweeps": ["alpha"]},
              "variance_model": {"pool": POOL, "calibration": {"factor": 1.49, "interval": [1.07, 2.22], "df": 59.0}},
              "claims": [
                  {"id": "alpha#1", "claim": "deeper is better", "verdict": "inconclusive", "p_value": 0.004,
                   "p_holm": 0.093, "test": {"quantity": "log_test_perplexity", "estimate": 0.025},
                   "interval": [0.009, 0.041]},
                  {"id": "alpha#2", "claim": "wider is better", "verdict": "reproduced", "p_value": 1e-6,
                   "p_holm": 1e-5, "test": {"quantity": "test_bleu", "estimate": 1.97}, "interval": [1.26, 2.68]}]}}


def after_change():
    after = copy.deepcopy(BEFORE)
    alpha = after["alpha"]
    alpha["claims"][0].update(verdict="reproduced", p_holm=0.04, within_cap=True)
    alpha["claims"].append({"id": "alpha#3", "claim": "a new claim", "verdict": "pending"})
    alpha["variance_model"]["pool"]["test_bleu"] = {"sd": 0.399, "df": 29.0}
    alpha["variance_model"]["pool"]["left_out"].append({"configs": ["alpha/wide"], "why": "two budgets"})
    alpha["variance_model"]["calibration"] = {"factor": 1.51, "interval": [1.08, 2.26], "df": 58.0}
    return after


with tempfile.TemporaryDirectory() as tmp:
    old, new = os.path.join(tmp, "old"), os.path.join(tmp, "new")
    write_sweeps(old, BEFORE)
    write_sweeps(new, after_change())
    result = tool("--old", old, "--new", new)
    lines = result.stdout.strip().split("\n")
    check(result.returncode == 0, "two folders compare" + result.stderr)
    check(lines[0] == "tally: 1 reproduced, 0 contradicted and 1 inconclusive -> 2 reproduced, 0 contradicted and "
          "0 inconclusive", "the tally, before and after (a pending claim has no verdict): " + lines[0])
    check("alpha#1 (deeper is better): verdict inconclusive -> reproduced; Holm p 0.093 -> 0.040; "
          "within the cap False -> True" in lines, "a claim's moved fields, and only those: " + result.stdout)
    check(not any(line.startswith("alpha#2") for line in lines), "a claim that did not move is not printed")
    check("alpha#3 (a new claim): new" in lines, "a new claim is named")
    check('pool cpu-avx2, {"data.epochs": 80}: test_bleu sd 0.394 on 30 df; log_test_perplexity sd 1.267% on 30 df; '
          'leaves out alpha/narrow -> test_bleu sd 0.399 on 29 df; log_test_perplexity sd 1.267% on 30 df; leaves out '
          'alpha/narrow, alpha/wide' in lines, "the pool's sd, df and left-out configs")
    check("calibration: 1.49 [1.07, 2.22] on 59 df -> 1.51 [1.08, 2.26] on 58 df" in lines, "the calibration")

    same = tool("--old", old, "--new", old)
    check(same.returncode == 0 and same.stdout == "tally: 1 reproduced, 0 contradicted and 1 inconclusive (unchanged)\n",
          "nothing moved: the tally alone, unchanged" + same.stdout + same.stderr)

    # --since: a revision's committed summaries against the work tree.
    repo = os.path.join(tmp, "repo")
    sweeps = os.path.join(repo, "reports", "ablations")
    write_sweeps(sweeps, BEFORE)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "before"]):
        subprocess.run(git + command, cwd=repo, check=True, capture_output=True)
    write_sweeps(sweeps, after_change())
    since = tool("--new", sweeps, cwd=repo)
    check(since.returncode == 0 and since.stdout == result.stdout,
          "--since HEAD (the default) reads the committed summaries: the same lines as the folders" + since.stderr)

    missing = tool("--since", "no-such-revision", "--new", sweeps)
    check(missing.returncode == 2 and "no-such-revision" in missing.stderr,
          "a revision that is not there: exit 2 naming it" + missing.stderr)
    without_backend = after_change()
    del without_backend["alpha"]["variance_model"]["pool"]["backend"]
    write_sweeps(new, without_backend)
    lacking = tool("--old", old, "--new", new)
    check(lacking.returncode == 2 and "lacks a field" in lacking.stderr and "backend" in lacking.stderr,
          "a summary without a field it needs: exit 2 naming the field, not a traceback" + lacking.stderr)
    with open(os.path.join(new, "alpha", "summary.json"), "w", encoding="utf-8") as f:
        f.write("{not json")
    broken = tool("--old", old, "--new", new)
    check(broken.returncode == 2 and os.path.join(new, "alpha", "summary.json") in broken.stderr,
          "a summary that is not JSON: exit 2 naming it" + broken.stderr)

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
