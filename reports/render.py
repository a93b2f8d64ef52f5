#!/usr/bin/python3
"""Renders run reports into a Markdown summary with tables and plots.

  reports/render.py INPUT... --out DIR [--format svg|png]

INPUT: report.json files of `trepro train` (with `trepro evaluate`'s test results), ablation
summaries of `trepro ablate`, attention files of `trepro attention`, mutation scores of
conformance/mutation-score, or folders holding them.
Writes DIR/summary.md and the figures it links: learning curves, learning rate, gradient norm,
BLEU per run, per ablation the same plus the paper's Table 3 rows next to ours, attention
heat maps (layers x heads), and the mutation score table (render_mutants.py). Needs matplotlib (Debian's python3-matplotlib, which scripts/setup
installs); exits 2 with a message naming the file on an input it cannot render.
"""
import argparse
import os
import sys

from render_data import InputError, load_inputs
from render_mutants import markdown_lines as mutation_score_lines

# The paper's Table 3 (newstest2013 EN-DE dev, PPL / BLEU), by the one setting a row changes
# from the base model (../shared/design/PAPER.md); our runs are matched to a row by the same change.
PAPER_BASE = (4.92, 25.8)
PAPER_BASE_SETTINGS = {"heads": 8, "layers": 6, "d_model": 512, "d_ff": 2048, "dropout": 0.1,
                       "label_smoothing": 0.1, "positional": "sinusoidal"}
PAPER_TABLE3 = {
    ("heads", 1): ("(A) h 1", 5.29, 24.9), ("heads", 4): ("(A) h 4", 5.00, 25.5),
    ("heads", 16): ("(A) h 16", 4.91, 25.8), ("heads", 32): ("(A) h 32", 5.01, 25.4),
    ("layers", 2): ("(C) N 2", 6.11, 23.7), ("layers", 4): ("(C) N 4", 5.19, 25.3),
    ("layers", 8): ("(C) N 8", 4.88, 25.5),
    ("d_model", 256): ("(C) d_model 256", 5.75, 24.5), ("d_model", 1024): ("(C) d_model 1024", 4.66, 26.0),
    ("d_ff", 1024): ("(C) d_ff 1024", 5.12, 25.4), ("d_ff", 4096): ("(C) d_ff 4096", 4.75, 26.2),
    ("dropout", 0.0): ("(D) P_drop 0.0", 5.77, 24.6), ("dropout", 0.2): ("(D) P_drop 0.2", 4.95, 25.5),
    ("label_smoothing", 0.0): ("(D) eps_ls 0.0", 4.67, 25.3), ("label_smoothing", 0.2): ("(D) eps_ls 0.2", 5.47, 25.7),
    ("positional", "learned"): ("(E) learned positions", 4.92, 25.7),
}


def settings(run):
    """The settings an ablation or a Table 3 row changes."""
    return {
        "heads": run.model("heads"), "layers": run.model("encoder_layers"), "d_model": run.model("d_model"),
        "d_ff": run.model("d_ff"), "dropout": run.model("dropout"), "positional": run.model("positional"),
        "label_smoothing": run.train("label_smoothing"), "norm": run.model("norm"),
        "activation": run.model("activation"), "warmup": run.train("schedule", "warmup"),
        "lr": run.train("optimizer", "lr"),
    }


def varied(runs):
    """The settings whose values differ between the runs, in settings() order."""
    values = [settings(r) for r in runs]
    return [k for k in values[0] if len({repr(v[k]) for v in values}) > 1] if values else []


def fmt(value, digits=2):
    return "" if value is None else f"{value:.{digits}f}"


def runs_table(runs):
    lines = ["| run | data | layers | d_model | heads | d_ff | norm | activation | positional | steps | "
             "best val PPL | test PPL | sacreBLEU | tok-lc BLEU | target tok/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        steps = r.steps()
        lines.append(f"| {r.name} | {r.direction()} | {r.model('encoder_layers')}+{r.model('decoder_layers')} | "
                     f"{r.model('d_model')} | {r.model('heads')} | {r.model('d_ff')} | {r.model('norm')} | "
                     f"{r.model('activation')} | {r.model('positional')} | {steps[-1]['step'] if steps else 0} | "
                     f"{fmt(r.best_validation_perplexity())} | {fmt(r.test_perplexity())} | {fmt(r.bleu())} | "
                     f"{fmt(r.bleu_tokenized_lowercase())} | {fmt(r.tokens_per_second(), 0)} |")
    signatures = sorted({r.bleu_signature() for r in runs if r.bleu_signature()})
    if signatures:
        lines += ["", "sacreBLEU signature: " + ", ".join(f"`{s}`" for s in signatures)]
    return lines


def table3(runs):
    """The paper's Table 3 row next to each run, when the runs vary one Table 3 setting: the row
    with the same value (the paper's base model for its base value)."""
    keys = varied(runs)
    if len(keys) != 1 or keys[0] not in PAPER_BASE_SETTINGS:
        return []
    key = keys[0]
    ppl = lambda r: r.test_perplexity() or r.best_validation_perplexity()  # noqa: E731
    rows = []
    for r in runs:
        value = settings(r)[key]
        if value == PAPER_BASE_SETTINGS[key]:
            row = (f"base ({key} {value})",) + PAPER_BASE
        elif (key, value) in PAPER_TABLE3:
            row = PAPER_TABLE3[(key, value)]
        else:
            continue
        rows.append(f"| {row[0]} | {row[1]:.2f} | {row[2]:.1f} | {r.name} | {fmt(ppl(r))} | {fmt(r.bleu())} |")
    if not rows:
        return []
    return ["| paper row | paper PPL | paper BLEU | our run | our PPL | our BLEU |", "|---|---|---|---|---|---|"] + rows + [
        "", "The paper's numbers are newstest2013 EN-DE with the base model; ours are smaller models on our "
        "data (PPL: test, else best validation): compare the direction of each change, not the values."]


def figures(runs, out_dir, stem, fmt_, title):
    import render_plots as plots
    made = [plots.learning_curves(runs, out_dir, f"{stem}_learning_curves", fmt_),
            plots.step_series(runs, "learning_rate", "learning rate", "Learning rate", out_dir,
                              f"{stem}_learning_rate", fmt_),
            plots.step_series(runs, "grad_norm", "gradient L2 norm (before clipping)", "Gradient norm", out_dir,
                              f"{stem}_grad_norm", fmt_, log_y=True),
            plots.bleu_bars(runs, out_dir, f"{stem}_bleu", fmt_, title)]
    return [line for name in made if name for line in (f"![{name}]({name})", "")]


def render(inputs, out_dir, fmt_):
    runs, ablations, attentions, mutation_scores = load_inputs(inputs)
    if not (runs or ablations or attentions or mutation_scores):
        raise InputError("no run report, ablation summary, attention file or mutation score in " + ", ".join(inputs))
    import render_plots as plots
    os.makedirs(out_dir, exist_ok=True)
    md = ["# Transformer reproduction: results", ""]
    if runs:
        md += ["## Runs", ""] + runs_table(runs) + [""] + figures(runs, out_dir, "runs", fmt_, "BLEU per run") + [""]
    for i, ablation in enumerate(ablations):
        md += [f"## Ablation: {ablation.name}", "", ablation.description, ""]
        keys = varied(ablation.runs)
        md += [f"- {r.name}: " + ", ".join(f"{k} {settings(r)[k]}" for k in keys) for r in ablation.runs]
        md += [f"- {name}: not run yet" for name in ablation.not_run] + [""]
        if ablation.runs:
            md += runs_table(ablation.runs) + [""]
            paper = table3(ablation.runs)
            if paper:
                md += ["### The paper's Table 3 next to ours", ""] + paper + [""]
            md += figures(ablation.runs, out_dir, f"ablation{i}", fmt_, f"BLEU per variant: {ablation.name}")
    for i, attention in enumerate(attentions):
        md += [f"## Attention: {attention.name}", "", "source: " + " ".join(attention.source),
               "", "target: " + " ".join(attention.target), ""]
        for block in attention.blocks:
            name = plots.attention_maps(attention, block, out_dir, f"attention{i}_{block}", fmt_)
            md += [f"![{block}]({name})", ""]
    for score in mutation_scores:
        md += mutation_score_lines(score, heading="##") + [""]
    path = os.path.join(out_dir, "summary.md")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    os.replace(path + ".tmp", path)  # atomic: a reader never sees half a summary
    return path


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="report/ablation/attention JSON files or folders")
    parser.add_argument("--out", required=True, help="output folder (summary.md and figures)")
    parser.add_argument("--format", choices=["svg", "png"], default="svg")
    args = parser.parse_args(argv)
    try:
        print(render(args.inputs, args.out, args.format))
    except InputError as e:
        print(f"render: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
