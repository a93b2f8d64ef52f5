"""The figures of reports/render.py, drawn with matplotlib (Debian's python3-matplotlib).

Each function writes one file and returns its name, or None when the runs hold nothing to draw.
Files are reproducible: SVG ids are salted with a constant and no date is embedded, so the same
reports render to the same bytes.
"""
import os

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams.update({"svg.hashsalt": "trepro", "font.size": 9, "axes.grid": True, "grid.alpha": 0.3})


def _save(fig, out_dir, stem, fmt):
    name = f"{stem}.{fmt}"
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(os.path.join(out_dir, name), format=fmt, bbox_inches="tight", metadata=metadata, dpi=120)
    plt.close(fig)
    return name


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _styles(runs):
    """(color, marker) per run: one color per run, or, for the cells of an ablation, one color
    per variant and one validation marker per seed of it."""
    groups, styles = [], []
    for i, run in enumerate(runs):
        if run.group is None:
            styles.append((f"C{i % 10}", "o"))
            continue
        if run.group not in groups:
            groups.append(run.group)
        index = sum(1 for r in runs[:i] if r.group == run.group)
        styles.append((f"C{groups.index(run.group) % 10}", MARKERS[index % len(MARKERS)]))
    return styles


def learning_curves(runs, out_dir, stem, fmt):
    """Training loss (the reports' curve: each step up to 100, then means of 50 steps) and
    validation loss against the step."""
    drawn = [r for r in runs if r.curve() or r.validation()]
    if not drawn:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for run, (color, marker) in zip(drawn, _styles(drawn)):
        points = [s for s in run.curve() if isinstance(s.get("loss"), (int, float))]
        if points:
            ax.plot([s["step"] for s in points], [s["loss"] for s in points], color=color, lw=1.2,
                    label=f"{run.name} train")
        val = [v for v in run.validation() if isinstance(v.get("loss"), (int, float))]
        if val:
            ax.plot([v["step"] for v in val], [v["loss"] for v in val], color=color, ls="--", marker=marker, ms=3,
                    label=f"{run.name} validation")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats per target token)")
    ax.set_title("Learning curves (train: label-smoothed; validation: unsmoothed)")
    ax.legend(fontsize=7)
    return _save(fig, out_dir, stem, fmt)


def step_series(runs, key, ylabel, title, out_dir, stem, fmt, log_y=False):
    """One field of the training curve (learning_rate, grad_norm) of every run against the step."""
    drawn = [(r, [s for s in r.curve() if isinstance(s.get(key), (int, float))]) for r in runs]
    drawn = [(r, s) for r, s in drawn if s]
    if not drawn:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for (run, steps), (color, _) in zip(drawn, _styles([r for r, _ in drawn])):
        ax.plot([s["step"] for s in steps], [s[key] for s in steps], color=color, lw=0.9, label=run.name)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7)
    return _save(fig, out_dir, stem, fmt)


def bleu_bars(runs, out_dir, stem, fmt, title):
    """sacreBLEU and tokenized lower-cased BLEU of every run that was evaluated."""
    scored = [r for r in runs if r.bleu() is not None or r.bleu_tokenized_lowercase() is not None]
    if not scored:
        return None
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(scored) + 1.5), 3.5))
    xs = range(len(scored))
    width = 0.38
    sacre = [r.bleu() or 0.0 for r in scored]
    tok = [r.bleu_tokenized_lowercase() or 0.0 for r in scored]
    bars = ax.bar([x - width / 2 for x in xs], sacre, width, label="sacreBLEU (13a, cased)")
    bars_tok = ax.bar([x + width / 2 for x in xs], tok, width, label="tokenized lower-cased")
    for group in (bars, bars_tok):
        ax.bar_label(group, fmt="%.1f", fontsize=7)
    ax.set_xticks(list(xs), [r.name for r in scored], rotation=20, ha="right")
    ax.set_ylabel("BLEU")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="lower right")
    return _save(fig, out_dir, stem, fmt)


def variant_statistics(ablation, out_dir, stem, fmt):
    """Mean ± sd over seeds per variant (error bars), with each seed's value as a dot, for
    sacreBLEU and the best validation perplexity."""
    panels = [("test_bleu", "sacreBLEU (test)"), ("best_validation_perplexity", "best validation perplexity")]
    panels = [(m, label, [v for v in ablation.variants if v.statistics.get(m)]) for m, label in panels]
    panels = [p for p in panels if p[2]]
    if not panels:
        return None
    width = max(3.2, 0.8 * max(len(p[2]) for p in panels) + 1.4)
    fig, axes = plt.subplots(1, len(panels), figsize=(width * len(panels), 3.4), squeeze=False)
    for ax, (metric, label, variants) in zip(axes[0], panels):
        xs = list(range(len(variants)))
        stats = [v.statistics[metric] for v in variants]  # sd None for one seed: no bar
        ax.errorbar(xs, [s["mean"] for s in stats], yerr=[s["sd"] or 0.0 for s in stats], fmt="o", color="C0", ms=5,
                    capsize=4, lw=1.2, label="mean ± sd over seeds")
        for x, s in zip(xs, stats):
            values = s.get("values") or []
            ax.plot([x + 0.12] * len(values), values, ls="none", marker=".", color="0.45", ms=5,
                    label="one seed" if x == 0 else None)
        for x, s in zip(xs, stats):
            ax.annotate(f"n={s['n']}", (x, s["mean"]), textcoords="offset points", xytext=(-8, -14), fontsize=6)
        ax.set_xticks(xs, [v.name for v in variants], rotation=20, ha="right")
        ax.set_xlim(-0.6, len(variants) - 0.4)
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    fig.suptitle(f"Mean ± sd over seeds per variant: {ablation.name}", fontsize=9)
    fig.tight_layout()
    return _save(fig, out_dir, stem, fmt)


def attention_maps(attention, block, out_dir, stem, fmt):
    """A grid of heat maps, one row per layer and one column per head, for one block."""
    layers = attention.blocks[block]
    queries, keys = attention._axes(block)
    rows, cols = len(layers), max(len(h) for h in layers)
    cell = max(1.6, 0.22 * max(len(queries), len(keys)))
    fig, axes = plt.subplots(rows, cols, figsize=(cell * cols + 0.6, cell * rows + 0.6), squeeze=False)
    for li, heads in enumerate(layers):
        for hi in range(cols):
            ax = axes[li][hi]
            ax.grid(False)
            if hi >= len(heads):
                ax.axis("off")
                continue
            ax.imshow(heads[hi], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
            ax.set_xticks(range(len(keys)), keys if li == rows - 1 else [""] * len(keys), rotation=90, fontsize=6)
            ax.set_yticks(range(len(queries)), queries if hi == 0 else [""] * len(queries), fontsize=6)
            if li == 0:
                ax.set_title(f"head {hi}", fontsize=8)
            if hi == 0:
                ax.set_ylabel(f"layer {li}", fontsize=8)
    fig.suptitle(f"{attention.name}: {block.replace('_', ' ')} attention (rows: queries, columns: keys)", fontsize=9)
    return _save(fig, out_dir, stem, fmt)
