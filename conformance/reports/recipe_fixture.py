"""The committed ablation fixture (fixtures/ablation_heads/) with a claim's recipe check added, as
`trepro ablate` lays it out: the baseline and heads1 again under a second recipe ("recipe":
"warmup1200", warmup 1,200 steps instead of the fixture's 10); the baseline's seed 1 has run,
its seed 2 and both of heads1's have not. Shared by render_test.py and readme_tables_test.py."""
import json
import os

RECIPE = "warmup1200"


def add_recipe_variants(ablation):
    """Adds the recipe check's two variants to the fixture copy in folder `ablation`; returns their
    names, the baseline's (one seed run) first."""
    summary_path = os.path.join(ablation, "summary.json")
    with open(summary_path, encoding="utf-8") as f:
        summary = json.load(f)
    names = []
    for arm, seeds_run in ((summary["baseline"], 1), ("heads1", 0)):
        variant = next(v for v in summary["variants"] if v["name"] == arm)
        name = f"{arm},recipe={RECIPE}"
        cells = []
        for i, cell in enumerate(variant["cells"]):
            report = f"{name}/seed_{cell['seed']}/report.json"
            if i >= seeds_run:
                cells.append({"seed": cell["seed"], "report": report, "status": "not_run"})
                continue
            with open(os.path.join(ablation, cell["report"]), encoding="utf-8") as f:
                run = json.load(f)
            run["config"]["train"]["schedule"]["warmup"] = 1200
            os.makedirs(os.path.join(ablation, os.path.dirname(report)))
            with open(os.path.join(ablation, report), "w", encoding="utf-8") as f:
                json.dump(run, f)
            cells.append({k: v for k, v in cell.items() if k != "shared_from"} | {"report": report})
        summary["variants"].append({"name": name, "recipe": RECIPE, "set": variant["set"],
                                    "config_hash": str(len(names) + 2) * 64, "cells": cells, "statistics": {}})
        names.append(name)
    summary["recipes"] = {RECIPE: {"train.schedule.warmup": 1200}}
    with open(summary_path, "w", encoding="utf-8") as f:
        json.dump(summary, f)
    return names
