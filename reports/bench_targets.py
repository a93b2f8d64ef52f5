#!/usr/bin/python3
"""One bench/run_benches.sh run -> OUT/summary.md: the CPU targets against each other, the
decoding comparison with CTranslate2, then each target's own summary (reports/bench_summary.py).

    /usr/bin/python3 reports/bench_targets.py OUT

OUT holds one folder per target (OUT/cpu-avx3/{linear,attention,model}.json and
OUT/cpu-avx3/ops/<op>.json, ...), measured one after the other in that run, and OUT/decode.json
(bench/decode_bench.py; optional). The target
table compares the median time of each benchmark on each target with the first (the default):
above 1, the other target is slower. A folder or file that is not what it should be stops the
script with exit code 2 and a message naming it; nothing is written then.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_summary  # noqa: E402

KINDS = ("linear", "attention", "model")


def target_folders(out):
    folders = sorted(d for d in os.listdir(out) if d.startswith("cpu-") and os.path.isdir(os.path.join(out, d)))
    if not folders:
        raise bench_summary.InputError(f"{out}: no cpu-<target> folders (bench/run_benches.sh writes them)")
    # The default target first: the one the files say they were measured as without a forced target.
    order = ["cpu-avx3", "cpu-avx2", "cpu-sse4", "cpu-scalar"]
    return sorted(folders, key=lambda d: order.index(d) if d in order else len(order))


def load_target(out, target):
    files = []
    ops = os.path.join(out, target, "ops")
    op_paths = sorted(os.path.join(ops, n) for n in os.listdir(ops) if n.endswith(".json")) if os.path.isdir(ops) else []
    for path in [os.path.join(out, target, f"{kind}.json") for kind in KINDS] + op_paths:
        if os.path.exists(path):
            f = bench_summary.load(path)
            if f["context"].get("cpu_backend") != target:
                raise bench_summary.InputError(f"{path}: measured on {f['context'].get('cpu_backend')}, "
                                               f"but it is in the folder of {target}")
            files.append(f)
    if not files:
        raise bench_summary.InputError(f"{os.path.join(out, target)}: none of {', '.join(KINDS)}.json nor ops/*.json")
    return files


def load_text(averages):
    return ", ".join(bench_summary.fmt(x) for x in averages or [])


def key_of(run):
    return run["family"].removeprefix("BM_"), bench_summary.shape_of(run["args"]), run["args"].get("threads", 1)


def target_rows(by_target):
    """One row per benchmark measured on every target: the first target's time and each other's
    time over it, in wall time and in the main thread's CPU time (the targets run one after the
    other, so on a busy machine their wall times see different loads; at 1 thread the CPU time
    does not)."""
    first, *others = by_target
    runs = {t: {key_of(r): r for f in files for r in f["runs"]} for t, files in by_target.items()}
    rows, slower = [], {t: 0 for t in others}
    for key in sorted(runs[first]):
        if not all(key in runs[t] for t in others):
            continue
        mine = runs[first][key]
        row = [key[0], key[1], str(key[2]), bench_summary.fmt_ms(bench_summary.milliseconds(mine))]
        for t in others:
            ratio = bench_summary.milliseconds(runs[t][key]) / bench_summary.milliseconds(mine)
            slower[t] += ratio < 1.0
            cpu = runs[t][key].get("cpu_time", 0) / mine["cpu_time"] if mine.get("cpu_time") else None
            row += [bench_summary.fmt(ratio), bench_summary.fmt(cpu)]
        rows.append(row)
    return rows, slower


def undisturbed_goal_rows(rows):
    """The default target's rows, less those whose CTranslate2 float32 peer ran slower with more
    threads than with 1 at the same batch (such a peer time says more about the machine than
    about the peer), and the names of those left out."""
    peer = {(r["threads"], r["batch"]): r["seconds"] for r in rows if r["engine"] == "ctranslate2-float32"}
    kept, disturbed = [], []
    for r in rows:
        if r["engine"] != rows[0]["engine"]:
            continue
        if peer.get((r["threads"], r["batch"]), 0) > peer.get((1, r["batch"]), float("inf")):
            disturbed.append(f"{r['threads']} threads batch {r['batch']}")
        else:
            kept.append(r)
    return kept, disturbed


def decode_lines(out):
    path = os.path.join(out, "decode.json")
    if not os.path.exists(path):
        return ["## Decoding vs CTranslate2", "", "Not measured in this run (no decode.json).", ""]
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        rows = [[r["engine"], str(r["threads"]), str(r["batch"]), bench_summary.fmt(r["seconds"]),
                 bench_summary.fmt(r["sentences_per_s"], 1), bench_summary.fmt(r["target_tokens_per_s"], 0),
                 bench_summary.fmt(r["peak_rss_mib"], 0), bench_summary.fmt(r["x_ct2_float32"]),
                 bench_summary.fmt(r["cpu_x_ct2_float32"])] for r in d["rows"]]
        a, m = d["agreement"], d["machine"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise bench_summary.InputError(f"{path}: not bench/decode_bench.py output ({e})")
    goal, disturbed = undisturbed_goal_rows(d["rows"])
    met = sum(r["x_ct2_float32"] >= 1.0 for r in goal)
    return ["## Decoding vs CTranslate2 (bench/decode_bench.py)", "",
            f"Beam {d['beam']}, alpha {d['alpha']}, `{os.path.basename(d['input'])}` "
            f"({d['rows'][0]['sentences'] if 'sentences' in d['rows'][0] else a['sentences']} sentences); medians of {d['repeat']} interleaved runs, each a fresh process "
            f"timed around the search. CPU {m['cpu_model']}, load average {load_text(m['load_average_start'])} at the "
            f"start and {load_text(m.get('load_average_end'))} at the end. x_ct2_float32: CTranslate2 float32's time over "
            "this row's (> 1: faster than it), in wall time and in CPU time.", "",
            f"Same outputs ({a['checked_with']}): greedy {a['greedy_identical']:.3f} identical; beam "
            f"{a['beam_identical']:.3f} identical as decoded, {a['beam_identical_after_reranking']:.3f} after "
            "re-ranking CTranslate2's 4 finished hypotheses by our GNMT length penalty.", "",
            f"Goal >= 1.0x CTranslate2 float32 (wall time, {d['rows'][0]['engine']}): met in {met} of "
            f"{len(goal)} configurations" + (f"; left out: {', '.join(disturbed)}, where CTranslate2 float32 took "
                                             "longer than with 1 thread (a disturbed run: on a busy machine its "
                                             "threads wait for each other)" if disturbed else "") + ".", ""] + bench_summary.table(
        ["engine", "threads", "batch", "seconds", "sentences/s", "target tokens/s", "peak RSS (MiB)",
         "x_ct2_float32", "x_ct2_float32 (CPU time)"], rows) + [""]


def summarize(out):
    targets = target_folders(out)
    by_target = {t: load_target(out, t) for t in targets}
    lines = ["# Benchmark summary", "",
             f"Generated by `reports/bench_targets.py` from `bench/run_benches.sh`: every CPU target "
             f"measured ({', '.join(targets)}), then decoding against CTranslate2 (BENCHES and DECODE=0 rerun "
             f"a part: each machine table dates its files).", ""]
    if len(targets) > 1:
        rows, slower = target_rows(by_target)
        first = targets[0]
        lines += [f"## Targets: each one's time over {first}'s", "",
                  f"Above 1: {first} is faster. " + "; ".join(
                      f"{t} was faster than {first} on {n} of {len(rows)} benchmarks in wall time" for t, n in slower.items()),
                  ""] + bench_summary.table(
            ["benchmark", "shape", "threads", f"{first} time (ms)"] + [
                c for t in targets[1:] for c in (f"{t} / {first}", f"{t} / {first} (CPU time)")], rows) + [""]
    lines += decode_lines(out)
    for t in targets:
        lines += [f"# {t}", ""] + bench_summary.summarize(by_target[t]).split("\n")[2:] + [""]
    return "\n".join(lines)


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        text = summarize(argv[0])
    except bench_summary.InputError as e:
        print(f"bench_targets: {e}", file=sys.stderr)
        return 2
    bench_summary.write_atomic(os.path.join(argv[0], "summary.md"), text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
