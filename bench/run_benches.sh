#!/usr/bin/env bash
# Runs linear_bench, attention_bench and model_bench of a Release build, writes their JSON under
# OUT (default reports/bench/) and the summary table OUT/summary.md (reports/bench_summary.py).
# Extra arguments go to every benchmark (e.g. --benchmark_filter=threads:2). Each benchmark runs
# REPETITIONS times (default 3) and the JSON keeps the aggregates, whose medians the summary
# uses: on these shared 2-vCPU machines a single run is sometimes taken while a neighbour is busy.
#   [REPETITIONS=N] bench/run_benches.sh [OUT] [benchmark args...]
# Each JSON holds the machine, the CPU target, the compiler and the load average at the start;
# uptime before and after each benchmark is appended to OUT/load.txt, because the peers run in
# the same process but not at the same instant, so a busy machine skews the ratios.
set -euo pipefail

source_dir=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$source_dir/reports/bench}
shift || true
build=$source_dir/build/release/bench
mkdir -p "$out"

for bench in linear attention model; do
  binary=$build/${bench}_bench
  [[ -x $binary ]] || { echo "run_benches: $binary not built (cmake --build --preset release --target ${bench}_bench)" >&2; exit 2; }
  echo "$bench before: $(uptime)" >> "$out/load.txt"
  "$binary" --benchmark_out="$out/$bench.json.tmp" --benchmark_out_format=json \
    --benchmark_repetitions="${REPETITIONS:-3}" --benchmark_report_aggregates_only=true "$@"
  mv "$out/$bench.json.tmp" "$out/$bench.json"
  echo "$bench after:  $(uptime)" >> "$out/load.txt"
done

/usr/bin/python3 "$source_dir/reports/bench_summary.py" "$out"/{linear,attention,model}.json --out "$out/summary.md"
echo "run_benches: wrote $out/{linear,attention,model}.json and $out/summary.md"
