#!/usr/bin/python3
"""Decoding speed against CTranslate2 on the same weights (issue 21).

  /usr/bin/python3 bench/decode_bench.py [--run RUN] [--input F] [--out DIR] [--repeat 3]
      [--threads 1,2] [--batches 1,32] [--targets avx3,avx2] [--sentences N]

Translates INPUT (default: Multi30K test_2016_flickr.de, 1,000 sentences) with beam 4 by
  - ours: build/release/bench/decode_bench, once per CPU target (TREPRO_CPU_TARGET),
  - CTranslate2 4.8.5 float32 on RUN converted by bench/ct2_convert.py,
  - CTranslate2 int8 (a reference row: other arithmetic, not our outputs),
at every thread count and batch size, each configuration a fresh process timed around the search
alone, the engines interleaved within each repetition; reports medians. Writes DIR/decode.json
and prints the table. Every row gives sentences/s, target tokens/s (EOS counted), peak RSS (of
the process: ours is C++, CTranslate2's includes Python and NumPy) and the ratio to CTranslate2
float32 of the same threads and batch, in wall time and in CPU time (user + system of the
process around the search: on a busy machine a thread that waits for a core spins or sleeps, so
the wall-time ratio at 2 threads is mostly the neighbours' load; CPU time at 1 thread is the
steadier measure of the work each engine does).

Same outputs, checked on the first configuration's hypotheses:
  - greedy: ours and CTranslate2 float32 token for token (the same algorithm);
  - beam: CTranslate2 ranks finished hypotheses by log P / |Y|^alpha, we by GNMT's
    log P / ((5 + |Y|) / 6)^alpha (|Y| counting EOS), so the best can differ. Its 4 finished
    hypotheses are rescored exactly (score_batch: log P with EOS) and re-ranked by our penalty;
    "identical" is counted before and after that re-ranking. Its length limit is
    max_decoding_length 256 (ours: source length + 50); neither is reached on Multi30K.
"""
import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"
CT2_VERSION = "4.8.5"


def read_ids(path):
    with open(path) as f:
        return [[int(t) for t in line.split()] for line in f]


def ct2_worker(args):
    """One CTranslate2 configuration in this process: prints the JSON our decode_bench prints."""
    import ctranslate2

    sources = [[str(t) for t in ids] for ids in read_ids(args.source_ids)]
    translator = ctranslate2.Translator(args.model, device="cpu", compute_type=args.compute_type,
                                        intra_threads=args.threads, inter_threads=1)
    options = dict(beam_size=args.beam, length_penalty=args.alpha, max_batch_size=args.batch,
                   batch_type="examples", max_decoding_length=256, num_hypotheses=args.beam)
    seconds, cpu_seconds = [], []
    for _ in range(args.repeat):
        start, cpu_start = time.perf_counter(), time.process_time()
        results = translator.translate_batch(sources, **options)
        seconds.append(time.perf_counter() - start)
        cpu_seconds.append(time.process_time() - cpu_start)
    nbest = [[[int(t) for t in h] for h in r.hypotheses] for r in results]
    with open(args.hypothesis_ids + ".tmp", "w") as f:
        json.dump(nbest, f)
    os.replace(args.hypothesis_ids + ".tmp", args.hypothesis_ids)
    if args.rescore:
        # log P of each finished hypothesis, EOS included (score_batch appends it).
        flat = [(i, h) for i, r in enumerate(nbest) for h in r]
        scored = translator.score_batch([sources[i] for i, _ in flat], [[str(t) for t in h] for _, h in flat])
        log_probs = [sum(s.log_probs) for s in scored]
        with open(args.rescore + ".tmp", "w") as f:
            json.dump(log_probs, f)
        os.replace(args.rescore + ".tmp", args.rescore)
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "sentences": len(sources),
                      "target_tokens": sum(len(r[0]) + 1 for r in nbest),
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "threads": args.threads}))


def run_json(command, env=None):
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"decode_bench: {' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ours(args, target, threads, batch, greedy, hypotheses):
    binary = os.path.join(ROOT, "build/release/bench/decode_bench")
    command = [binary, args.run, args.sentence_file, "--threads", str(threads), "--batch", str(batch),
               "--beam", "1" if greedy else "4", "--source-ids", args.source_ids, "--hypothesis-ids", hypotheses]
    if greedy:
        command.append("--greedy")
    return run_json(command, dict(os.environ, TREPRO_CPU_TARGET=target))


def ct2(args, compute_type, threads, batch, greedy, hypotheses, rescore=None):
    command = [PYTHON, os.path.abspath(__file__), "ct2-worker", "--model", args.ct2_models[compute_type],
               "--compute-type", compute_type, "--threads", str(threads), "--batch", str(batch),
               "--beam", "1" if greedy else "4", "--source-ids", args.source_ids, "--hypothesis-ids", hypotheses]
    if rescore:
        command += ["--rescore", rescore]
    return run_json(command)


def row_cpu(reps):
    return statistics.median(r["cpu_seconds"][0] for r in reps)


def gnmt_score(log_prob, length, alpha=0.6):
    return log_prob / ((5.0 + length) / 6.0) ** alpha


def agreement(args, work):
    """Fractions of sentences where our hypothesis equals CTranslate2 float32's (see the doc)."""
    target = args.targets[0]
    ours(args, target, 2, 32, True, f"{work}/ours_greedy.ids")
    ct2(args, "float32", 2, 32, True, f"{work}/ct2_greedy.json")
    mine = read_ids(f"{work}/ours_greedy.ids")
    theirs = [r[0] for r in json.load(open(f"{work}/ct2_greedy.json"))]
    greedy = sum(a == b for a, b in zip(mine, theirs)) / len(mine)
    ours(args, target, 2, 32, False, f"{work}/ours_beam.ids")
    ct2(args, "float32", 2, 32, False, f"{work}/ct2_beam.json", rescore=f"{work}/ct2_beam_logp.json")
    mine = read_ids(f"{work}/ours_beam.ids")
    nbest = json.load(open(f"{work}/ct2_beam.json"))
    log_probs = iter(json.load(open(f"{work}/ct2_beam_logp.json")))
    raw = sum(a == r[0] for a, r in zip(mine, nbest)) / len(mine)
    reranked = 0
    for a, r in zip(mine, nbest):
        scores = [gnmt_score(next(log_probs), len(h) + 1) for h in r]
        reranked += a == r[max(range(len(r)), key=lambda k: (scores[k], -k))]
    return {"greedy_identical": greedy, "beam_identical": raw, "beam_identical_after_reranking": reranked / len(mine),
            "sentences": len(mine), "checked_with": f"cpu-{target}, 2 threads, batch 32"}


def machine():
    # The first processor's fields: a VM's bare "AMD EPYC" needs its family, model and stepping.
    first = open("/proc/cpuinfo").read().split("\n\n")[0]
    fields = {k.strip(): v.strip() for k, _, v in (l.partition(":") for l in first.splitlines())}
    model = (f"{fields.get('model name', '')} (family {fields.get('cpu family', '')}, model {fields.get('model', '')}, "
             f"stepping {fields.get('stepping', '')})")
    flags = fields.get("flags", "")
    return {"cpu_model": model, "avx512f": "avx512f" in flags.split(), "cores": os.cpu_count(),
            "load_average_start": os.getloadavg(), "platform": platform.platform()}


def setup(args, work):
    try:
        import ctranslate2
    except ImportError:
        sys.exit(f"decode_bench: CTranslate2 is missing: scripts/setup installs it "
                 f"(/usr/bin/python3 -m pip install --break-system-packages ctranslate2=={CT2_VERSION})")
    if ctranslate2.__version__ != CT2_VERSION:
        print(f"decode_bench: note: CTranslate2 {ctranslate2.__version__}, measured with {CT2_VERSION}", file=sys.stderr)
    args.ct2_models = {}
    for quantization in ("float32", "int8"):
        out = f"{work}/ct2_{quantization}"
        command = [PYTHON, os.path.join(ROOT, "bench/ct2_convert.py"), args.run, out]
        if quantization != "float32":
            command += ["--quantization", quantization]
        subprocess.run(command, check=True)
        args.ct2_models[quantization] = out
    with subprocess.Popen(["gzip", "-cdf", args.input], stdout=subprocess.PIPE, text=True) as p:
        lines = p.stdout.read().splitlines()
    args.sentence_file = f"{work}/input.txt"
    with open(args.sentence_file, "w") as f:
        f.write("\n".join(lines[: args.sentences or None]) + "\n")
    args.source_ids = f"{work}/source.ids"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", default=os.path.join(ROOT, "runs/decode_bench_model"),
                        help="trepro run folder (bench/run_benches.sh trains this default one)")
    # The data folder as trepro finds it: $TREPRO_DATA_DIR, else the repository's data/ (Multi30K ships there).
    data_dir = os.environ.get("TREPRO_DATA_DIR") or os.path.join(ROOT, "data")
    parser.add_argument("--input", default=os.path.join(data_dir, "multi30k", "test_2016_flickr.de.gz"))
    parser.add_argument("--out", default=os.path.join(ROOT, "reports/bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--targets", default="avx3,avx2", help="our CPU targets (TREPRO_CPU_TARGET)")
    parser.add_argument("--sentences", type=int, default=0, help="the first N sentences only (0: all)")
    args = parser.parse_args()
    args.targets = args.targets.split(",")
    work = os.path.join(ROOT, "runs/decode_bench")
    os.makedirs(work, exist_ok=True)
    setup(args, work)
    # Writes the source ids that the CTranslate2 workers read.
    ours(args, args.targets[0], 1, 32, True, f"{work}/warmup.ids")
    result = {"machine": machine(), "run": args.run, "input": args.input, "beam": 4, "alpha": 0.6,
              "repeat": args.repeat, "agreement": agreement(args, work), "rows": []}
    engines = [("ours", f"cpu-{t}", t) for t in args.targets] + [("ct2", "ctranslate2-float32", "float32"),
                                                               ("ct2", "ctranslate2-int8", "int8")]
    for threads in map(int, args.threads.split(",")):
        for batch in map(int, args.batches.split(",")):
            runs = {name: [] for _, name, _ in engines}
            for _ in range(args.repeat):
                for kind, name, which in engines:
                    out = f"{work}/timed.ids"
                    runs[name].append(ours(args, which, threads, batch, False, out) if kind == "ours"
                                      else ct2(args, which, threads, batch, False, out + ".json"))
            peer = statistics.median(r["seconds"][0] for r in runs["ctranslate2-float32"])
            peer_cpu = row_cpu(runs["ctranslate2-float32"])
            for name, reps in runs.items():
                seconds = statistics.median(r["seconds"][0] for r in reps)
                row = {"engine": name, "threads": threads, "batch": batch, "sentences": reps[0]["sentences"],
                       "seconds": seconds,
                       "seconds_each": [r["seconds"][0] for r in reps],
                       "cpu_seconds": statistics.median(r["cpu_seconds"][0] for r in reps),
                       "sentences_per_s": reps[0]["sentences"] / seconds,
                       "target_tokens_per_s": reps[0]["target_tokens"] / seconds,
                       "peak_rss_mib": max(r["peak_rss_mib"] for r in reps), "x_ct2_float32": peer / seconds,
                       "cpu_x_ct2_float32": peer_cpu / row_cpu(reps)}
                result["rows"].append(row)
                print(f"{name:22s} threads {threads} batch {batch:3d}: {seconds:7.2f} s  "
                      f"{row['sentences_per_s']:7.1f} sent/s  {row['target_tokens_per_s']:8.0f} tok/s  "
                      f"{row['peak_rss_mib']:6.0f} MiB  x_ct2_float32 {row['x_ct2_float32']:.2f} "
                      f"(CPU time: {row['cpu_x_ct2_float32']:.2f})", flush=True)
    result["machine"]["load_average_end"] = os.getloadavg()
    os.makedirs(args.out, exist_ok=True)
    with open(f"{args.out}/decode.json.tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(f"{args.out}/decode.json.tmp", f"{args.out}/decode.json")
    print(json.dumps(result["agreement"]))


if __name__ == "__main__" and sys.argv[1:2] == ["ct2-worker"]:
    worker = argparse.ArgumentParser()
    for option in ("--model", "--compute-type", "--source-ids", "--hypothesis-ids", "--rescore"):
        worker.add_argument(option)
    for option in ("--threads", "--batch", "--beam", "--repeat"):
        worker.add_argument(option, type=int, default=1 if option == "--repeat" else 0)
    worker.add_argument("--alpha", type=float, default=0.6)
    ct2_worker(worker.parse_args(sys.argv[2:]))
elif __name__ == "__main__":
    main()
