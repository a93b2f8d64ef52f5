#!/usr/bin/python3
"""reports/render.py on the committed fixtures (conformance/reports/fixtures/): a run report,
an ablation over heads as `trepro ablate` lays it out (summary.json, schema_version 2, with one
report per variant and seed, DIR/<variant>/seed_<S>/report.json: two seeds, one variant with a
seed not run yet, one variant not run at all, one cell copied from its twin in another sweep, a
baseline and two claims) and an attention file.

Checks the fixtures follow the report schemas, the Markdown tables carry their numbers (mean ±
sd over seeds, the advantage over the baseline, the claims' verdict column), the paper's Table 3
rows are matched to the variants by the setting they change from the baseline (sizes by the
factor of the change), every linked figure
exists and is a valid SVG (or PNG), the mean ± sd plot draws its error bars, the output is
byte-identical when rendered twice, and bad inputs (an old schema_version 1 summary among them,
NaN or Infinity in a report) fail with exit 2 and a message naming the file (validate_report.py:
exit 1). Exit 77 (ctest: skipped) when matplotlib is not importable.
"""
import filecmp
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

from recipe_fixture import add_recipe_variants

try:
    import matplotlib  # noqa: F401
except ImportError:
    print(f"render_test: skipped: matplotlib is not importable by {sys.executable} "
          "(scripts/setup installs python3-matplotlib)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
RENDER = os.path.join(HERE, "..", "..", "reports", "render.py")
FIXTURES = os.path.join(HERE, "fixtures")
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def render(inputs, out, fmt="svg"):
    return subprocess.run([sys.executable, RENDER, *inputs, "--out", out, "--format", fmt],
                          capture_output=True, text=True)


def summary_checks(out):
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as f:
        md = f.read()
    check("| tiny_run | multi30k de-en | 3+3 | 256 | 8 | 512 | post | relu | sinusoidal | 60 | 10.68 | 11.50 | "
          "30.12 | 33.40 | reference-f32 | 4320 |" in md, "runs table row of tiny_run")
    check("| heads1 seed 1 | multi30k de-en | 3+3 | 256 | 1 |" in md and "| heads8 seed 1 | multi30k de-en | 3+3 | "
          "256 | 8 |" in md, "the cells table lists each (variant, seed) that ran")
    check("| heads8 seed 2 (copy of table3_size/base/seed_2) | multi30k de-en | 3+3 | 256 | 8 |" in md,
          "a cell copied from its twin in another sweep names it")
    check("Training pace: 4 cells trained on reference-f32 (2 threads a cell), median 4320 target tokens/s and "
          "0.2 min of training a cell: 288.0 cells an hour, one after another at that pace" in md,
          "the sweep's pace counts the cells it trained (not the copy) by their report timings")
    check("| seed_1 |" not in md and md.count("| heads1 seed 1 |") == 1,
          "cell reports are rendered with their ablation, not again as runs of their own")
    check("Seeds: 1, 2; baseline: heads8" in md, "the seeds and the baseline are named")
    check("; test_2016_flickr decoded from best.safetensors with beam 4, alpha 0.6, max length source + 50\n" in md,
          "the test set every cell decoded is named, and no other")
    check("- heads1: heads 1; 2 of 2 seeds run" in md, "ablation names the setting each variant varies")
    check("- heads4: heads 4; 1 of 2 seeds run (not run yet: seed 2)" in md, "a cell not run yet is listed as such")
    check("- heads16: not run yet" in md, "a variant not run yet is listed as such")
    check("| variant | settings | seeds run | best val PPL | test PPL | sacreBLEU | tok-lc BLEU | "
          "sacreBLEU vs heads8 [95% interval] | p | outcome |" in md, "ablation table header (mean ± sd, vs baseline)")
    check("| heads1 | model.heads=1 | 2/2 | 11.78 ± 0.19 | 14.05 ± 0.28 | 25.90 ± 0.57 | 28.65 ± 0.57 | "
          "-3.90 [-5.21, -2.63] | 1.0e-04 | worse |" in md, "heads1: mean ± sd over 2 seeds, BLEU vs the baseline, worse")
    check("| heads4 | model.heads=4 | 1/2 | 11.22 | 12.75 | 28.75 | 31.50 | -1.37 [-2.58, -0.19] | 0.024 | "
          "pending (1 of 2 seeds) |" in md, "heads4: one seed of two, its comparison pending")
    check("| heads8 | model.heads=8 | 2/2 | 10.77 ± 0.12 | 11.70 ± 0.28 | 29.80 ± 0.45 | 33.13 ± 0.38 | "
          "(baseline) | | |" in md, "heads8: the baseline")
    check("| heads16 | model.heads=16 | 0/2 |  |  |  |  |  |  | pending (0 of 2 seeds) |" in md,
          "heads16: no cell run, blanks")
    verdicts = column(md, "### Claims", "verdict")
    check(verdicts == ["reproduced", "inconclusive (within the cap)", "inconclusive", "pending (1 of 2 seeds)"],
          f"claims table: verdict column {verdicts}")
    check(column(md, "### Claims", "per seed") == ["seed 1: +4.62, seed 2: +3.18", "seed 1: +1.24, seed 2: +0.79",
                                                   "seed 1: heads1 diverged, seed 2: no test_perplexity",
                                                   "seed 1: -1.37, seed 2: none yet"],
          "claims table: per-seed advantages, a diverged training, a missing metric")
    check("| 8 heads translate better than 1 head (Table 3 (A)) | heads8 | heads1 | sacreBLEU | "
          "seed 1: +4.62, seed 2: +3.18 | +3.90 [+2.63, +5.21] | every seed for the claim | 1.0e-04 | 3.0e-04 | "
          "3.0e-04 |  |  | reproduced |" in md, "claims table: a reproduced BLEU claim, raw, Holm and BH p")
    check("| 8 heads reach a lower validation perplexity than 1 head | heads8 | heads1 | test PPL | "
          "seed 1: +1.24, seed 2: +0.79 | +8.2% [-1.0%, +17.4%] | every seed for the claim | 0.066 | 0.198 | 0.099 | "
          "7; 5 |  | inconclusive (within the cap) |" in md,
          "claims table: an inconclusive perplexity claim on log test perplexity, with the seeds it needs")
    check("| 4 heads translate as well as 8 | heads4 ≈ heads8 | within ±1 | sacreBLEU | seed 1: -1.37, seed 2: none yet "
          "|  |  |" in md, "claims table: an equivalence claim names its pair and margin, and no test while pending")
    check("| base (heads 8) | 4.92 | 25.8 | heads8 | 11.70 | 29.80 |" in md, "Table 3 base row next to heads8's means")
    check("| (A) h 1 | 5.29 | 24.9 | heads1 | 14.05 | 25.90 |" in md, "Table 3 row (A) h 1 next to heads1's means")
    check("| (A) h 4 | 5.00 | 25.5 | heads4 | 12.75 | 28.75 |" in md, "Table 3 row (A) h 4 next to heads4's mean")
    table3 = md.split("### The paper's Table 3 next to ours")[-1].split("###")[0]
    check("heads16 | " not in table3,
          "Table 3 has no row for a variant not run")
    check("`nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.3`" in md, "sacreBLEU signature shown")
    check("## Mutation score: 1/3 killed" in md, "mutation score heading counts the killed mutants")
    check("| `model_attention_no_scale` | model | attention logits not scaled by 1/sqrt(d_k) | "
          "`A.one`, `A.two`, `A.three` and 2 more (5 of 12) | 61 + 30 |" in md, "mutation row with its killers")
    check("| `bleu_no_smoothing` | bleu | no exp smoothing \\| a pipe in the text | **build failed** | 5 + 0 |" in md,
          "a mutant that did not build is shown as such, and a pipe is escaped")
    check("Slowest mutant: `model_attention_no_scale`" in md, "the slowest mutant is named")
    check("A partial run: 3 of the 33 catalogued mutants." in md, "a partial run says so")
    check("Not killed: `beam_no_early_stop`, `bleu_no_smoothing`." in md, "the mutants not killed are listed")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    check(len(links) == 11, f"11 figures linked (4 runs, 4 ablation, 3 attention blocks), found {len(links)}")
    check("ablation0_variants.svg" in links and "ablation0_bleu.svg" not in links,
          "the ablation links its mean ± sd plot (instead of BLEU per run)")
    return links


def column(md, heading, name):
    """The values of one column of the first table after `heading`."""
    rows = [line for line in md.split(heading, 1)[-1].split("\n\n", 2)[1].split("\n") if line.startswith("|")]
    split = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]
    if len(split) < 2 or name not in split[0]:
        return None
    return [row[split[0].index(name)] for row in split[2:]]


def svg_texts(path):
    """The texts of a matplotlib SVG (each drawn as paths after a comment holding it)."""
    with open(path, encoding="utf-8") as f:
        return set(re.findall(r"<!-- (.*?) -->", f.read()))


def figure_checks(out):
    texts = svg_texts(os.path.join(out, "ablation0_variants.svg"))
    check({"sacreBLEU (test)", "best validation perplexity", "heads1", "heads4", "heads8", "mean ± sd over seeds",
           "n=2", "n=1"} <= texts and "heads16" not in texts,
          "mean ± sd plot: sacreBLEU and best validation PPL per variant run, with n")
    with open(os.path.join(out, "ablation0_variants.svg"), encoding="utf-8") as f:
        error_bars = len(re.findall(r'id="LineCollection_', f.read()))
    check(error_bars >= 2, f"mean ± sd plot draws error bars in both panels ({error_bars} line collections)")
    texts = svg_texts(os.path.join(out, "ablation0_learning_curves.svg"))
    check({"heads1 seed 1 train", "heads1 seed 2 validation", "heads4 seed 1 validation", "heads8 seed 2 train"}
          <= texts and not any(t.startswith("heads4 seed 2") for t in texts),
          "learning curves: one curve per cell that ran, labelled \"variant seed S\"")


def fixtures_follow_the_schema():
    """The fixtures are what `trepro train` and `trepro ablate` write: valid against
    reports/schema.json and reports/ablation_schema.json."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        check(False, f"jsonschema importable by {sys.executable} (scripts/setup installs python3-jsonschema)")
        return
    validate = os.path.join(HERE, "..", "..", "reports", "validate_report.py")
    cells = sorted(glob.glob(os.path.join(FIXTURES, "ablation_heads", "*", "seed_*", "report.json")))
    check(len(cells) == 5, f"5 cell reports in the ablation fixture, found {len(cells)}")
    reports = [os.path.join(FIXTURES, "tiny_run", "report.json")] + cells
    result = subprocess.run([sys.executable, validate, *reports], capture_output=True, text=True)
    check(result.returncode == 0, f"run fixtures valid against reports/schema.json {result.stderr.strip()}")
    result = subprocess.run([sys.executable, validate, os.path.join(FIXTURES, "ablation_heads", "summary.json")],
                            capture_output=True, text=True)
    check(result.returncode == 0, "ablation fixture valid against reports/ablation_schema.json, chosen by its kind "
          f"{result.stderr.strip()}")
    result = subprocess.run([sys.executable, validate, "--schema", os.path.join(HERE, "..", "..", "reports",
                             "mutation_score_schema.json"), os.path.join(FIXTURES, "mutation_score.json")],
                            capture_output=True, text=True)
    check(result.returncode == 0,
          f"mutation score fixture valid against reports/mutation_score_schema.json {result.stderr.strip()}")


def non_json_numbers(tmp):
    """NaN, Infinity and -Infinity, which Python's json reads though JSON has none: a run report
    with one (a NaN passes every bound of the schema), or an ablation cell's report with one, is
    refused by render.py (exit 2, nothing written) and by validate_report.py (exit 1), each naming
    the file and the literal."""
    validate = os.path.join(HERE, "..", "..", "reports", "validate_report.py")
    with open(os.path.join(FIXTURES, "tiny_run", "report.json"), encoding="utf-8") as f:
        text = f.read()
    check('"bleu": 30.12,' in text and '"perplexity": 11.5' in text, "the run fixture has the test figures replaced")
    folder = os.path.join(tmp, "non_json_numbers")
    for literal, old, new in [("NaN", '"bleu": 30.12,', '"bleu": NaN,'),
                              ("Infinity", '"bleu": 30.12,', '"bleu": Infinity,'),
                              ("-Infinity", '"perplexity": 11.5', '"perplexity": -Infinity')]:
        report = os.path.join(folder, literal, "report.json")
        os.makedirs(os.path.dirname(report))
        with open(report, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        out = os.path.join(folder, literal + "_out")
        result = render([report], out)
        check(result.returncode == 2 and f"{report}: not JSON: {literal} is not a JSON value" in result.stderr
              and not os.path.exists(os.path.join(out, "summary.md")),
              f"render.py: a run report with {literal}: exit 2 naming the file and {literal} ({result.stderr.strip()})")
        result = subprocess.run([sys.executable, validate, report], capture_output=True, text=True)
        check(result.returncode == 1 and f"{report}: not JSON: {literal} is not a JSON value" in result.stderr
              and "valid" not in result.stdout,
              f"validate_report.py: a run report with {literal}: exit 1 naming the file and {literal} "
              f"({result.stdout.strip()} {result.stderr.strip()})")
    # The other reports on the command line are still validated.
    nan_report = os.path.join(folder, "NaN", "report.json")
    good = os.path.join(FIXTURES, "tiny_run", "report.json")
    result = subprocess.run([sys.executable, validate, nan_report, good], capture_output=True, text=True)
    check(result.returncode == 1 and f"{good}: valid" in result.stdout,
          f"validate_report.py goes on to the next report ({result.stdout.strip()} {result.stderr.strip()})")
    missing = os.path.join(folder, "missing.json")
    result = subprocess.run([sys.executable, validate, missing], capture_output=True, text=True)
    check(result.returncode == 1 and f"{missing}: cannot read" in result.stderr and "Traceback" not in result.stderr,
          f"validate_report.py: a missing report is named, not a traceback ({result.stderr.strip()[-300:]})")
    # A cell's report is read when its summary is: a NaN there is named too.
    ablation = os.path.join(folder, "ablation_heads")
    shutil.copytree(os.path.join(FIXTURES, "ablation_heads"), ablation)
    cell = os.path.join(ablation, "heads1", "seed_1", "report.json")
    with open(cell, encoding="utf-8") as f:
        cell_text = f.read()
    check(re.search(r'"bleu": [0-9.]+', cell_text) is not None, "the cell report has a test BLEU to replace")
    with open(cell, "w", encoding="utf-8") as f:
        f.write(re.sub(r'"bleu": [0-9.]+', '"bleu": NaN', cell_text, count=1))
    result = render([os.path.join(ablation, "summary.json")], os.path.join(folder, "ablation_out"))
    check(result.returncode == 2 and f"{cell}: not JSON: NaN is not a JSON value" in result.stderr,
          f"render.py: a cell report with NaN: exit 2 naming it ({result.stderr.strip()[-300:]})")


def table3_matching_checks():
    """Specs that vary several Table 3 settings, one per variant, as the table3_*.json specs do:
    each variant is matched by its one change from the baseline, sizes by their factor."""
    sys.path.insert(0, os.path.dirname(RENDER))
    import render as renderer  # noqa: E402
    base = {"heads": 8, "head_dim": 0, "layers": 3, "d_model": 256, "d_ff": 512, "dropout": 0.1,
            "label_smoothing": 0.1, "positional": "sinusoidal"}
    entries = [(name, dict(base, **change), 5.0, 30.0) for name, change in [
        ("base", {}), ("layers1", {"layers": 1}), ("layers6", {"layers": 6}), ("d_model128", {"d_model": 128}),
        ("d_model512", {"d_model": 512}), ("d_ff256", {"d_ff": 256}), ("d_ff1024", {"d_ff": 1024}),
        ("heads16_dk16", {"heads": 16, "head_dim": 16}), ("layers1_dff256", {"layers": 1, "d_ff": 256}),
        ("heads4_dk16", {"heads": 4, "head_dim": 16})]]
    lines = renderer.table3(entries, "variant", baseline="base")
    md = "\n".join(lines)
    for row, variant in [("base", "base"), ("(C) N 2", "layers1"), ("(C) d_model 256", "d_model128"),
                         ("(C) d_model 1024", "d_model512"), ("(C) d_ff 1024", "d_ff256"),
                         ("(C) d_ff 4096", "d_ff1024")]:
        check(any(line.startswith(f"| {row} | ") and f"| {variant} | " in line for line in lines),
              f"Table 3 {row} next to {variant}, matched by the factor of its change from the baseline")
    check("| layers6 |" not in md, "a change by a factor the paper has no row for is left out")
    check("| layers1_dff256 |" not in md and "| heads4_dk16 |" not in md,
          "a variant changing two settings is left out (heads 4 with d_k 16, not d_model / 4, is two)")
    check(any(line.startswith("| (A) h 16 | ") and "| heads16_dk16 |" in line for line in lines),
          "heads 16 with d_k written out as d_model / 16 is row (A): d_k follows h there")
    twins = [("sinusoidal", dict(base, head_dim=32), 5.0, 30.0),
             ("learned", dict(base, positional="learned"), 5.0, 30.0)]
    md = "\n".join(renderer.table3(twins, "variant", baseline="sinusoidal"))
    check("| (E) learned positions | 4.92 | 25.7 | learned |" in md and renderer.varied_settings(
          [v for _, v, _, _ in twins]) == ["positional"],
          "a baseline copied from a head_dim spec (head_dim 32 written out) and a variant leaving it 0 "
          "differ in positions alone")
    head_dim = [(f"head_dim{d}", dict(base, head_dim=d), 5.0, 30.0) for d in (32, 16, 8)]
    md = "\n".join(renderer.table3(head_dim, "variant", baseline="head_dim32"))
    check("| base (head_dim 32) | 4.92 | 25.8 | head_dim32 |" in md and "| (B) d_k 32 | 5.01 | 25.4 | head_dim16 |" in md
          and "| (B) d_k 16 | 5.16 | 25.1 | head_dim8 |" in md,
          "Table 3 (B): our head_dim halved and quartered from 32 next to the paper's d_k 32 and 16 (from 64)")


def render_edited_copy(folder, name, edit, what):
    """Renders a copy of the heads fixture after `edit(copy)`: its summary.md (None when rendering
    failed, which a check reports) and what `edit` returned."""
    ablation = os.path.join(folder, name)
    shutil.copytree(os.path.join(FIXTURES, "ablation_heads"), ablation)
    edited = edit(ablation)
    out = os.path.join(folder, name + "_out")
    result = render([os.path.join(ablation, "summary.json")], out)
    check(result.returncode == 0, f"render {what} ({result.stderr.strip()[-300:]})")
    if result.returncode != 0:
        return None, edited
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as f:
        return f.read(), edited


def recipe_check_checks(folder):
    """A claim's recipe check (the baseline under a second recipe, one seed run; heads1, none) is
    listed with the sweep's variants and cells but is no Table 3 row, and leaves the base row's
    label as it was."""
    md, (name, pending) = render_edited_copy(folder, "ablation_recipe", add_recipe_variants,
                                             "an ablation with a recipe check")
    if md is None:
        return
    table3 = md.split("### The paper's Table 3 next to ours")[-1].split("###")[0]
    check(f"| {name} seed 1 |" in md and f"- {name}: " in md and f"- {pending}: not run yet" in md,
          "the recipe check's variant and cell are listed with the sweep's")
    check("| base (heads 8) | 4.92 | 25.8 | heads8 |" in table3 and f"| {name} |" not in table3,
          "Table 3 keeps its base row and has no row for a variant under a claim's second recipe")


def decode_three_sets(ablation):
    """heads1 seed 1 decoded Multi30K's three test sets, as a cell run since ablate decodes them."""
    report_path = os.path.join(ablation, "heads1", "seed_1", "report.json")
    with open(report_path) as f:
        report = json.load(f)
    report["tests"] = {split: dict(report["test"], split=split)
                       for split in ("test_2016_flickr", "test_2017_flickr", "test_2017_mscoco")}
    with open(report_path, "w") as f:
        json.dump(report, f)


def decoded_sets_checks(folder):
    """The seeds line names the test sets every cell decoded, and those only some cells decoded
    (cells run before ablate decoded Multi30K's three sets) with how many."""
    md, _ = render_edited_copy(folder, "ablation_three_sets", decode_three_sets,
                               "an ablation whose cells decoded different sets")
    if md is None:
        return
    check("; test_2016_flickr decoded from best.safetensors with beam 4, alpha 0.6, max length source + 50 "
          "(test_2017_flickr and test_2017_mscoco too, in 1 of 5 cells)" in md,
          "the seeds line names the sets every cell decoded and those one cell decoded too")


def main():
    table3_matching_checks()
    with tempfile.TemporaryDirectory() as tmp:
        fixtures_follow_the_schema()
        out = os.path.join(tmp, "svg")
        result = render([FIXTURES], out)
        check(result.returncode == 0, f"render the fixtures (stderr: {result.stderr.strip()})")
        if result.returncode != 0:
            return 1
        links = summary_checks(out)
        recipe_check_checks(tmp)
        decoded_sets_checks(tmp)
        for link in links:
            path = os.path.join(out, link)
            try:
                root = ElementTree.parse(path).getroot()
                check(root.tag.endswith("svg") and len(list(root.iter())) > 50, f"{link} is a drawn SVG")
            except (OSError, ElementTree.ParseError) as e:
                check(False, f"{link} is a drawn SVG ({e})")
        if "ablation0_variants.svg" in links:
            figure_checks(out)

        again = os.path.join(tmp, "svg_again")
        render([FIXTURES], again)
        same = filecmp.cmpfiles(out, again, sorted(os.listdir(out)), shallow=False)[0]
        check(len(same) == len(os.listdir(out)), "rendering twice gives identical files")

        png = os.path.join(tmp, "png")
        result = render([os.path.join(FIXTURES, "attention_example.json")], png, "png")
        with open(os.path.join(png, "attention0_decoder_cross.png"), "rb") as f:
            check(result.returncode == 0 and f.read(8) == b"\x89PNG\r\n\x1a\n", "PNG output")

        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"kind": "train", "config": ')
        result = render([bad], os.path.join(tmp, "bad_out"))
        check(result.returncode == 2 and bad in result.stderr and "not JSON" in result.stderr,
              f"truncated JSON: exit 2 naming the file ({result.stderr.strip()})")
        with open(os.path.join(FIXTURES, "attention_example.json")) as f:
            attention = json.load(f)
        attention["attention"]["decoder_cross"][1][0] = attention["attention"]["decoder_cross"][1][0][:-1]
        with open(bad, "w") as f:
            json.dump(attention, f)
        result = render([bad], os.path.join(tmp, "bad_out"))
        check(result.returncode == 2 and "attention.decoder_cross[1][0]: shape (4, 4), expected (5, 4)"
              in result.stderr, f"wrong attention shape named ({result.stderr.strip()})")
        with open(os.path.join(FIXTURES, "ablation_heads", "summary.json")) as f:
            summary = json.load(f)
        bad_ablation = os.path.join(tmp, "ablation", "summary.json")
        os.makedirs(os.path.dirname(bad_ablation))
        for what, change, expected in [
                ("an old schema_version 1 summary", lambda d: d.update(schema_version=1), "schema_version 1"),
                ("a cell without a seed", lambda d: d["variants"][1]["cells"][0].pop("seed"), "variants[1].cells[0]"),
                ("a claim without a verdict", lambda d: d["claims"][1].pop("verdict"), "claims[1]"),
                ("a seed without an outcome", lambda d: d["claims"][2]["per_seed"][0].pop("diverged"),
                 "claims[2].per_seed[0]"),
                ("an equivalence without its margin", lambda d: d["claims"][3].pop("margin"), "claims[3]"),
                ("a claim with a pair and better/worse", lambda d: d["claims"][3].update(better="heads4", worse="heads8"),
                 "claims[3]"),
                ("a seed interval of one number", lambda d: d["claims"][0].update(seed_interval=[1.0]),
                 "claims[0].seed_interval"),
                ("statistics without a mean", lambda d: d["variants"][0]["statistics"]["test_bleu"].pop("mean"),
                 "variants[0].statistics.test_bleu"),
                ("a description that is not text", lambda d: d.update(description=5), "description: 5 is not of type"),
                ("a comparison without its metric", lambda d: d["variants"][0]["vs_baseline"].pop("metric")
                 if "vs_baseline" in d["variants"][0] else d["variants"][1]["vs_baseline"].pop("metric"),
                 "metric")]:
            data = json.loads(json.dumps(summary))
            change(data)
            with open(bad_ablation, "w") as f:
                json.dump(data, f)
            result = render([bad_ablation], os.path.join(tmp, "bad_out"))
            check(result.returncode == 2 and bad_ablation in result.stderr and expected in result.stderr,
                  f"{what}: exit 2 naming the file and {expected!r} ({result.stderr.strip()})")
        # A report in a cell the summary lists as not run (a cell training while the summary was
        # written) is not rendered, neither in the ablation nor as a run of its own.
        copied = os.path.join(tmp, "ablation_copy")
        shutil.copytree(os.path.join(FIXTURES, "ablation_heads"), copied)
        os.makedirs(os.path.join(copied, "heads16", "seed_1"))
        shutil.copy(os.path.join(copied, "heads1", "seed_1", "report.json"),
                    os.path.join(copied, "heads16", "seed_1", "report.json"))
        result = render([copied], os.path.join(tmp, "training_cell"))
        with open(os.path.join(tmp, "training_cell", "summary.md")) as f:
            md = f.read()
        check(result.returncode == 0 and "## Runs" not in md and "heads16 seed 1" not in md,
              "a report in a cell not run yet is neither a cell nor a run of its own")
        # A cell report of the wrong shape is named by the schema check, not met by a traceback.
        cell_report = os.path.join(copied, "heads1", "seed_1", "report.json")
        with open(cell_report) as f:
            report = json.load(f)
        report["curve"] = 5
        with open(cell_report, "w") as f:
            json.dump(report, f)
        result = render([os.path.join(copied, "summary.json")], os.path.join(tmp, "bad_out"))
        check(result.returncode == 2 and f"{cell_report}: curve: 5 is not of type 'array'" in result.stderr,
              f"a cell report whose curve is a number: exit 2 naming it ({result.stderr.strip()[-300:]})")
        for what, content, expected in [("bytes that are not UTF-8", b'{"kind": "\xff"}', "not UTF-8 text"),
                                        ("JSON nested 200,000 deep", b"[" * 200000, "nested too deeply")]:
            with open(bad, "wb") as f:
                f.write(content)
            result = render([bad], os.path.join(tmp, "bad_out"))
            check(result.returncode == 2 and bad in result.stderr and expected in result.stderr,
                  f"{what}: exit 2 naming the file ({result.stderr.strip()[-300:]})")
        check(not os.path.exists(os.path.join(tmp, "bad_out", "summary.md")), "no summary written on bad input")
        non_json_numbers(tmp)
    print(f"render_test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
