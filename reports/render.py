#!/usr/bin/python3
"""Renders run reports into a Markdown summary with tables and plots.

  reports/render.py INPUT... --out DIR [--format svg|png]

INPUT: report.json files of `trepro train` (with `trepro evaluate`'s test results), ablation
summaries of `trepro ablate`, attention files of `trepro attention`, mutation scores of
conformance/mutation-score, or folders holding them.
Writes DIR/summary.md and the figures it links: learning curves, learning rate, gradient norm,
BLEU per run; per ablation (schema_version 2: one cell per variant and seed) the mean ± sd over
seeds per variant, the advantage over the baseline, the claims with their verdicts, the paper's
Table 3 rows next to our means, the cells' learning curves and a mean ± sd plot; attention
heat maps (layers x heads), and the mutation score table (render_mutants.py). Needs matplotlib
(Debian's python3-matplotlib, which scripts/setup installs); exits 2 with a message naming the
file on an input it cannot render.
"""
import argparse
import json
import os
import statistics
import sys

from render_data import InputError, load_inputs
from render_mutants import markdown_lines as mutation_score_lines

# The paper's Table 3 (newstest2013 EN-DE dev, PPL / BLEU), by the one setting a row changes
# from the base model (docs/paper.md); our runs are matched to a row by the same change.
# head_dim is d_k; the paper's row (B) keeps d_v 64, model.head_dim sets both.
PAPER_BASE = (4.92, 25.8)
PAPER_BASE_SETTINGS = {"heads": 8, "head_dim": 64, "layers": 6, "d_model": 512, "d_ff": 2048, "dropout": 0.1,
                       "label_smoothing": 0.1, "positional": "sinusoidal"}
# Sizes: our base is smaller than the paper's, so a change is matched by its factor (our d_model
# 128 against our base 256 is the paper's 256 against 512); the other settings by value.
SCALED_SETTINGS = {"head_dim", "layers", "d_model", "d_ff"}
PAPER_TABLE3 = {
    ("heads", 1): ("(A) h 1", 5.29, 24.9), ("heads", 4): ("(A) h 4", 5.00, 25.5),
    ("heads", 16): ("(A) h 16", 4.91, 25.8), ("heads", 32): ("(A) h 32", 5.01, 25.4),
    ("head_dim", 16): ("(B) d_k 16", 5.16, 25.1), ("head_dim", 32): ("(B) d_k 32", 5.01, 25.4),
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
        # head_dim as configured (0: d_model / heads); differs() tells whether d_k changed.
        "heads": run.model("heads"), "head_dim": run.model("head_dim", 0), "layers": run.model("encoder_layers"),
        "d_model": run.model("d_model"),
        "d_ff": run.model("d_ff"), "dropout": run.model("dropout"), "positional": run.model("positional"),
        "label_smoothing": run.train("label_smoothing"), "norm": run.model("norm"),
        "activation": run.model("activation"), "warmup": run.train("schedule", "warmup"),
        "lr": run.train("optimizer", "lr"),
    }


def varied(runs):
    """The settings whose values differ between the runs, in settings() order."""
    return varied_settings([settings(r) for r in runs])


def head_dim_of(values):
    """d_k of a settings() dict: head_dim as configured, 0 meaning d_model / heads."""
    return values["head_dim"] or values["d_model"] // values["heads"]


def follows_heads(values):
    """Whether d_k is d_model / heads, written out or left to the default: a twin cell copied
    from a head_dim spec writes 32 where the spec it serves leaves 0, and neither changes d_k."""
    return head_dim_of(values) == values["d_model"] // values["heads"]


def differs(key, a, b):
    """Whether settings() dicts a and b differ in `key`; head_dim only where d_k differs and does
    not just follow a change of heads or d_model (Table 3 (A) and (C) keep d_k = d_model / h)."""
    if key == "head_dim":
        return head_dim_of(a) != head_dim_of(b) and not (follows_heads(a) and follows_heads(b))
    return repr(a[key]) != repr(b[key])


def varied_settings(values):
    """The keys whose values differ between the settings() dicts given, in settings() order."""
    return [k for k in values[0] if any(differs(k, a, b) for a in values for b in values)] if values else []


def fmt(value, digits=2):
    return "" if value is None else f"{value:.{digits}f}"


def runs_table(runs):
    lines = ["| run | data | layers | d_model | heads | d_ff | norm | activation | positional | steps | "
             "best val PPL | test PPL | sacreBLEU | tok-lc BLEU | backend | target tok/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        curve = r.curve()
        # A cell copied from its twin in another sweep (`trepro ablate --share-cells`) is that
        # training, not another one: say which.
        shared = r.data.get("shared_from")
        name = f"{r.name} (copy of {shared})" if isinstance(shared, str) else r.name
        lines.append(f"| {name} | {r.direction()} | {r.model('encoder_layers')}+{r.model('decoder_layers')} | "
                     f"{r.model('d_model')} | {r.model('heads')} | {r.model('d_ff')} | {r.model('norm')} | "
                     f"{r.model('activation')} | {r.model('positional')} | {curve[-1]['step'] if curve else 0} | "
                     f"{fmt(r.best_validation_perplexity())} | {fmt(r.test_perplexity())} | {fmt(r.bleu())} | "
                     f"{fmt(r.bleu_tokenized_lowercase())} | {r.data.get('backend', '')} | "
                     f"{fmt(r.tokens_per_second(), 0)} |")
    signatures = sorted({r.bleu_signature() for r in runs if r.bleu_signature()})
    if signatures:
        lines += ["", "sacreBLEU signature: " + ", ".join(f"`{s}`" for s in signatures)]
    return lines


def paper_row(key, value, base_value):
    """The paper's Table 3 row (label, PPL, BLEU) that changes `key` as `value` changes our
    `base_value`; None when the paper has no such row."""
    if key in SCALED_SETTINGS:
        if not base_value:
            return None
        value = PAPER_BASE_SETTINGS[key] * value / base_value
    return PAPER_TABLE3.get((key, value))


def paper_row_for(values, base):
    """The paper's Table 3 row (label, PPL, BLEU) that changes the one setting in which the
    settings() dict `values` differs from `base`; None for the base itself, for more than one
    change, or for a change the paper has no row for."""
    changed = [k for k in values if differs(k, values, base)]
    if changed == ["head_dim"]:
        return paper_row("head_dim", head_dim_of(values), head_dim_of(base))
    if len(changed) == 1 and changed[0] in PAPER_BASE_SETTINGS:
        return paper_row(changed[0], values[changed[0]], base[changed[0]])
    return None


def table3(entries, our="run", note="PPL: test, else best validation", baseline=None):
    """The paper's Table 3 row next to each entry (name, settings, PPL, BLEU): the entry named
    `baseline` next to the paper's base model, each entry that changes one Table 3 setting from it
    next to the row with the same change. Without a baseline the entries must vary one Table 3
    setting, and the paper's base value of it is the base."""
    keys = varied_settings([e[1] for e in entries])
    base = next((values for name, values, _, _ in entries if name == baseline), None)
    if base is None:
        if len(keys) != 1 or keys[0] not in PAPER_BASE_SETTINGS:
            return []
        base = dict(entries[0][1], **{keys[0]: PAPER_BASE_SETTINGS[keys[0]]})
    base_value = (head_dim_of(base) if keys[0] == "head_dim" else base[keys[0]]) if len(keys) == 1 else None
    base_label = f"base ({keys[0]} {base_value})" if len(keys) == 1 else "base"
    rows, changes_matched = [], False
    for name, values, ppl, bleu in entries:
        changed = any(differs(k, values, base) for k in values)
        row = paper_row_for(values, base) if changed else (base_label,) + PAPER_BASE
        if row:
            rows.append(f"| {row[0]} | {row[1]:.2f} | {row[2]:.1f} | {name} | {fmt(ppl)} | {fmt(bleu)} |")
            changes_matched = changes_matched or changed
    if not changes_matched:
        return []
    return [f"| paper row | paper PPL | paper BLEU | our {our} | our PPL | our BLEU |",
            "|---|---|---|---|---|---|"] + rows + [
        "", "The paper's numbers are newstest2013 EN-DE with the base model; ours are smaller models on our "
        f"data ({note}): compare the direction of each change, not the values."]


def variants_table3(variants, baseline=None):
    """Table 3 next to the variants that have run under the spec's recipe, with their means over
    seeds (Table 3 is one recipe; a claim's recipe check is no row of it)."""
    entries = []
    for v in variants:
        if v.runs() and v.recipe is None:
            ppl = v.mean("test_perplexity") or v.mean("best_validation_perplexity")
            entries.append((v.name, settings(v.runs()[0]), ppl, v.mean("test_bleu")))
    return table3(entries, "variant", "means over seeds; PPL: test, else best validation", baseline)


# What the metrics of a comparison (vs_baseline, a claim) are called in the tables.
METRIC_LABELS = {"bleu": "sacreBLEU", "bleu_tok_lc": "tok-lc BLEU", "test_perplexity": "test PPL",
                 "validation_perplexity": "best val PPL", "test_bleu": "sacreBLEU", "test_bleu_tok_lc": "tok-lc BLEU",
                 "test_bleu_three_sets": "sacreBLEU, three test sets"}


def cell(text):
    """Text for a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def format_set(overrides):
    """A variant's overrides: dotted path=value, in the spec's order."""
    return ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in overrides.items())


def mean_sd(variant, metric):
    """mean ± sd of a metric over the variant's seeds (the value alone for one seed; n when
    fewer seeds have it than have run)."""
    stat = variant.statistics.get(metric)
    if not stat:
        return ""
    text = f"{stat['mean']:.2f} ± {stat['sd']:.2f}" if stat["n"] > 1 else f"{stat['mean']:.2f}"
    return text + (f" (n={stat['n']})" if stat["n"] != len(variant.runs()) else "")


def advantage(entry):
    """A comparison's pooled advantage with its interval: "+1.23 [+0.45, +2.01]"."""
    if entry.get("advantage") is None:
        return ""
    text = f"{entry['advantage']:+.2f}"
    if entry.get("interval"):
        low, high = entry["interval"]
        text += f" [{low:+.2f}, {high:+.2f}]"
    return text


def verdict(entry, seeds):
    """The verdict; a pending one says how many seeds it has."""
    if entry["verdict"] == "pending":
        return f"pending ({len(entry['per_seed'])} of {len(entry.get('seeds', seeds))} seeds)"
    return entry["verdict"]


def baseline_outcome(entry, seeds):
    """A variant against the baseline, which nobody claimed anything about: better, worse, or the
    verdict's inconclusive / pending."""
    return {"reproduced": "better", "contradicted": "worse"}.get(entry["verdict"]) or verdict(entry, seeds)


def seed_result(seed):
    """One seed of a comparison: its advantage, the variants that diverged, or the metric missing."""
    if "advantage" in seed:
        return f"{seed['advantage']:+.2f}"
    if "diverged" in seed:
        return f"{' and '.join(seed['diverged'])} diverged"
    return f"no {seed['missing']}"


def seed_outcome(seed):
    return f"seed {seed['seed']}: {seed_result(seed)}"


def seed_interval(entry):
    if not entry.get("seed_interval"):
        return ""
    low, high = entry["seed_interval"]
    return f"[{low:+.2f}, {high:+.2f}]"


def p_value(entry):
    """As the claims tables write p: three decimals, or the exponent below 0.001 (not "0.000")."""
    import readme_tables
    return readme_tables.p_text(entry.get("p_value"))


def confidence(ablation):
    value = ablation.bootstrap.get("confidence", 0.95)
    return f"{100 * value:g}%" if isinstance(value, (int, float)) else "95%"


def ablation_table(ablation):
    """Per variant: its settings, seeds run / planned, mean ± sd of each metric over seeds and its
    advantage over the baseline."""
    compared = [v.vs_baseline for v in ablation.variants if v.vs_baseline]
    header = "| variant | settings | seeds run | best val PPL | test PPL | sacreBLEU | tok-lc BLEU |"
    rule = "|---|---|---|---|---|---|---|"
    if ablation.baseline:
        metrics = sorted({c["metric"] for c in compared})
        label = METRIC_LABELS.get(metrics[0], metrics[0]) if len(metrics) == 1 else "advantage"
        header += f" {label} vs {ablation.baseline} [{confidence(ablation)} interval] | p | outcome |"
        rule += "---|---|---|"
    lines = [header, rule]
    for v in ablation.variants:
        line = (f"| {cell(v.name)} | {cell(format_set(v.set))} | {len(v.runs())}/{len(v.cells)} | "
                f"{mean_sd(v, 'best_validation_perplexity')} | {mean_sd(v, 'test_perplexity')} | "
                f"{mean_sd(v, 'test_bleu')} | {mean_sd(v, 'test_bleu_tok_lc')} |")
        if ablation.baseline:
            if v.name == ablation.baseline:
                line += " (baseline) | | |"
            elif v.vs_baseline:
                line += f" {advantage(v.vs_baseline)} | {p_value(v.vs_baseline)} | " \
                        f"{baseline_outcome(v.vs_baseline, ablation.seeds)} |"
            else:
                line += " | | |"
        lines.append(line)
    note = "Means ± sample standard deviations over the seeds run (the value alone for one seed)."
    if ablation.baseline:
        note += (" The advantage over the baseline is the variant's score minus the baseline's (perplexity: the "
                 "baseline's minus the variant's), positive where the variant is better; " + bootstrap_note(ablation)
                 + " Outcome: better or worse where the test with the pooled seed variance gives p < 0.05 (unadjusted: "
                 "no one claimed these).")
    return lines + ["", note]


def bootstrap_note(ablation):
    b = ablation.bootstrap
    return (f"sacreBLEU's interval from Student's t with the pooled seed variance plus the paired bootstrap's "
            f"test-set variance ({b.get('resamples', '?')} resamples, seed {b.get('seed', '?')}); other metrics "
            "with the pooled seed variance alone. p: that test's, two-sided.")


def claims_table(ablation):
    """Per claim of the spec: its metric, the advantage per seed, the test with the pooled seed
    variance, raw / Holm / BH p, the seeds an undecided one needs, and the verdict."""
    import readme_tables  # the README's cell texts, so the two never word a claim differently
    lines = ["| claim | better | worse | measured on | per seed | difference [interval] | seeds agree | p | Holm p "
             "| BH q | seeds/arm for 80% power (paper; observed) | shares cells with | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in ablation.claims:
        seen = {s["seed"] for s in c["per_seed"]}
        per_seed = [seed_outcome(s) for s in c["per_seed"]]
        per_seed += [f"seed {s}: none yet" for s in c.get("seeds", ablation.seeds) if s not in seen]
        if "equivalent" in c:  # an equivalence claim: the pair, and the margin in the second column
            first, second = f"{c['equivalent'][0]} ≈ {c['equivalent'][1]}", f"within ±{c['margin']:g}"
        else:
            first, second = c["better"], c["worse"]
        shared = len(c.get("shares_cells_with", []))
        verdict_cell = verdict(c, ablation.seeds) + (" (within the cap)" if c.get("within_cap") else "")
        lines.append(f"| {cell(c['claim'])} | {cell(first)} | {cell(second)} | "
                     f"{METRIC_LABELS.get(c.get('measured_on', c['metric']), c['metric'])} | {cell(', '.join(per_seed))} | "
                     f"{readme_tables.difference(c)} | {cell(c.get('seed_agreement', ''))} | "
                     f"{readme_tables.p_text(c.get('p_value'))} | {readme_tables.p_text(c.get('p_holm'))} | "
                     f"{readme_tables.p_text(c.get('q_bh'))} | {readme_tables.power(c)} | "
                     f"{shared if shared else ''} | {verdict_cell} |")
    model = ablation.data.get("variance_model") or {}
    adjustment = ablation.data.get("adjustment") or {}
    notes = ["Per seed: how much `better` beats `worse` (BLEU points, or test perplexity lowered). Difference: the "
             "tested quantity, sacreBLEU points (the mean over seeds of the whole test set's difference) or the log "
             "test perplexity ×100 (%), of the checkpoint validation selected: the best validation value is a minimum "
             "over many evaluations and biased low. Its interval and p come from Student's t with the between-seed "
             "variance pooled over every config of the sweep's backend and recipe (plus, for sacreBLEU, the paired "
             "sentence bootstrap's test-set variance, which more seeds do not shrink); 95%, or TOST's 90% for an "
             "equivalence (a ≈ b within ±margin, fixed in the spec). Verdict: reproduced / contradicted when the "
             "Holm-adjusted p over every claim of every sweep is below 0.05 (BH q is the exploratory reading beside "
             "it); inconclusive otherwise. Seed agreement is printed, not required. Within the cap: a cell of the "
             "comparison ended at the step or epoch cap while still improving. Power: seeds per arm for 80% power at "
             "the Holm level the claim faces, at the paper's effect (BLEU scaled by this baseline's BLEU / 25.8) and "
             "at the observed one; > 1000: the test set's own noise keeps the effect undecidable."]
    pool = model.get("pool") or {}
    if pool.get("test_bleu") and pool["test_bleu"].get("sd") is not None:
        bleu, ppl = pool["test_bleu"], pool.get("log_test_perplexity", {})
        text = (f"This sweep's pool ({pool.get('backend')}): sacreBLEU sd {bleu['sd']:.2f} on {bleu['df']:g} df over "
                f"{bleu['configs']} configs")
        if ppl.get("sd") is not None:
            text += f"; log test perplexity sd {100 * ppl['sd']:.2f}% on {ppl['df']:g} df"
        left_out = [config for entry in pool.get("left_out", []) for config in entry["configs"]]
        if left_out:
            text += f"; left out of it, as no one budget trained their seeds alike: {', '.join(left_out)}"
        notes.append(text + ".")
    cal = model.get("calibration")
    if cal:
        notes.append(f"A/A calibration (seed-to-seed sacreBLEU variance over the bootstrap's prediction): "
                     f"{cal['factor']:.2f} [{cal['interval'][0]:.2f}, {cal['interval'][1]:.2f}] on {cal['df']:g} df.")
    if adjustment.get("claims"):
        notes.append(f"Holm over {adjustment['claims']} claims of {len(adjustment.get('sweeps', []))} sweeps; "
                     f"{adjustment['rejected_holm']} rejected; an undecided claim faces {adjustment['power_level']:.5f}.")
    return lines + ["", " ".join(notes)]


def pace_lines(runs):
    """The sweep's own throughput, from the cells' report timings: what a cell costs on its
    backend. Copies of a twin trained nothing, and a cell still training has no final timings."""
    trained = [r for r in runs if not isinstance(r.data.get("shared_from"), str) and r.data.get("status") == "finished"
               and r.train_seconds() and r.tokens_per_second()]
    if not trained:
        return []
    lines = []
    for backend in sorted({r.data.get("backend", "") for r in trained}):
        cells = [r for r in trained if r.data.get("backend", "") == backend]
        hours = statistics.median(r.train_seconds() for r in cells) / 3600
        pace = statistics.median(r.tokens_per_second() for r in cells)
        threads = sorted({r.data.get("threads") for r in cells if isinstance(r.data.get("threads"), int)})
        lines.append(f"Training pace: {len(cells)} cell{'s' if len(cells) != 1 else ''} trained on {backend} "
                     f"({'/'.join(map(str, threads)) or '?'} thread{'s' if threads != [1] else ''} a cell), median "
                     f"{fmt(pace, 0)} target tokens/s and "
                     f"{fmt(hours) + ' h' if hours >= 1 else fmt(hours * 60, 1) + ' min'} of training a cell: "
                     f"{fmt(1 / hours, 1)} cells an hour, one after another at that pace (as the cells ran: "
                     f"cells side by side each go slower, and together faster).")
    return lines + [""]


def figures(runs, out_dir, stem, fmt_, title=None, ablation=None):
    """Learning curves, learning rate and gradient norm of every run; then BLEU per run, or for an
    ablation the mean ± sd over seeds per variant."""
    import render_plots as plots
    made = [plots.learning_curves(runs, out_dir, f"{stem}_learning_curves", fmt_),
            plots.step_series(runs, "learning_rate", "learning rate", "Learning rate", out_dir,
                              f"{stem}_learning_rate", fmt_),
            plots.step_series(runs, "grad_norm", "gradient L2 norm (before clipping)", "Gradient norm", out_dir,
                              f"{stem}_grad_norm", fmt_, log_y=True),
            plots.variant_statistics(ablation, out_dir, f"{stem}_variants", fmt_) if ablation
            else plots.bleu_bars(runs, out_dir, f"{stem}_bleu", fmt_, title)]
    return [line for name in made if name for line in (f"![{name}]({name})", "")]


def variant_lines(ablation):
    """One line per variant: the setting(s) the variants vary and its value, and the cells not
    run yet (or not finished)."""
    keys = varied(ablation.runs())
    lines = []
    for v in ablation.variants:
        runs = v.runs()
        if not runs:
            lines.append(f"- {v.name}: not run yet ({format_set(v.set) or 'the base'}, "
                         f"seed{'s' if len(v.cells) > 1 else ''} {', '.join(str(c.seed) for c in v.cells)})")
            continue
        text = f"- {v.name}: " + (", ".join(f"{k} {settings(runs[0])[k]}" for k in keys) or format_set(v.set))
        text += f"; {len(runs)} of {len(v.cells)} seeds run"
        missing = [str(c.seed) for c in v.not_run()]
        if missing:
            text += f" (not run yet: seed{'s' if len(missing) > 1 else ''} {', '.join(missing)})"
        unfinished = [f"seed {c.seed} {c.status}" for c in v.cells if c.run and c.status != "finished"]
        if unfinished:
            text += "; " + ", ".join(unfinished)
        lines.append(text)
    return lines


def and_list(names):
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def decoded_test_sets(ablation):
    """The test sets every cell that ran decoded (else the summary's split), and a note naming those
    only some cells decoded, grouped by how many: " (A and B too, in 12 of 40 cells)". Cells trained
    before ablate began decoding Multi30K's three test sets have only the first."""
    runs = ablation.runs()
    counts = {}
    for run in runs:
        for split in run.decoded_test_sets():
            counts[split] = counts.get(split, 0) + 1
    every = [split for split in sorted(counts) if counts[split] == len(runs)]
    by_count = {}
    for split in sorted(counts):
        if counts[split] < len(runs):
            by_count.setdefault(counts[split], []).append(split)
    parts = [f"{and_list(splits)} too, in {n} of {len(runs)} cells" for n, splits in sorted(by_count.items(), reverse=True)]
    return (and_list(every) if every else ablation.decoding["split"]), (f" ({'; '.join(parts)})" if parts else "")


def decoding_line(ablation):
    every, some = decoded_test_sets(ablation)
    return f"; {every} decoded from {ablation.decoding['checkpoint']} with {ablation.decoding['search']}{some}"


def ablation_tables(summary_paths):
    """The Markdown a sweep ends with (`trepro ablate`): each summary's variants, claims and cells,
    the tables render() puts in summary.md, without the plots."""
    _, ablations, _, _ = load_inputs(summary_paths)
    if not ablations:
        raise InputError("no ablation summary in " + ", ".join(summary_paths))
    md = []
    for ablation in ablations:
        md += [f"## Ablation: {ablation.name}", ""] + ablation_table(ablation) + [""]
        if ablation.claims:
            md += ["### Claims", ""] + claims_table(ablation) + [""]
        runs = ablation.runs()
        if runs:
            md += ["### Cells", ""] + runs_table(runs) + [""]
    return "\n".join(md)


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
        md += [f"## Ablation: {ablation.name}", "", ablation.description, "",
               "Seeds: " + ", ".join(str(s) for s in ablation.seeds)
               + (f"; baseline: {ablation.baseline}" if ablation.baseline else "")
               + (f"; every cell on {ablation.backend}" if ablation.backend else "")
               + (decoding_line(ablation) if ablation.decoding else ""), ""]
        md += variant_lines(ablation) + [""]
        md += ablation_table(ablation) + [""]
        if ablation.claims:
            md += ["### Claims", ""] + claims_table(ablation) + [""]
        runs = ablation.runs()
        if runs:
            paper = variants_table3(ablation.variants, ablation.baseline)
            if paper:
                md += ["### The paper's Table 3 next to ours", ""] + paper + [""]
            md += ["### Cells", ""] + runs_table(runs) + [""] + pace_lines(runs)
            md += figures(runs, out_dir, f"ablation{i}", fmt_, ablation=ablation)
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
    parser.add_argument("--out", help="output folder (summary.md and figures)")
    parser.add_argument("--format", choices=["svg", "png"], default="svg")
    parser.add_argument("--tables", action="store_true",
                        help="print the ablation summaries' tables (variants, claims, cells) as Markdown; no --out")
    args = parser.parse_args(argv)
    if bool(args.tables) == bool(args.out):
        parser.error("give --out (summary.md and figures) or --tables (Markdown on stdout)")
    try:
        print(ablation_tables(args.inputs) if args.tables else render(args.inputs, args.out, args.format))
    except InputError as e:
        print(f"render: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
