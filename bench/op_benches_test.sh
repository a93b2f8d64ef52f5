#!/usr/bin/env bash
# ctest op_benches_run: every per-op benchmark (bench/<op>_bench.cc), and linear_bench and
# attention_bench, on its smallest shape at 1 thread, briefly; each JSON output must hold at least
# one benchmark with a finite positive ratio to its reference and none that failed. A benchmark
# that builds but throws on its shapes, or times nothing, fails here rather than an hour into
# bench/run_benches.sh.
#   bench/op_benches_test.sh BENCH_DIR OP...      (OP: activation ... as in bench/CMakeLists.txt)
set -euo pipefail

bench_dir=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# run BINARY FILTER COUNTER: runs BINARY's benchmarks matching FILTER, then checks COUNTER.
run() {
  local binary=$1 filter=$2 counter=$3
  echo "op_benches_test: $binary --benchmark_filter='$filter'"
  # Google Benchmark 1.7 (Debian libbenchmark-dev) takes min_time as plain seconds, without "s".
  "$bench_dir/$binary" --benchmark_filter="$filter" --benchmark_min_time=0.01 \
    --benchmark_out="$out/$binary.json" --benchmark_out_format=json >/dev/null
  /usr/bin/python3 - "$out/$binary.json" "$counter" <<'PY'
import json, math, sys

path, counter = sys.argv[1:]
with open(path) as f:
    runs = json.load(f)["benchmarks"]
failed = [r["name"] for r in runs if r.get("error_occurred")]
good = [r["name"] for r in runs
        if isinstance(r.get(counter), (int, float)) and math.isfinite(r[counter]) and r[counter] > 0]
if failed:
    sys.exit(f"op_benches_test: {path}: failed: {failed}")
if not good:
    sys.exit(f"op_benches_test: {path}: none of {len(runs)} benchmarks has a finite positive {counter}")
print(f"op_benches_test: {len(good)} of {len(runs)} with a finite positive {counter}")
PY
}

# Each per-op benchmark registers its smallest shape first (bench/op_shapes.h): 4 rows, a 512-element
# parameter, or beam 4 over a few positions.
for op in "$@"; do
  run "${op}_bench" '/(rows:4|elements:512|batch:4/time:[0-9]+)/threads:1/' x_reference
done
# linear_bench's Eigen peer is the reference's GEMM (reference/linear.h), so x_eigen is its ratio.
run linear_bench '^BM_LinearForwardDecode/rows:4/K:256/M:256/threads:1/' x_eigen
# attention_bench fixes its own min_time (0.2 s): only its shortest length.
run attention_bench '/T:32/threads:1/' x_reference
