#!/usr/bin/python3
"""reports/readme_tables.py: the result tables committed in docs/results.md (the tool's default
page) are what their summaries hold, and, on a copy of the committed ablation fixture (conformance/reports/fixtures/ablation_heads/),
the tables carry each cell's figures by seed, the paper's Table 3 row matched to each variant
(also to a variant not run yet, never to a variant under a claim's second recipe), its lead over
the baseline, the claims with their intervals (also between seeds) and verdicts; a page is
rewritten only inside its blocks, atomically, the same twice; --check writes nothing and names the
line of a figure that differs; bad input (a block without its end, a summary that is missing or
names a recipe by no string, no block at all, no page) exits 2 with a message naming the file.
The figures that prose quotes (<!--fig KEY-->TEXT<!--/fig-->), on made-up summaries: the tally,
a claim's fields, a variant's lead and a sweep's variance model, formatted as the tables print
them, rewritten in place and checked by line; a key that names nothing, a claim or sweep that is
not there and a figure without its end exit 2 naming the page's line.
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
check(committed.returncode == 0, "the tables and figures of docs/results.md (the default page) are what their "
      "summaries hold" + committed.stderr)
front = tool(os.path.join(HERE, "..", "..", "README.md"), "--check")
check(front.returncode == 0, "the figures of the README are what the summaries hold" + front.stderr)
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


def made_up_sweeps(folder):
    """Three sweeps' summaries holding only what figures read: alpha with a reproduced perplexity
    claim, an inconclusive BLEU claim and a variant's lead; beta with a contradicted claim and a
    pending one, which the tally leaves out; alpha_cpu, which the adjustment leaves out (another
    backend's cells that alpha supersedes), with a decided claim that no count may hold."""
    variance_model = {"pool": {"test_bleu": {"sd": 0.39899, "df": 29.0}, "log_test_perplexity": {"sd": 0.0125734}},
                      "calibration": {"factor": 1.5112, "interval": [1.0829, 2.2564], "df": 58.0}}
    alpha = {"claims": [
        {"id": "alpha#1", "verdict": "reproduced", "p_value": 0.00004, "p_holm": 0.0172, "q_bh": 0.0049,
         "test": {"quantity": "log_test_perplexity", "estimate": 0.0483}, "interval": [0.0226, 0.0741],
         "within_cap": True},
        {"id": "alpha#2", "verdict": "inconclusive", "p_value": 0.25, "p_holm": 1.0, "q_bh": 0.4,
         "test": {"quantity": "test_bleu", "estimate": 0.6213}, "interval": [-0.4417, 1.6884],
         "power": {"seeds_per_arm_at_paper_effect": 2, "seeds_per_arm_at_observed_effect": "> 1000"}}],
        "variants": [{"name": "wide", "vs_baseline": {"verdict": "inconclusive", "metric": "bleu", "p_value": 0.7021,
                                                      "test": {"quantity": "test_bleu", "estimate": -0.2},
                                                      "interval": [-1.234, 0.8311]}}],
        "variance_model": variance_model, "adjustment": {"sweeps": ["alpha", "beta"]}}
    beta = {"claims": [
        {"id": "beta#1", "verdict": "contradicted", "p_value": 1e-6, "p_holm": 2e-5, "q_bh": 1e-5,
         "test": {"quantity": "test_bleu", "estimate": -7.4166}, "interval": [-8.551, -6.2843]},
        {"id": "beta#2", "verdict": "pending"}], "variance_model": variance_model,
        "adjustment": {"sweeps": ["alpha", "beta"]}}
    superseded = {"claims": [dict(alpha["claims"][0], id="alpha_cpu#1")], "adjustment": {"sweeps": ["alpha", "beta"]}}
    for name, summary in (("alpha", alpha), ("beta", beta), ("alpha_cpu", superseded)):
        os.makedirs(os.path.join(folder, name))
        write(os.path.join(folder, name, "summary.json"), json.dumps(summary))


with tempfile.TemporaryDirectory() as tmp:
    sweeps = os.path.join(tmp, "ablations")
    made_up_sweeps(sweeps)
    page = os.path.join(tmp, "page.md")
    figures = ("Of the <!--fig family claims-->x<!--/fig--> claims: **<!--fig tally-->stale<!--/fig-->**, "
               "<!--fig family decided_within_cap-->x<!--/fig--> of <!--fig family decided-->x<!--/fig--> within the cap, "
               "<!--fig family undecided-->x<!--/fig--> undecided.\n"
               "Deeper wins by <!--fig alpha#1 difference-->old<!--/fig--> (Holm p <!--fig alpha#1 holm-->x<!--/fig-->, "
               "<!--fig alpha#1 verdict-->x<!--/fig-->); wider by <!--fig alpha#2 difference--><!--/fig-->, p "
               "<!--fig alpha#2 p-->x<!--/fig-->, <!--fig alpha#2 seeds_observed-->x<!--/fig--> seeds per arm "
               "(<!--fig alpha#2 seeds_paper-->x<!--/fig--> at the paper's).\n"
               "Its lead: <!--fig alpha/wide vs_baseline-->x<!--/fig-->, p <!--fig alpha/wide vs_baseline_p-->x<!--/fig-->; "
               "beta: <!--fig beta#1 difference-->x<!--/fig-->, Holm p <!--fig beta#1 holm-->x<!--/fig-->.\n"
               "Pooled sd <!--fig alpha bleu_sd-->x<!--/fig--> on <!--fig alpha bleu_df-->x<!--/fig--> df, "
               "<!--fig alpha log_ppl_sd-->x<!--/fig-->; <!--fig beta calibration-->x<!--/fig--> (95% CI "
               "<!--fig beta calibration_interval-->x<!--/fig-->, <!--fig beta calibration_df-->x<!--/fig--> df).\n")
    write(page, "# Made up\n\n" + figures + "A line with no figure.\n")
    result = tool(page, "--ablations", sweeps)
    expected = ("# Made up\n\n"
                "Of the <!--fig family claims-->4<!--/fig--> claims: **<!--fig tally-->1 reproduced, 1 contradicted and "
                "1 inconclusive<!--/fig-->**, <!--fig family decided_within_cap-->1<!--/fig--> of "
                "<!--fig family decided-->2<!--/fig--> within the cap, <!--fig family undecided-->1<!--/fig--> undecided.\n"
                "Deeper wins by <!--fig alpha#1 difference-->+4.8% [+2.3%, +7.4%]<!--/fig--> (Holm p "
                "<!--fig alpha#1 holm-->0.017<!--/fig-->, <!--fig alpha#1 verdict-->reproduced<!--/fig-->); wider by "
                "<!--fig alpha#2 difference-->+0.62 [-0.44, +1.69]<!--/fig-->, p <!--fig alpha#2 p-->0.250<!--/fig-->, "
                "<!--fig alpha#2 seeds_observed-->> 1000<!--/fig--> seeds per arm (<!--fig alpha#2 seeds_paper-->2<!--/fig--> "
                "at the paper's).\n"
                "Its lead: <!--fig alpha/wide vs_baseline-->-0.20 [-1.23, +0.83]<!--/fig-->, p "
                "<!--fig alpha/wide vs_baseline_p-->0.702<!--/fig-->; beta: <!--fig beta#1 difference-->-7.42 [-8.55, -6.28]"
                "<!--/fig-->, Holm p <!--fig beta#1 holm-->2.0e-05<!--/fig-->.\n"
                "Pooled sd <!--fig alpha bleu_sd-->0.40<!--/fig--> on <!--fig alpha bleu_df-->29<!--/fig--> df, "
                "<!--fig alpha log_ppl_sd-->1.26%<!--/fig-->; <!--fig beta calibration-->1.51<!--/fig--> (95% CI "
                "<!--fig beta calibration_interval-->1.08 to 2.26<!--/fig-->, <!--fig beta calibration_df-->58<!--/fig--> df).\n"
                "A line with no figure.\n")
    written = read(page)
    check(result.returncode == 0 and written == expected,
          "a page of figures alone: each figure rewritten as its key gives it, nothing else touched" + result.stderr
          + "".join(f"\n  page:     {a}\n  expected: {b}" for a, b in zip(written.split("\n"), expected.split("\n")) if a != b))
    check(tool(page, "--ablations", sweeps, "--check").returncode == 0, "--check passes on the figures just written")
    shown = "The syntax: `<!--fig KEY-->TEXT<!--/fig-->`, and `<!--fig` alone.\n"
    write(page, shown + "<!--fig tally-->x<!--/fig-->\n")
    result = tool(page, "--ablations", sweeps)
    check(result.returncode == 0 and read(page).startswith(shown),
          "a marker inside a code span is text: left as written, not an error" + result.stderr)

    stale = expected.replace("<!--fig alpha#1 holm-->0.017", "<!--fig alpha#1 holm-->0.018")
    write(page, stale)
    result = tool(page, "--ablations", sweeps, "--check")
    check(result.returncode == 1 and f"{page}:4: the figure \"alpha#1 holm\" is out of date" in result.stderr and "0.018" in result.stderr
          and "0.017" in result.stderr and read(page) == stale,
          "--check exits 1 naming the line of a stale figure, writing nothing" + result.stderr)

    for body, line, what, why in (
            ("Text.\nHolm p <!--fig alpha#1 holms-->0.017<!--/fig-->\n", 2, "holms", "a field a claim does not have"),
            ("<!--fig alpha#9 holm-->0.017<!--/fig-->\n", 1, "has no claim alpha#9", "a claim that is not there"),
            ("<!--fig alpha/narrow vs_baseline-->x<!--/fig-->\n", 1, "has no variant alpha/narrow", "a variant that is not there"),
            ("<!--fig gamma bleu_sd-->0.40<!--/fig-->\n", 1, os.path.join("gamma", "summary.json"), "a sweep that is not there"),
            ("<!--fig beta#2 seeds_paper-->x<!--/fig-->\n", 1, "has no seeds_paper for beta#2", "a field a claim lacks"),
            ("<!--fig family all-->4<!--/fig-->\n", 1, "family all", "a count that is not one"),
            ("Text.\n\nsd <!--fig alpha bleu_sd-->0.40\n<!--/fig-->\n", 3, "without its end", "a figure without its end on its line")):
        write(page, body)
        result = tool(page, "--ablations", sweeps, "--check")
        check(result.returncode == 2 and f"{page}:{line}:" in result.stderr and what in result.stderr,
              f"{why}: exit 2 naming the page's line" + result.stderr)

    summary = json.loads(read(os.path.join(sweeps, "beta", "summary.json")))
    summary["adjustment"]["sweeps"] = ["beta"]
    write(os.path.join(sweeps, "beta", "summary.json"), json.dumps(summary))
    write(page, "<!--fig tally-->x<!--/fig-->\n")
    result = tool(page, "--ablations", sweeps, "--check")
    check(result.returncode == 2 and f"{page}:1:" in result.stderr and "adjust over different sweeps" in result.stderr,
          "summaries that adjust over different sweeps: exit 2, no tally of a family that is not one" + result.stderr)
    summary["adjustment"] = {"sweeps": 3}
    write(os.path.join(sweeps, "beta", "summary.json"), json.dumps(summary))
    result = tool(page, "--ablations", sweeps, "--check")
    check(result.returncode == 2 and f"{page}:1:" in result.stderr and "no list of \"sweeps\"" in result.stderr,
          "an adjustment that names no list of sweeps: exit 2 naming it, not a traceback" + result.stderr)

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
