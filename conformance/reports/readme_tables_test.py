#!/usr/bin/python3
"""reports/readme_tables.py: the result tables committed in docs/results.md (the tool's default
page) are what their summaries hold, and, on a copy of the committed ablation fixture (conformance/reports/fixtures/ablation_heads/),
the tables carry each cell's figures by seed, the paper's Table 3 row matched to each variant
(also to a variant not run yet, never to a variant under a claim's second recipe), its lead over
the baseline, the claims with their intervals (also between seeds) and verdicts; a page is
rewritten only inside its blocks, atomically, the same twice; --check writes nothing and names the
line of a figure that differs; bad input (a block without its end, a summary that is missing or
names a recipe by no string, no block at all, no page) exits 2 with a message naming the file.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from recipe_fixture import add_recipe_variants

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "reports", "readme_tables.py")
FIXTURE = os.path.join(HERE, "fixtures", "ablation_heads")
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def tool(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


RESULTS = os.path.join(HERE, "..", "..", "docs", "results.md")
committed = tool("--check")
check(committed.returncode == 0, "the tables of docs/results.md (the default page) are what their summaries hold"
      + committed.stderr)
# Every committed sweep (reports/ablations/<name>/summary.json; the <name>_cpu folders keep cells of
# another backend, not a sweep of their own) has its block in docs/results.md.
with open(RESULTS, encoding="utf-8") as f:
    results = f.read()
ABLATIONS = os.path.join(HERE, "..", "..", "reports", "ablations")
sweeps = sorted(name for name in os.listdir(ABLATIONS) if not name.endswith("_cpu")
                and os.path.exists(os.path.join(ABLATIONS, name, "summary.json")))
missing = [name for name in sweeps if f"<!-- readme_tables: ../reports/ablations/{name}/summary.json -->" not in results]
check(sweeps and not missing, f"docs/results.md has a block for each of the {len(sweeps)} committed sweeps"
      + (f"; missing: {', '.join(missing)}" if missing else ""))

with tempfile.TemporaryDirectory() as tmp:
    shutil.copytree(FIXTURE, os.path.join(tmp, "ablation_heads"))
    # One cell ended by early stopping, so that the best step says so.
    report_path = os.path.join(tmp, "ablation_heads", "heads1", "seed_2", "report.json")
    report = json.loads(read(report_path))
    report["stopped_early"] = True
    write(report_path, json.dumps(report))

    readme = os.path.join(tmp, "README.md")
    before, after = "# Title\n\n- A list item:\n\n", "\n  Prose after the block.\n"
    write(readme, before + "  <!-- readme_tables: ablation_heads/summary.json -->\n  | stale |\n"
          "  <!-- /readme_tables -->" + after)
    result = tool(readme)
    text = read(readme)
    check(result.returncode == 0, "the block is written" + result.stderr)
    check(text.startswith(before) and text.endswith("  <!-- /readme_tables -->" + after) and "| stale |" not in text,
          "only the block's inside is rewritten")
    check(not os.path.exists(readme + ".tmp"), "no temporary is left beside the README")
    rows = text.split("\n")
    expected = [
        "  | variant | the paper's row: PPL / BLEU | sacreBLEU by seed | mean ± sd | validation PPL | test PPL | "
        "best step (end) | BLEU vs heads8 |",
        "  | heads1 | (A) h 1: 5.29 / 24.9 | 25.50, 26.30 | 25.90 ± 0.57 | 11.92, 11.65 | 14.25, 13.85 | "
        "60 (cap), 60 (stopped at 60) | -3.90 [-5.21, -2.63], p 1.0e-04 |",
        "  | heads4 | (A) h 4: 5.00 / 25.5 | 28.75, pending |  | 11.22, pending | 12.75, pending | 60 (cap), pending "
        "|  |",
        "  | heads8 | base: 4.92 / 25.8 | 30.12, 29.48 | 29.80 ± 0.45 | 10.68, 10.86 | 11.50, 11.90 | "
        "60 (cap), 60 (cap) | (baseline) |",
        "  | heads16 | (A) h 16: 4.91 / 25.8 | pending, pending |  | pending, pending | pending, pending | "
        "pending, pending |  |",
        "  | 8 heads translate better than 1 head (Table 3 (A)) | sacreBLEU | +4.62, +3.18 | "
        "+3.90 [+2.63, +5.21] | 1.0e-04 | 3.0e-04 | 3.0e-04 |  | **reproduced** |",
        "  | 8 heads reach a lower validation perplexity than 1 head | test PPL | +1.24, +0.79 | "
        "+8.2% [-1.0%, +17.4%] | 0.066 | 0.198 | 0.099 | 7; 5 | **inconclusive** (within the cap) |",
        "  | 8 heads reach a lower test perplexity than 1 head | test PPL | heads1 diverged, no test_perplexity |  | "
        " |  |  |  | **inconclusive** |",
        "  | 4 heads translate as well as 8 | sacreBLEU, within ±1 | -1.37, pending |  | 0.024 |  |  |  | pending (1 of 2 seeds) |",
    ]
    for row in expected:
        check(row in rows, "row: " + row.strip()[:60])

    check(tool(readme, "--check").returncode == 0, "--check passes on the block just written")
    tool(readme)
    check(read(readme) == text, "writing twice gives the same README")

    stale = text.replace("| 25.50, 26.30 |", "| 25.51, 26.30 |")
    write(readme, stale)
    result = tool(readme, "--check")
    line = next(i for i, row in enumerate(stale.split("\n")) if "25.51" in row) + 1
    check(result.returncode == 1 and f"{readme}:{line}:" in result.stderr and "25.51" in result.stderr
          and "25.50" in result.stderr, "--check exits 1 naming the line whose figure differs")
    check(read(readme) == stale, "--check writes nothing")

    write(readme, before + "  <!-- readme_tables: ablation_heads/summary.json -->\n  | stale |\n")
    result = tool(readme)
    check(result.returncode == 2 and f"{readme}:5:" in result.stderr and "without its end" in result.stderr,
          "a block without its end: exit 2 naming the README's line")

    write(readme, "  <!-- readme_tables: missing/summary.json -->\n  <!-- /readme_tables -->\n")
    result = tool(readme)
    check(result.returncode == 2 and "missing/summary.json" in result.stderr,
          "a missing summary: exit 2 naming it")

    # A claim's recipe check: the baseline under a second recipe is no Table 3 row, whether its
    # cell has run (its warmup then differs) or not (its overrides then equal the baseline's).
    recipe_copy = os.path.join(tmp, "ablation_recipe")
    shutil.copytree(FIXTURE, recipe_copy)
    recipe_run, recipe_pending = add_recipe_variants(recipe_copy)
    write(readme, "<!-- readme_tables: ablation_recipe/summary.json -->\n<!-- /readme_tables -->\n")
    result = tool(readme)
    rows = read(readme).split("\n")
    check(result.returncode == 0 and any(r.startswith(f"| {recipe_run} |  | 30.12, pending |") for r in rows)
          and any(r.startswith(f"| {recipe_pending} |  | pending, pending |") for r in rows)
          and any(r.startswith("| heads8 | base: 4.92 / 25.8 |") for r in rows),
          "no paper's row for a variant under a claim's second recipe, whether a seed of it has run or none"
          + result.stderr)
    recipe_summary = os.path.join(recipe_copy, "summary.json")
    summary = json.loads(read(recipe_summary))
    summary["variants"][-1]["recipe"] = 1200
    write(recipe_summary, json.dumps(summary))
    result = tool(readme)
    check(result.returncode == 2 and recipe_summary in result.stderr and ".recipe: expected the name" in result.stderr,
          "a variant whose recipe is no name: exit 2 naming the summary and the field" + result.stderr)

    # A baseline with overrides of its own: a variant not run yet that leaves one of them to the
    # spec's base has settings the summary does not hold, so no paper's row is guessed for it.
    summary_path = os.path.join(tmp, "ablation_heads", "summary.json")
    summary = json.loads(read(summary_path))
    baseline = next(v for v in summary["variants"] if v["name"] == summary["baseline"])
    baseline["set"] = dict(baseline.get("set", {}), **{"model.dropout": 0.1})
    write(summary_path, json.dumps(summary))
    write(readme, "<!-- readme_tables: ablation_heads/summary.json -->\n<!-- /readme_tables -->\n")
    result = tool(readme)
    rows = read(readme).split("\n")
    check(result.returncode == 0 and any(r.startswith("| heads16 |  | pending, pending |") for r in rows)
          and any(r.startswith("| heads4 | (A) h 4: 5.00 / 25.5 |") for r in rows),
          "no paper's row for a variant not run yet whose settings the summary cannot give")

    result = tool(os.path.join(tmp, "no_such_README.md"), "--check")
    check(result.returncode == 2 and "no_such_README.md: cannot read" in result.stderr,
          "a README that is not there: exit 2 naming it")

    write(readme, "# No block here\n")
    result = tool(readme, "--check")
    check(result.returncode == 2 and "no" in result.stderr and readme in result.stderr,
          "a README without a block: exit 2 naming it")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
