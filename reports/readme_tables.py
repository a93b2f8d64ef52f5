#!/usr/bin/python3
"""The tables of an ablation's results in a Markdown page, generated from its committed
summary.json, so that every figure the page quotes is the one the summary holds.

  reports/readme_tables.py [FILE.md] [--check]

A block of FILE.md (default: the repository's docs/results.md, the manual's results page) between
the lines

  <!-- readme_tables: ../reports/ablations/<name>/summary.json -->
  <!-- /readme_tables -->

(the path relative to FILE.md's folder; the block indented as its first marker) holds two tables
of that ablation: its cells (sacreBLEU, perplexities and the best step by seed; the paper's
Table 3 row each variant matches, by render.py's matching) and its claims with their verdicts.
A figure that the page's prose quotes is written on one line as

  <!--fig KEY-->TEXT<!--/fig-->

and TEXT is what KEY gives from the summaries in reports/ablations/ (--ablations DIR for
another folder), formatted as the claims tables print it:

  tally                 the verdicts of the claims that the Holm adjustment counts together ("7
                        reproduced, 6 contradicted and 24 inconclusive"; a pending claim has none)
  family FIELD          of those claims, how many: claims, decided (reproduced or contradicted),
                        decided_within_cap (decided on a cell that ended at its cap improving),
                        undecided (inconclusive: the Holm level a next claim faces is 0.05 / that)
  CLAIM FIELD           a claim by its id (table3_size#4), FIELD one of p, holm, q, difference,
                        verdict, seeds_paper, seeds_observed (seeds per arm for 80% power)
  SWEEP/VARIANT FIELD   a variant's sacreBLEU lead over the sweep's baseline, also where no
                        claim compares them: vs_baseline (with its interval), vs_baseline_p
  SWEEP FIELD           the variance model of a sweep's backend and recipe: bleu_sd, bleu_df,
                        log_ppl_sd, calibration, calibration_interval, calibration_df

so that the prose cannot drift from the verdicts it describes (a marker inside a `code span` is
text, not a figure). A page needs a block or a figure.
Without --check the blocks and figures are rewritten (atomically); with it nothing is written, and
the exit status is 1 when one is not what its summary gives, naming its first line that differs.
Exit 2, naming the file and line, on a summary that cannot be read, a marker without its end or a
figure whose key names nothing.
"""
import argparse
import copy
import os
import re
import sys

import render
from render_data import InputError, Run, load_inputs, load_json

BEGIN = "<!-- readme_tables: "
END = "<!-- /readme_tables -->"
CELL_STATUS = {"not_run": "pending", "running": "running", "non_finite": "diverged"}
FIGURE_OPEN = "<!--fig "
FIGURE = re.compile(r"<!--fig ([^>]*)-->(.*?)<!--/fig-->")
# The committed sweeps, one folder each, whose summaries a page's figures quote.
ABLATIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ablations")
# The page that holds the committed sweeps' tables: the manual's results, claim by claim.
DEFAULT_PAGE = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "results.md"))


def planned_settings(variant, baseline):
    """render.settings() of a variant: of its first run, or before one has run, of the baseline
    run's config with the variant's overrides (dotted paths) applied; None where the baseline
    overrides a key the variant leaves to the spec's base, whose value the summary does not hold."""
    if variant.runs():
        return render.settings(variant.runs()[0])
    if any(key not in variant.set for key in baseline.set):
        return None
    base_run = baseline.runs()[0]
    config = copy.deepcopy(base_run.data["config"])
    for path, value in variant.set.items():
        *parents, key = path.split(".")
        node = config
        for parent in parents:
            node = node.setdefault(parent, {})
        node[key] = value
    return render.settings(Run(base_run.path, dict(base_run.data, config=config)))


def paper_column(ablation):
    """{variant: "its Table 3 row: PPL / BLEU"} for the variants the paper has a row for, as
    render.py matches them (a change by its factor; our 6 layers of 3 are no row; a variant under
    a claim's second recipe is none, run or not); empty without a baseline that has run, or when
    no variant's change is a row (then the base is no anchor)."""
    baseline = next((v for v in ablation.variants if v.name == ablation.baseline), None)
    if baseline is None or not baseline.runs():
        return {}
    base = render.settings(baseline.runs()[0])
    column = {}
    for v in ablation.variants:
        values = planned_settings(v, baseline) if v.recipe is None else None
        if values is None:
            continue
        changed = any(render.differs(k, values, base) for k in values)
        row = render.paper_row_for(values, base) if changed else ("base",) + render.PAPER_BASE
        if row:
            column[v.name] = f"{row[0]}: {row[1]:.2f} / {row[2]:.1f}"
    return column if len(column) > 1 else {}


def by_seed(cells, seeds, text):
    """text(cell) of each cell that finished, in seed order, else what became of it: the spec's
    seeds and those a claim adds to the variant."""
    out = []
    for seed in sorted(set(seeds) | {c.seed for c in cells}):
        cell = next((c for c in cells if c.seed == seed), None)
        status = cell.status if cell is not None and cell.run is not None else "not_run"
        out.append(text(cell) if status == "finished" else CELL_STATUS.get(status, status))
    return ", ".join(out)


def best_step(cell):
    """The best checkpoint's step and how training ended: early stopping, or the step cap."""
    stopped = cell.run.data.get("stopped_early")
    end = f"stopped at {cell.entry['steps']:,}" if stopped else "cap"
    return f"{cell.entry['best_step']:,} ({end})"


def versus_baseline(ablation, variant):
    """The variant's sacreBLEU lead over the baseline, pooled over seeds with its interval and p,
    also where no claim compares the two."""
    if variant.name == ablation.baseline:
        return "(baseline)"
    comparison = variant.vs_baseline
    if not comparison or comparison["verdict"] == "pending" or comparison.get("metric") != "bleu":
        return ""
    text = difference(comparison)
    return f"{text}, p {p_text(comparison['p_value'])}" if text and comparison.get("p_value") is not None else text


def cells_table(ablation):
    """A row a variant: the paper's Table 3 row it matches (a column only where some variant
    matches one), its cells' figures by seed, and its lead over the baseline."""
    paper = paper_column(ablation)
    baseline = f" BLEU vs {ablation.baseline} |" if ablation.baseline else ""
    lines = ["| variant |" + (" the paper's row: PPL / BLEU |" if paper else "") + " sacreBLEU by seed | "
             "mean ± sd | validation PPL | test PPL | best step (end) |" + baseline,
             "|---" * (6 + bool(paper) + bool(baseline)) + "|"]
    for v in ablation.variants:
        stat = v.statistics.get("test_bleu")
        mean = f"{stat['mean']:.2f} ± {stat['sd']:.2f}" if stat and stat["n"] > 1 else ""

        def column(key):
            return by_seed(v.cells, ablation.seeds, lambda c: f"{c.entry[key]:.2f}")
        lines.append(f"| {render.cell(v.name)} |" + (f" {paper.get(v.name, '')} |" if paper else "")
                     + f" {column('test_bleu')} | {mean} | {column('best_validation_perplexity')} | "
                     f"{column('test_perplexity')} | {by_seed(v.cells, ablation.seeds, best_step)} |"
                     + (f" {versus_baseline(ablation, v)} |" if baseline else ""))
    return lines


def difference(claim):
    """The tested difference with its interval, in the test's units: sacreBLEU points, or the log
    test perplexity in percent (x 100); an equivalence's interval is TOST's 90%."""
    test = claim.get("test")
    if not test or claim["verdict"] == "pending":
        return ""
    low, high = claim["interval"]
    if test["quantity"] == "log_test_perplexity":
        return f"{100 * test['estimate']:+.1f}% [{100 * low:+.1f}%, {100 * high:+.1f}%]"
    return f"{test['estimate']:+.2f} [{low:+.2f}, {high:+.2f}]"


def p_text(value):
    if value is None:
        return ""
    return f"{value:.1e}" if value < 0.001 else f"{value:.3f}"


def seeds_text(value):
    if value is None:
        return "–"
    return "> 1000" if isinstance(value, str) else str(value)


def power(claim):
    """Seeds per arm for 80% power at the paper's effect and at the observed one."""
    pw = claim.get("power")
    return "" if not pw else f"{seeds_text(pw['seeds_per_arm_at_paper_effect'])}; {seeds_text(pw['seeds_per_arm_at_observed_effect'])}"


def recipe_text(claim):
    """A recipe check's state: pending, or the recipe each arm was judged under."""
    check = claim.get("recipe_check")
    if not check:
        return ""
    if not check["status"].startswith("done"):
        return f" (recipe check with {check['recipe']} pending)"
    chosen = ", ".join(f"{arm} {entry['chosen']}" for arm, entry in check["arms"].items())
    return f" (recipes chosen on validation: {chosen})"


def verdict_text(claim, seeds):
    if claim["verdict"] == "pending":
        return render.verdict(claim, seeds)
    return f"**{claim['verdict']}**" + (" (within the cap)" if claim.get("within_cap") else "") + recipe_text(claim)


def claims_table(ablation):
    lines = ["| claim | metric | for the claim, by seed | difference [interval] | p | Holm p | BH q "
             "| seeds/arm for 80% power (paper; observed) | verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in ablation.claims:
        seen = {s["seed"]: s for s in c["per_seed"]}
        leads = ", ".join(render.seed_result(seen[s]) if s in seen else "pending" for s in c.get("seeds", ablation.seeds))
        metric = render.METRIC_LABELS.get(c.get("measured_on", c["metric"]), c["metric"])
        if "equivalent" in c:
            metric += f", within ±{c['margin']:g}"
        lines.append(f"| {render.cell(c['claim'])} | {metric} | {leads} | {difference(c)} | {p_text(c.get('p_value'))} | "
                     f"{p_text(c.get('p_holm'))} | {p_text(c.get('q_bh'))} | {power(c)} | {verdict_text(c, ablation.seeds)} |")
    return lines


def tables(summary_path):
    _, ablations, _, _ = load_inputs([summary_path])
    if len(ablations) != 1:
        raise InputError(f"{summary_path}: not an ablation summary (`trepro ablate` writes summary.json)")
    ablation = ablations[0]
    return cells_table(ablation) + [""] + (claims_table(ablation) if ablation.claims else [])


class Summaries:
    """The sweeps' summary.json under one folder (one subfolder a sweep), each read once."""

    def __init__(self, folder):
        self.folder = folder
        self.read = {}

    def path(self, name):
        return os.path.join(self.folder, name, "summary.json")

    def __getitem__(self, name):
        if name not in self.read:
            self.read[name] = load_json(self.path(name))
        return self.read[name]

    def names(self):
        try:
            entries = sorted(os.listdir(self.folder))
        except OSError as e:
            raise InputError(f"{self.folder}: cannot list the sweeps: {e.strerror}") from e
        return [name for name in entries if os.path.isfile(self.path(name))]


def family(summaries):
    """The claims that the Holm adjustment counts together: those of the sweeps its summaries
    name in "adjustment" (a sweep another supersedes is not one), each summary naming the same."""
    try:
        scopes = {tuple(summaries[name]["adjustment"]["sweeps"]) for name in summaries.names()
                  if "adjustment" in summaries[name]}
    except (KeyError, TypeError) as e:
        raise InputError(f"{summaries.folder}: a summary's \"adjustment\" names no list of \"sweeps\" ({e!r})") from e
    if len(scopes) > 1:
        raise InputError(f"{summaries.folder}: the summaries adjust over different sweeps: "
                         + "; ".join(", ".join(scope) for scope in sorted(scopes)))
    names = scopes.pop() if scopes else summaries.names()
    return [claim for name in names for claim in summaries[name].get("claims", [])]


def tally(claims):
    counts = dict.fromkeys(("reproduced", "contradicted", "inconclusive"), 0)
    for claim in claims:
        if claim.get("verdict") in counts:
            counts[claim["verdict"]] += 1
    return f"{counts['reproduced']} reproduced, {counts['contradicted']} contradicted and {counts['inconclusive']} inconclusive"


def decided(claims):
    return [c for c in claims if c.get("verdict") in ("reproduced", "contradicted")]


FAMILY_FIELDS = {
    "claims": lambda claims: str(len(claims)),
    "decided": lambda claims: str(len(decided(claims))),
    "decided_within_cap": lambda claims: str(sum(bool(c.get("within_cap")) for c in decided(claims))),
    "undecided": lambda claims: str(sum(c.get("verdict") == "inconclusive" for c in claims)),
}


CLAIM_FIELDS = {
    "p": lambda c: p_text(c.get("p_value")),
    "holm": lambda c: p_text(c.get("p_holm")),
    "q": lambda c: p_text(c.get("q_bh")),
    "difference": difference,
    "verdict": lambda c: c["verdict"],
    "seeds_paper": lambda c: seeds_text(c["power"]["seeds_per_arm_at_paper_effect"]),
    "seeds_observed": lambda c: seeds_text(c["power"]["seeds_per_arm_at_observed_effect"]),
}
VARIANT_FIELDS = {
    "vs_baseline": lambda v: difference(v["vs_baseline"]),
    "vs_baseline_p": lambda v: p_text(v["vs_baseline"]["p_value"]),
}
POOL_FIELDS = {
    "bleu_sd": lambda m: f"{m['pool']['test_bleu']['sd']:.2f}",
    "bleu_df": lambda m: f"{m['pool']['test_bleu']['df']:.0f}",
    "log_ppl_sd": lambda m: f"{100 * m['pool']['log_test_perplexity']['sd']:.2f}%",
    "calibration": lambda m: f"{m['calibration']['factor']:.2f}",
    "calibration_interval": lambda m: "{:.2f} to {:.2f}".format(*m["calibration"]["interval"]),
    "calibration_df": lambda m: f"{m['calibration']['df']:.0f}",
}


def figure(key, summaries):
    """The text of a figure's KEY (the module's doc lists the keys); InputError where it names
    nothing or its summary lacks the field."""
    words = key.split()
    if words == ["tally"]:
        return tally(family(summaries))
    if len(words) == 2 and words[0] == "family" and words[1] in FAMILY_FIELDS:
        return FAMILY_FIELDS[words[1]](family(summaries))
    kind = "claim" if "#" in words[0] else "variant" if "/" in words[0] else "sweep"
    fields = {"claim": CLAIM_FIELDS, "variant": VARIANT_FIELDS, "sweep": POOL_FIELDS}[kind]
    if len(words) != 2 or words[1] not in fields:
        raise InputError(f"\"{key}\": expected \"tally\", \"family FIELD\" (one of {', '.join(FAMILY_FIELDS)}), "
                         f"\"CLAIM FIELD\" (one of {', '.join(CLAIM_FIELDS)}), \"SWEEP/VARIANT FIELD\" (one of "
                         f"{', '.join(VARIANT_FIELDS)}) or \"SWEEP FIELD\" (one of {', '.join(POOL_FIELDS)})")
    name, field = words
    sweep = re.split("[#/]", name)[0]
    summary = summaries[sweep]
    try:
        if kind == "sweep":
            return fields[field](summary["variance_model"])
        entries = summary.get("claims", []) if kind == "claim" else summary.get("variants", [])
        found = next((e for e in entries if name in (e.get("id"), f"{sweep}/{e.get('name')}")), None)
        if found is None:
            raise InputError(f"\"{key}\": {summaries.path(sweep)} has no {kind} {name}")
        return fields[field](found)
    except (KeyError, TypeError, IndexError, ValueError) as e:
        raise InputError(f"\"{key}\": {summaries.path(sweep)} has no {field} for {name} ({e!r})") from e


def with_figures(line, summaries):
    """The line with each figure's text as its key gives it, and how many figures it holds; a
    `code span` is left as written, so that a page can show the marker."""
    parts, count = line.split("`"), 0
    for k in range(0, len(parts), 2):
        if parts[k].count(FIGURE_OPEN) != len(FIGURE.findall(parts[k])):
            raise InputError("a figure without its end on the same line, \"<!--/fig-->\"")
        parts[k], n = FIGURE.subn(lambda m: f"{FIGURE_OPEN}{m[1]}-->{figure(m[1], summaries)}<!--/fig-->", parts[k])
        count += n
    return "`".join(parts), count


def regenerate(readme_path, summaries):
    """The page's lines with every block rewritten from its summary and every figure from the
    summaries, and [(line, what, as it was, as generated)] for each block and each line with a
    figure."""
    try:
        with open(readme_path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{readme_path}: cannot read: {getattr(e, 'strerror', None) or e}") from e
    out, blocks, i = [], [], 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        if not stripped.startswith(BEGIN):
            try:
                line, figures = with_figures(lines[i], summaries)
            except InputError as e:
                raise InputError(f"{readme_path}:{i + 1}: {e}") from e
            if figures:
                blocks.append((i, "a figure", [lines[i]], [line]))
            out.append(line)
            i += 1
            continue
        out.append(lines[i])
        if not stripped.endswith(" -->"):
            raise InputError(f"{readme_path}:{i + 1}: expected \"{BEGIN}PATH -->\"")
        summary = os.path.join(os.path.dirname(os.path.abspath(readme_path)), stripped[len(BEGIN):-len(" -->")])
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == END), None)
        if end is None:
            raise InputError(f"{readme_path}:{i + 1}: a readme_tables block without its end, \"{END}\"")
        indent = lines[i][:len(lines[i]) - len(stripped)]
        generated = [indent + line if line else "" for line in tables(summary)]
        generated = [""] + generated + ([""] if generated[-1] else [])
        blocks.append((i + 1, f"the block from {os.path.relpath(summary)}", lines[i + 1:end], generated))
        out += generated + [lines[end]]
        i = end + 1
    return out, blocks


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme", nargs="?", metavar="FILE.md", default=DEFAULT_PAGE,
                        help="the Markdown page whose blocks to write (default: docs/results.md)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 where a block or figure is out of date")
    parser.add_argument("--ablations", metavar="DIR", default=ABLATIONS,
                        help="the folder of the sweeps whose summaries the figures quote (default: reports/ablations)")
    args = parser.parse_args(argv)
    try:
        lines, blocks = regenerate(args.readme, Summaries(args.ablations))
    except InputError as e:
        print(f"readme_tables: {e}", file=sys.stderr)
        return 2
    if not blocks:
        print(f"readme_tables: {args.readme}: no \"{BEGIN}PATH -->\" block and no \"{FIGURE_OPEN}KEY-->\" figure",
              file=sys.stderr)
        return 2
    if args.check:
        stale = 0
        for line, what, was, generated in blocks:
            if was == generated:
                continue
            stale += 1
            k = next((k for k, (a, b) in enumerate(zip(was, generated)) if a != b), min(len(was), len(generated)))
            if what == "a figure":  # the figure, not its whole paragraph line
                old, new = next((a, b) for a, b in zip(FIGURE.finditer(was[0]), FIGURE.finditer(generated[0]))
                                if a[2] != b[2])
                what, was, generated = f"the figure \"{old[1]}\"", [old[2]], [new[2]]
            print(f"readme_tables: {args.readme}:{line + 1 + k}: {what} is out "
                  f"of date:\n  page:    {was[k] if k < len(was) else '(block ends)'}\n"
                  f"  summary: {generated[k] if k < len(generated) else '(block ends)'}\n"
                  f"  (/usr/bin/python3 reports/readme_tables.py {args.readme} rewrites it)", file=sys.stderr)
        return 1 if stale else 0
    temporary = args.readme + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(temporary, args.readme)  # atomic: a reader never sees half a page
    figures = sum(what == "a figure" for _, what, _, _ in blocks)
    tables = len(blocks) - figures
    print(f"{args.readme}: {tables} block{'s' * (tables != 1)} and {figures} line{'s' * (figures != 1)} of figures written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
