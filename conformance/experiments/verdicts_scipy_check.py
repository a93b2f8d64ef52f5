#!/usr/bin/python3
"""The committed verdicts (reports/ablations/*/summary.json, as `trepro verdicts` writes them)
recomputed independently with scipy and statsmodels: the pooled seed variance and its degrees of
freedom per backend and recipe (configs found again from the cells and their `shared_from`; those
whose seeds no one budget trained alike left out, as each pool's `left_out` says), every
claim's standard error, Satterthwaite df, t statistic, p value (two-sided, or TOST / beyond the
margin), interval, the Holm and Benjamini-Hochberg adjustments over the family (statsmodels'
multipletests), the verdicts, the A/A calibration factor with its chi-square interval, and the
seeds per arm for 80% power.

Usage: /usr/bin/python3 verdicts_scipy_check.py SOURCE_DIR
Exit 77 (ctest: skipped; a failure in CI) when scipy or statsmodels is missing.
"""
import glob
import json
import math
import os
import sys

try:
    from scipy import stats
    from statsmodels.stats.multitest import multipletests
except ImportError as e:
    print(f"verdicts_scipy_check: skipped: {e} (scripts/setup installs scipy and statsmodels for /usr/bin/python3)")
    sys.exit(77)

ALPHA, TARGET, PAPER_BASE_BLEU, MAX_SEEDS = 0.05, 0.8, 25.8, 1000
failures = []


def close(a, b, what, rel=1e-9, abs_=1e-12):
    if a is None or b is None or not math.isclose(a, b, rel_tol=rel, abs_tol=abs_):
        failures.append(f"{what}: summary {a!r}, scipy {b!r}")


def load(source):
    sweeps = {}
    for path in sorted(glob.glob(os.path.join(source, "reports/ablations/*/summary.json"))):
        sweeps[os.path.basename(os.path.dirname(path))] = json.load(open(path))
    if not sweeps:
        sys.exit(f"verdicts_scipy_check: no summary under {source}/reports/ablations")
    return sweeps


def superseded(name, sweeps):
    return name.endswith("_cpu") and any(not n.endswith("_cpu") and s["spec"] == sweeps[name]["spec"]
                                         for n, s in sweeps.items())


def value(cell, quantity):
    if cell.get("status") != "finished" or cell.get("awaiting_decoding"):
        return None
    key = "test_perplexity" if quantity == "log_test_perplexity" else quantity
    if key not in cell:
        return None
    return math.log(cell[key]) if quantity == "log_test_perplexity" else cell[key]


def recipe(summary, second=""):
    """A pool's key: the sweep's backend, base and common overrides, and a variant's second recipe."""
    extra = json.dumps(summary["recipes"][second], sort_keys=True) if second else ""
    return (summary.get("backend"), summary.get("base"), json.dumps(summary.get("overrides"), sort_keys=True), extra)


def claim_pool(claim, summary, pooled):
    """The claim's arms' pool; where a recipe check chose two recipes, both pools' sums together."""
    arms = claim.get("recipes", {"better": "", "worse": ""})
    keys = {recipe(summary, arms["better"]), recipe(summary, arms["worse"])}
    out = {}
    for key in keys:
        for q, (ss, df) in pooled.get(key, {}).items():
            acc = out.setdefault(q, [0.0, 0])
            acc[0] += ss
            acc[1] += df
    return out


def budgets_differ(unique):
    """Why no one budget would have trained a config's cells alike, or None: the cells that ended
    at their cap must share their last step, and none that stopped early may have gone past it."""
    ended = [(o, c["steps"], c["stopped_early"]) for o, c in sorted(unique.items())
             if c.get("status") == "finished" and "stopped_early" in c]
    capped = [(o, s) for o, s, early in ended if not early]
    for o, s in capped[1:]:
        if s != capped[0][1]:
            return f"{o} ended at its cap at step {s}, {capped[0][0]} at step {capped[0][1]}"
    early = [(o, s) for o, s, e in ended if e]
    if capped and early:
        o, s = max(early, key=lambda x: x[1])  # the first of the furthest, as sorted
        if s > capped[0][1]:
            return f"{o} stopped early at step {s}, past step {capped[0][1]}, where {capped[0][0]} ended at its cap"
    return None


def pools(sweeps, counted):
    cells = {}
    for name in counted:
        for v in sweeps[name]["variants"]:
            for c in v["cells"]:
                cells[f"{name}/{v['name']}/seed_{c['seed']}"] = c

    def origin(path):
        while path in cells and "shared_from" in cells[path]:
            path = cells[path]["shared_from"]
        return path

    # Configs: variants joined by a shared cell origin.
    groups, owner = [], {}
    for name in counted:
        for v in sweeps[name]["variants"]:
            origins = {origin(f"{name}/{v['name']}/seed_{c['seed']}") for c in v["cells"]}
            merged = [g for g in groups if g["origins"] & origins]
            group = {"origins": origins, "members": [(name, v)]}
            for g in merged:
                group["origins"] |= g["origins"]
                group["members"] += g["members"]
                groups.remove(g)
            groups.append(group)
    out, calibration, left_out = {}, [], {}
    for g in groups:
        name0, variant0 = g["members"][0]
        key = recipe(sweeps[name0], variant0.get("recipe", ""))
        pool = out.setdefault(key, {})
        unique = {}
        for name, v in g["members"]:
            for c in v["cells"]:
                unique.setdefault(origin(f"{name}/{v['name']}/seed_{c['seed']}"), c)
        why = budgets_differ(unique)
        if why:
            left_out.setdefault(key, []).append((sorted(f"{n}/{v['name']}" for n, v in g["members"]), why))
            continue
        for q in ("test_bleu", "test_bleu_tok_lc", "test_bleu_three_sets", "log_test_perplexity"):
            xs = [x for x in (value(c, q) for c in unique.values()) if x is not None]
            if len(xs) > 1:
                m = sum(xs) / len(xs)
                ss = sum((x - m) ** 2 for x in xs)
                acc = pool.setdefault(q, [0.0, 0])
                acc[0] += ss
                acc[1] += len(xs) - 1
                if q == "test_bleu":
                    for _, v in g["members"]:
                        aa = v.get("aa_bootstrap")
                        if aa and aa["n"] == len(xs):
                            pairs = [p["bootstrap_variance"] for p in aa["pairs"]]
                            per_system = sum(pairs) / len(pairs) / 2
                            close(aa["per_system_variance"], per_system, f"{name0}/{v['name']}: per_system_variance")
                            calibration.append((ss / (len(xs) - 1), per_system, len(xs)))
                            break
    return out, calibration, left_out


def paper_effect(claim, summary):
    """The paper's effect in the test's units, from the cells: a perplexity's log ratio, or BLEU
    scaled by the mean over the baseline's cells (under the worse arm's recipe where the sweep ran
    the baseline so) over the paper's base."""
    if "paper" not in claim:
        return None
    better, worse = claim["paper"]["better"], claim["paper"]["worse"]
    quantity = claim["test"]["quantity"]
    if quantity == "log_test_perplexity":
        return math.log(worse / better)
    baseline = summary.get("baseline")
    if not isinstance(baseline, str):
        return None
    recipe_name = claim.get("recipes", {}).get("worse", "")
    names = ([f"{baseline},recipe={recipe_name}"] if recipe_name else []) + [baseline]
    variants = {v["name"]: v for v in summary["variants"]}
    for name in names:
        xs = [x for x in (value(c, quantity) for c in variants.get(name, {}).get("cells", [])) if x is not None]
        if xs:
            return (better - worse) * (sum(xs) / len(xs)) / PAPER_BASE_BLEU
    return None


def power(effect, sd2, df0, now, test_set, level, margin):
    for n in range(2, MAX_SEEDS + 1):
        df_pool = df0 + 2 * max(0, n - now)
        seed_part = sd2 * 2 / n
        total = seed_part + test_set
        se, df = math.sqrt(total), df_pool * (total / seed_part) ** 2
        if margin > 0:
            c = stats.t.ppf(1 - level, df)
            hi, lo = (margin - effect) / se - c, (-margin - effect) / se + c
            p = 0.0 if hi <= lo else max(0.0, stats.t.cdf(hi, df) - stats.t.cdf(lo, df))
        else:
            c = stats.t.ppf(1 - level / 2, df)
            p = stats.t.sf(c - effect / se, df) + stats.t.cdf(-c - effect / se, df)
        if p >= TARGET:
            return n
    return f"more than {MAX_SEEDS}"


def main():
    source = sys.argv[1]
    sweeps = load(source)
    counted = [n for n in sweeps if not superseded(n, sweeps)]
    pooled, calibration, left_out = pools(sweeps, counted)
    # Calibration: df-weighted s^2 / v with its chi-square interval.
    df_c = sum(n - 1 for _, _, n in calibration)
    total = sum((n - 1) * s2 / v for s2, v, n in calibration)
    family = []
    for name in counted:
        s = sweeps[name]
        pool = pooled.get(recipe(s), {})
        model = s["variance_model"]
        summary_left_out = sorted((sorted(x["configs"]), x["why"]) for x in (model["pool"] or {}).get("left_out", []))
        if summary_left_out != sorted(left_out.get(recipe(s), [])):
            failures.append(f"{name}: pool left_out {summary_left_out}, scipy's {sorted(left_out.get(recipe(s), []))}")
        for q, (ss, df) in pool.items():
            close(model["pool"][q]["df"], df, f"{name}: pool {q} df")
            close(model["pool"][q]["sd"], math.sqrt(ss / df), f"{name}: pool {q} sd")
        if df_c:
            cal = model["calibration"]
            close(cal["factor"], total / df_c, f"{name}: calibration factor")
            close(cal["interval"][0], total / stats.chi2.ppf(0.975, df_c), f"{name}: calibration low")
            close(cal["interval"][1], total / stats.chi2.ppf(0.025, df_c), f"{name}: calibration high")
        for claim in s["claims"]:
            if claim["verdict"] == "pending":
                family.append((name, claim, 1.0, None, None))  # planned: in Holm's m
                continue
            if "evidence" not in claim or "test" not in claim:
                continue
            e, t = claim["evidence"], claim["test"]
            ss, df_pool = claim_pool(claim, s, pooled)[e["quantity"]]
            sd2 = ss / df_pool
            seed_part = sd2 * (1 / e["n_better"] + 1 / e["n_worse"])
            tot = seed_part + e["test_set_variance"]
            se, df = math.sqrt(tot), df_pool * (tot / seed_part) ** 2
            where = f"{claim['id']} ({claim['claim'][:40]})"
            close(t["standard_error"], se, f"{where}: standard error")
            close(t["df"], df, f"{where}: df")
            d = e["estimate"]
            if "margin" in e:
                m = e["margin"]
                p_eq = max(stats.t.sf((d + m) / se, df), stats.t.cdf((d - m) / se, df))
                p_beyond = min(1.0, 2 * min(stats.t.sf((d - m) / se, df), stats.t.cdf((d + m) / se, df)))
                p = p_eq if abs(d) < m else p_beyond
                half = stats.t.ppf(0.95, df) * se
            else:
                p = 2 * stats.t.sf(abs(d) / se, df)
                half = stats.t.ppf(0.975, df) * se
            close(claim["p_value"], p, f"{where}: p", rel=1e-7, abs_=1e-15)
            # Boost inverts the t at fractional df to about 1e-9 relative.
            close(claim["interval"][0], d - half, f"{where}: interval low", rel=1e-8, abs_=1e-8)
            close(claim["interval"][1], d + half, f"{where}: interval high", rel=1e-8, abs_=1e-8)
            family.append((name, claim, p, sd2, df_pool))
    ps = [p for _, _, p, _, _ in family]
    _, holm, _, _ = multipletests(ps, alpha=ALPHA, method="holm")
    _, bh, _, _ = multipletests(ps, alpha=ALPHA, method="fdr_bh")
    rejected = sum(h < ALPHA for h in holm)
    level = ALPHA / (len(ps) - rejected) if len(ps) > rejected else ALPHA
    tally = {"reproduced": 0, "contradicted": 0, "inconclusive": 0}
    for (name, claim, p, sd2, df_pool), h, q in zip(family, holm, bh):
        if claim["verdict"] == "pending":
            if "p_holm" in claim:
                failures.append(f"{claim['id']}: a pending claim with a Holm p")
            continue
        where = claim["id"]
        close(claim["p_holm"], h, f"{where}: Holm", rel=1e-7, abs_=1e-15)
        close(claim["q_bh"], q, f"{where}: BH", rel=1e-7, abs_=1e-15)
        e = claim["evidence"]
        if h >= ALPHA:
            verdict = "inconclusive"
        elif "margin" in e:
            verdict = "reproduced" if abs(e["estimate"]) < e["margin"] else "contradicted"
        else:
            verdict = "reproduced" if e["estimate"] > 0 else "contradicted"
        if claim["verdict"] != verdict:
            failures.append(f"{where}: verdict {claim['verdict']}, scipy's {verdict}")
        tally[verdict] += 1
        if verdict == "inconclusive":
            pw = claim["power"]
            close(pw["level"], level, f"{where}: power level")
            now = min(e["n_better"], e["n_worse"])
            n_obs = power(e["estimate"], sd2, df_pool, now, e["test_set_variance"], level, e.get("margin", 0))
            if pw["seeds_per_arm_at_observed_effect"] != n_obs:
                failures.append(f"{where}: seeds at the observed effect {pw['seeds_per_arm_at_observed_effect']}, scipy's {n_obs}")
            paper = paper_effect(claim, sweeps[name])
            if (pw["paper_effect"] is None) != (paper is None):
                failures.append(f"{where}: the paper's effect {pw['paper_effect']!r}, scipy's {paper!r}")
            elif paper is not None:
                close(pw["paper_effect"], paper, f"{where}: the paper's effect")
                n_paper = power(paper, sd2, df_pool, now, e["test_set_variance"], level, e.get("margin", 0))
                if pw["seeds_per_arm_at_paper_effect"] != n_paper:
                    failures.append(f"{where}: seeds at the paper's effect {pw['seeds_per_arm_at_paper_effect']}, scipy's {n_paper}")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    pending = sum(claim["verdict"] == "pending" for _, claim, _, _, _ in family)
    close(next(iter(sweeps.values()))["adjustment"]["pending"], pending, "pending claims")
    print(f"verdicts_scipy_check: {len(family) - pending} claims ({pending} more pending) agree with scipy "
          f"and statsmodels: {tally['reproduced']} reproduced, {tally['contradicted']} contradicted, "
          f"{tally['inconclusive']} inconclusive (Holm)")


main()
