#!/usr/bin/env bash
# The whole speed measurement in one command: linear_bench, attention_bench, model_bench and the
# per-op benchmarks (bench/<op>_bench, into OUT/cpu-<target>/ops/) of a Release build once per
# CPU target this machine supports (TREPRO_CPU_TARGET, one after the other), then
# bench/decode_bench.py (decoding against CTranslate2 on every target), then OUT/summary.md
# (reports/bench_targets.py: the targets side by side, the decode table, each target's goals and
# details). BENCHES picks a part (default "linear attention model ops"; "ops" reruns only the
# per-op ones, leaving the other files of OUT as they were).
#   [REPETITIONS=N] [TARGETS="avx3 avx2"] [BENCHES="ops"] [DECODE=0] [DECODE_RUN=RUN] \
#     [DECODE_ARGS="--sentences 200"] bench/run_benches.sh [OUT] [benchmark args...]
# Decoding needs a trained run: DECODE_RUN, default runs/decode_bench_model, which is trained
# first when it has no best checkpoint (the anchor recipe for 600 steps: speed does not depend on
# quality; about 12 minutes on 2 cores).
# OUT defaults to reports/bench/; each target's JSON goes to OUT/cpu-<target>/. Extra arguments go
# to every Google Benchmark (e.g. --benchmark_filter=threads:2). Each benchmark runs REPETITIONS
# times (default 3) and the JSON keeps the aggregates, whose medians the summary uses: on these
# shared 2-vCPU machines a single run is sometimes taken while a neighbour is busy. TARGETS
# defaults to every SIMD target from AVX2 up that this CPU supports and the build compiled (the
# first is the default one). Each JSON holds the machine, the CPU model, the target, the compiler
# and the load average at the start; uptime before and after each benchmark goes to OUT/load.txt,
# because the peers run in the same process but not at the same instant.
set -euo pipefail

source_dir=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$source_dir/reports/bench}
shift || true
build=$source_dir/build/release
mkdir -p "$out"

benches=${BENCHES:-linear attention model ops}
# The per-op benchmarks, as bench/CMakeLists.txt lists them (TREPRO_OP_BENCHES).
op_list=$build/bench/op_benches.txt
[[ -f $op_list ]] || { echo "run_benches: $op_list missing (configure the release build again)" >&2; exit 2; }
ops=$(cat "$op_list")
binaries="experiments/trepro"
[[ ${DECODE:-1} != 0 ]] && binaries+=" bench/decode_bench"
for bench in $benches; do
  case $bench in
    ops) for op in $ops; do binaries+=" bench/${op}_bench"; done ;;
    linear | attention | model) binaries+=" bench/${bench}_bench" ;;
    *) echo "run_benches: BENCHES: unknown '$bench' (expected linear, attention, model or ops)" >&2; exit 2 ;;
  esac
done
for binary in $binaries; do
  [[ -x $build/$binary ]] || { echo "run_benches: $build/$binary not built (cmake --build --preset release)" >&2; exit 2; }
done
if [[ -z ${TARGETS:-} ]]; then
  # `trepro backends` lists the targets this CPU supports, best first.
  TARGETS=$("$build/experiments/trepro" backends | /usr/bin/python3 -c '
import json, sys
names = [b["name"][4:] for b in json.load(sys.stdin) if b["name"].startswith("cpu-")]
print(" ".join(n for n in names if n not in ("sse4", "scalar")) or names[0])')
fi
echo "run_benches: targets $TARGETS; $(grep -m1 'model name' /proc/cpuinfo)" | tee -a "$out/load.txt"

# One benchmark binary into FILE (atomically), with uptime before and after in load.txt.
measure() {
  local target=$1 name=$2 file=$3
  shift 3
  echo "cpu-$target $name before: $(uptime)" >> "$out/load.txt"
  TREPRO_CPU_TARGET=$target "$build/bench/${name}_bench" \
    --benchmark_out="$file.tmp" --benchmark_out_format=json \
    --benchmark_repetitions="${REPETITIONS:-3}" --benchmark_report_aggregates_only=true "$@"
  mv "$file.tmp" "$file"
  echo "cpu-$target $name after:  $(uptime)" >> "$out/load.txt"
}

for target in $TARGETS; do
  mkdir -p "$out/cpu-$target"
  for bench in $benches; do
    if [[ $bench == ops ]]; then
      mkdir -p "$out/cpu-$target/ops"
      for op in $ops; do measure "$target" "$op" "$out/cpu-$target/ops/$op.json" "$@"; done
    else
      measure "$target" "$bench" "$out/cpu-$target/$bench.json" "$@"
    fi
  done
done

if [[ ${DECODE:-1} != 0 ]]; then
  decode_run=${DECODE_RUN:-$source_dir/runs/decode_bench_model}
  if [[ ! -e $decode_run/checkpoints/best.safetensors ]]; then
    echo "run_benches: training the decoding model into $decode_run (600 steps of the anchor recipe)"
    if [[ -e $decode_run/config.json ]]; then
      "$build/experiments/trepro" train --resume --out "$decode_run" >/dev/null
    else
      "$build/experiments/trepro" train "$source_dir/experiments/configs/multi30k_deen_anchor.json" \
        --out "$decode_run" --steps 600 >/dev/null
    fi
  fi
  echo "decode before: $(uptime)" >> "$out/load.txt"
  # shellcheck disable=SC2086
  /usr/bin/python3 "$source_dir/bench/decode_bench.py" --run "$decode_run" --out "$out" --targets "${TARGETS// /,}" \
    --repeat "${REPETITIONS:-3}" ${DECODE_ARGS:-}
  echo "decode after:  $(uptime)" >> "$out/load.txt"
fi

/usr/bin/python3 "$source_dir/reports/bench_targets.py" "$out"
echo "run_benches: wrote $out/cpu-*/ (one folder per target)$([[ ${DECODE:-1} != 0 ]] && echo ", $out/decode.json") and $out/summary.md"
