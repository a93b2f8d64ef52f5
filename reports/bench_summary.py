#!/usr/bin/env python3
"""Benchmark JSON (Google Benchmark --benchmark_out of bench/linear_bench, attention_bench,
model_bench and the per-op bench/<op>_bench) -> a Markdown summary: each speed goal of issue 5
with the measured ratio, the thread scaling 1 -> 2 threads of every benchmark, the per-op kernels
against the reference in one table, and the machine each file was measured on.

    /usr/bin/python3 reports/bench_summary.py reports/bench/cpu-avx3/*.json --out /tmp/summary.md

(bench/run_benches.sh runs it once per target through reports/bench_targets.py.)

A file that is not benchmark JSON stops the script with exit code 2 and a message naming it;
nothing is written then. The output is written atomically (temporary file, then rename).
"""
import argparse
import json
import math
import os
import sys
import tempfile

LINEAR, ATTENTION, MODEL, OPS = "linear", "attention", "model", "ops"
# The counters every per-op benchmark (bench/<op>_bench.cc) reports, and attention's do not all.
OP_COUNTERS = ("x_reference", "GB_per_s")
GEMM_GOAL, TRAIN_GOAL, FORWARD_GOAL = 1.0, 1.5, 1.3


class InputError(Exception):
    pass


def parse_name(name):
    """'BM_X/rows:512/threads:2/min_time:0.300/real_time' -> ('BM_X', {'rows': 512, 'threads': 2});
    a named case stays in the family: 'BM_ActivationForward/gelu/rows:4/...' -> 'BM_ActivationForward/gelu'."""
    parts = name.split("/")
    family, args = parts[0], {}
    for part in parts[1:]:
        key, sep, value = part.partition(":")
        if sep and key != "min_time":
            args[key] = int(value) if value.lstrip("-").isdigit() else value
        elif not sep and part != "real_time":
            family += "/" + part
    return family, args


def kind_of(benchmarks):
    families = {parse_name(b["name"])[0] for b in benchmarks}
    for kind, prefix in ((LINEAR, "BM_Linear"), (ATTENTION, "BM_Attention"), (MODEL, "BM_Model")):
        if all(f.startswith(prefix) for f in families):
            return kind
    if all(all(c in b for c in OP_COUNTERS) for b in benchmarks):
        return OPS
    return None


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not readable as JSON ({e})")
    benchmarks = data.get("benchmarks") if isinstance(data, dict) else None
    if not benchmarks or not isinstance(data.get("context"), dict):
        raise InputError(f"{path}: expected Google Benchmark output with 'context' and a non-empty 'benchmarks'")
    # With --benchmark_repetitions, each benchmark's median over the repetitions (of its time and
    # of each ratio counter) stands for it: one quiet or one disturbed repetition moves nothing.
    medians = [b for b in benchmarks if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"]
    runs = medians or [b for b in benchmarks if b.get("run_type", "iteration") == "iteration"]
    kind = kind_of(runs)
    if kind is None:
        raise InputError(f"{path}: benchmarks are not all BM_Linear*, BM_Attention* or BM_Model*, nor all per-op "
                         f"benchmarks (counters {' and '.join(OP_COUNTERS)})")
    for b in runs:
        b["family"], b["args"] = parse_name(b.get("run_name", b["name"]))  # an aggregate's name has a suffix
    repetitions = max(b.get("repetitions", 1) for b in runs) if medians else 1
    return {"path": path, "kind": kind, "context": data["context"], "runs": runs, "repetitions": repetitions}


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def shape_of(args):
    return ", ".join(f"{k} {v}" for k, v in args.items() if k != "threads")


def status(ok):
    return "met" if ok else "not met"


def gemm_goal_rows(runs):
    rows = []
    for threads in sorted({r["args"]["threads"] for r in runs}):
        ratios = [r["x_openblas"] for r in runs if r["args"]["threads"] == threads]
        below = sum(1 for x in ratios if x < GEMM_GOAL)
        rows.append([f"GEMM >= {GEMM_GOAL}x OpenBLAS (linear forward + backward, {len(ratios)} shapes)",
                     str(threads), f"geomean {fmt(geomean(ratios))} (min {fmt(min(ratios))}, max {fmt(max(ratios))})",
                     status(below == 0) + ("" if below == 0 else f": {below} of {len(ratios)} shapes below")])
    return rows


def model_goal_rows(runs):
    rows = []
    for family, goal, what in (("BM_ModelTrainStep", TRAIN_GOAL, "training step"),
                               ("BM_ModelForward", FORWARD_GOAL, "forward")):
        for r in sorted((r for r in runs if r["family"] == family),
                        key=lambda r: (r["args"]["batch"] * r["args"]["length"], r["args"]["threads"])):
            a = r["args"]
            ratio = r.get("x_libtorch")
            measured, verdict = "no libtorch peer in this build", "not measured"
            if ratio is not None:
                measured, verdict = fmt(ratio), status(ratio >= goal)
                if "peak_fraction" in r and "fma_peak_GFLOPs" in r:
                    measured += peak_fractions(r, ratio, goal)
            rows.append([f"{what} >= {goal}x libtorch (batch {a['batch']} x {a['length']})", str(a["threads"]),
                         measured, verdict])
    return rows


def peak_fractions(run, ratio, goal):
    """Where both runs stand against the measured FMA peak, and what the goal would take: goal x
    libtorch's GFLOP/s. Above 1, no implementation of these FLOPs can reach the goal here. Ours is
    the benchmark's own peak_fraction (each repetition's GFLOP/s over the peak measured right after
    it, then the median), not a quotient of two medians taken from different repetitions."""
    ours = run["peak_fraction"]
    theirs = ours / ratio
    needed = goal * theirs
    note = " (beyond the peak)" if needed > 1 else ""
    return (f"; of the FMA peak: ours {fmt(ours)}, libtorch {fmt(theirs)}, "
            f"{goal}x libtorch needs {fmt(needed)}{note}")


def attention_goal_rows(runs):
    rows = []
    for family, what in (("BM_AttentionForward", "forward"), ("BM_AttentionBackward", "backward")):
        for threads in sorted({r["args"]["threads"] for r in runs if r["family"] == family}):
            chosen = [r for r in runs if r["family"] == family and r["args"]["threads"] == threads]
            lengths = sorted(r["args"]["T"] for r in chosen)
            ratios = [r["x_reference"] for r in chosen]
            ours = max(r["peak_MiB"] for r in chosen)
            theirs = max(r["reference_peak_MiB"] for r in chosen)
            rows.append([f"attention {what} vs the reference, T {lengths[0]}..{lengths[-1]}", str(threads),
                         f"x_reference {fmt(min(ratios))}..{fmt(max(ratios))}; peak heap at most "
                         f"{fmt(ours)} MiB (reference {fmt(theirs)} MiB)", "measured (no numeric goal)"])
    return rows


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


MS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def milliseconds(run):
    """A run's real_time in ms: Google Benchmark writes each benchmark in its own time_unit (the
    attention rows in us, the model rows in ms), so one file's rows do not share a unit."""
    unit = run.get("time_unit", "ns")
    if unit not in MS_PER_UNIT:
        raise InputError(f"{run['name']}: unknown time_unit {unit!r} (expected one of {', '.join(MS_PER_UNIT)})")
    return run["real_time"] * MS_PER_UNIT[unit]


def fmt_ms(x):
    return f"{x:.3f}" if x >= 1 else f"{x:.4g}"  # a 27 us row keeps its digits


def scaling_rows(runs, columns):
    """One row per shape: each column's value at 1 and 2 threads, and t(1 thread) / t(2 threads)."""
    by_shape = {}
    for r in runs:
        numbers = tuple(v for k, v in r["args"].items() if k != "threads")
        key = (r["family"], numbers, shape_of(r["args"]))
        by_shape.setdefault(key, {})[r["args"]["threads"]] = r
    rows = []
    for (family, _, shape), by_threads in sorted(by_shape.items()):
        one, two = by_threads.get(1), by_threads.get(2)
        row = [family.removeprefix("BM_"), shape]
        for r in (one, two):
            row.append(fmt_ms(milliseconds(r)) if r else "-")
            row += [fmt(r.get(c)) if r else "-" for c in columns]
        row.append(fmt(milliseconds(one) / milliseconds(two)) if one and two else "-")
        rows.append(row)
    return rows


def detail_section(run_file, columns, title):
    header = ["benchmark", "shape", "1 thread (ms)"] + [f"{c} (1)" for c in columns]
    header += ["2 threads (ms)"] + [f"{c} (2)" for c in columns] + ["scaling 1 -> 2"]
    return [f"## {title}", "", f"From `{os.path.basename(run_file['path'])}`.", ""] + table(
        header, scaling_rows(run_file["runs"], columns)) + [""]


def machine_lines(files):
    header = ["file", "date", "cpu", "cpus x MHz", "cpu backend", "load average (1, 5, 15 min)", "libtorch",
              "figures"]
    rows = []
    for f in files:
        c = f["context"]
        load = ", ".join(fmt(x) for x in c.get("load_avg", [])) or "-"
        rows.append([os.path.basename(f["path"]), c.get("date", "-"), c.get("cpu_model", "-"),
                     f"{c.get('num_cpus', '-')} x {c.get('mhz_per_cpu', '-')}", c.get("cpu_backend", "-"), load,
                     c.get("libtorch", "-"),
                     f"medians of {f['repetitions']} repetitions" if f["repetitions"] > 1 else "one run"])
    return ["## Machine", ""] + table(header, rows) + [""]


DETAIL = {
    LINEAR: (["GFLOPs", "x_openblas", "x_eigen"], "GEMM (linear) vs OpenBLAS and Eigen"),
    ATTENTION: (["x_reference", "peak_MiB", "reference_peak_MiB"], "Attention vs the reference (unfused)"),
    MODEL: (["GFLOPs", "peak_fraction", "x_libtorch"],
            "Models vs libtorch (paper-base; ModelTrainStepMulti30k: the Multi30K model)"),
    OPS: (["x_reference", "GB_per_s"], "Per-op kernels vs the reference (bench/<op>_bench)"),
}
# Below this x_reference at 1 thread an op is listed as slower than the reference: the op
# benchmarks' repetitions on these machines spread by about 10%.
OP_SLOWER = 0.9


def op_lines(op_files):
    """One section for every per-op file: their rows in one table, and the ops slower than the
    reference at 1 thread named above it."""
    runs = [r for f in op_files for r in f["runs"]]
    slower = sorted(f"{r['family'].removeprefix('BM_')} ({shape_of(r['args'])}: {fmt(r['x_reference'])})"
                    for r in runs if r["args"].get("threads") == 1 and r["x_reference"] < OP_SLOWER)
    merged = {"path": ", ".join(os.path.basename(f["path"]) for f in op_files), "runs": runs}
    lines = detail_section(merged, *DETAIL[OPS])
    note = (f"Slower than the reference at 1 thread (x_reference < {OP_SLOWER}): " + "; ".join(slower) + "."
            if slower else f"None slower than the reference at 1 thread (x_reference < {OP_SLOWER}).")
    return lines[:4] + [note, ""] + lines[4:]


def summarize(files):
    goals = []
    for f in files:
        if f["kind"] == LINEAR:
            goals += gemm_goal_rows(f["runs"])
        elif f["kind"] == MODEL:
            goals += model_goal_rows(f["runs"])
        elif f["kind"] == ATTENTION:
            goals += attention_goal_rows(f["runs"])
    lines = ["# Benchmark summary", "",
             "Generated by `reports/bench_summary.py` from the JSON files below. Ratios are the peer's "
             "time over ours in the same process (> 1: ours is faster); scaling is the time at 1 thread "
             "over the time at 2.", ""]
    if goals:  # per-op files alone have none
        lines += ["## Goals (issue 5)", ""] + table(["goal", "threads", "measured", "status"], goals) + [""]
    for kind in (LINEAR, ATTENTION, MODEL):
        for f in files:
            if f["kind"] == kind:
                lines += detail_section(f, *DETAIL[kind])
    op_files = [f for f in files if f["kind"] == OPS]
    if op_files:
        lines += op_lines(op_files)
    return "\n".join(lines + machine_lines(files))


def write_atomic(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="benchmark JSON files")
    parser.add_argument("--out", required=True, help="Markdown file to write")
    args = parser.parse_args(argv)
    try:
        files = [load(p) for p in args.inputs]
    except InputError as e:
        print(f"bench_summary: {e}", file=sys.stderr)
        return 2
    write_atomic(args.out, summarize(files) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
