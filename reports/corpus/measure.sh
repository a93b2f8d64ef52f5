#!/usr/bin/env bash
# The corpus pipeline on a WMT14-sized synthetic corpus (experiments/synthetic_corpus.py, 4.5M
# pairs): `prepare`'s time and peak RSS, then `train --data --steps 20` on it and, as the peer
# that holds the same model, the same config on a 3,000-pair corpus with the same vocabulary:
# the difference of their peak RSS is what the 4.5M-pair corpus costs in training.
# PAIRS=N measures the first N training pairs of the corpus instead (the rest is unchanged).
# usage (from the repository root): [PAIRS=N] [TREPRO=binary] reports/corpus/measure.sh   -> reports/corpus/measured.txt
set -euo pipefail
trepro=${TREPRO:-build/release/experiments/trepro}  # TREPRO: a copy, while the build changes
pairs=${PAIRS:-4500000}
out=corpora/measure
# synthetic_corpus.py renames the folder into place once every file is written: one that exists is
# complete (a killed run leaves only corpora/synthetic_wmt14.partial, which the next run replaces).
[[ -d corpora/synthetic_wmt14 ]] || /usr/bin/python3 experiments/synthetic_corpus.py --out corpora/synthetic_wmt14
rm -rf "$out" && mkdir -p "$out/corpus" "$out/tiny"
for f in train newstest2013 newstest2014; do
  for l in en de; do
    head -n "$pairs" "corpora/synthetic_wmt14/$f.$l" >"$out/corpus/$f.$l"
    head -n 3000 "corpora/synthetic_wmt14/$f.$l" >"$out/tiny/$f.$l"
  done
done
config="$out/corpus.json"
sed "s|corpora/synthetic_wmt14|$out/corpus|" reports/corpus/synthetic_wmt14.json >"$config"
sed "s|corpora/synthetic_wmt14|$out/tiny|" reports/corpus/synthetic_wmt14.json >"$out/tiny.json"

timed() {  # label, command...: /usr/bin/time -v's wall clock and peak RSS
  local label=$1; shift
  /usr/bin/time -v "$@" 2>"$out/$label.time" >/dev/null || { tail -20 "$out/$label.time"; exit 1; }
  echo "$label: wall $(grep 'Elapsed (wall' "$out/$label.time" | awk '{print $NF}'), peak RSS $(grep 'Maximum resident' "$out/$label.time" | awk '{print $NF}') KiB"
}

# First-step latency: from the command's start to step 1 in history.jsonl.
first_step() {  # label, run folder, command...
  local label=$1 run=$2; shift 2
  local start=$(date +%s.%N)
  timed "$label" "$@" &
  local pid=$!
  until grep -q '"step":1,' "$run/history.jsonl" 2>/dev/null; do sleep 0.05; done
  echo "$label: first step done $(echo "$(date +%s.%N) - $start" | bc) s after the start"
  wait $pid
}

{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "busy: shared with other engineers' builds and a background training sweep"
  echo "training pairs: $pairs"
  echo "commit: $(git rev-parse --short HEAD); simd target: $($trepro backends | /usr/bin/python3 -c 'import json,sys; print([b["name"] for b in json.load(sys.stdin) if b["name"].startswith("cpu-")][0])' 2>/dev/null || echo '?'); TREPRO_THREADS=${TREPRO_THREADS:-all}"
  timed prepare "$trepro" prepare "$config" --out "$out/prepared"
  grep -E '^(vocabulary|binarizing|prepare)' "$out/prepare.time" | grep -v '%' || true
  timed prepare_reuse "$trepro" prepare "$config" --out "$out/prepared"
  timed prepare_tiny "$trepro" prepare "$out/tiny.json" --out "$out/prepared_tiny" --vocabulary "$out/prepared/vocab.model"
  first_step train_corpus "$out/run_big" "$trepro" train "$config" --data "$out/prepared" --out "$out/run_big" --backend cpu
  first_step train_3k "$out/run_tiny" "$trepro" train "$out/tiny.json" --data "$out/prepared_tiny" --out "$out/run_tiny" --backend cpu
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  du -sh "$out/prepared" | sed 's/^/prepared folder: /'
  /usr/bin/python3 -c "import json; m=json.load(open('$out/prepared/manifest.json')); print('manifest splits:', json.dumps(m['splits']))"
} | tee reports/corpus/measured.txt
