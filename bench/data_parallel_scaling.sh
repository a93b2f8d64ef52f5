#!/usr/bin/env bash
# Data-parallel scaling on this machine, the same global batch both ways: 2 ranks x 1 thread
# (mpirun, train.replicas 2) against 1 rank x 2 threads, target tokens/s of each over the steps
# after the first two, the per-step reduction time of the model's gradient (allreduce_bench at
# its size), and the paper-base allreduce against memcpy. Also checks that both runs end with
# the same checkpoint bytes. Writes reports/distributed/{scaling.json,allreduce*.json,load.txt}.
# usage: bench/data_parallel_scaling.sh [BUILD_DIR]   (default build/release; needs mpirun)
set -euo pipefail
((${STEPS:-30} > 2)) || { echo "data_parallel_scaling.sh: STEPS must be > 2 (the first two are not timed)" >&2; exit 2; }
source_dir=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$source_dir/build/release}
trepro=$build/experiments/trepro
out=$source_dir/reports/distributed
scratch=$(mktemp -d "${TMPDIR:-/tmp}/trepro_scaling.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$out"
mpirun_options=(--oversubscribe --mca btl self,vader)
[[ $(id -u) -eq 0 ]] && mpirun_options+=(--allow-run-as-root)

# A 3+3-layer d_model 256 model on the copy task: two batches of 64 sentences per step.
cat >"$scratch/scaling.json" <<JSON
{
  "model": {"vocab_size": 64, "d_model": 256, "heads": 4, "encoder_layers": 3, "decoder_layers": 3,
            "d_ff": 1024, "max_len": 64, "dropout": 0.1},
  "train": {"schedule": {"kind": "inverse_sqrt", "warmup": 100}, "seed": 1, "update_freq": 2,
            "replicas": 2, "max_steps": ${STEPS:-30}, "validate_every": 1000, "checkpoint_every": 1000},
  "data": {"dataset": "copy", "min_length": 20, "max_length": 40, "batch_size": 64}
}
JSON
# The CPU goes into scaling.json from allreduce_bench's "cpu" (bench_support's cpu_model).
{ date -u; echo "cores: $(nproc)"; echo "load before: $(cat /proc/loadavg)"; } >"$out/load.txt"
TREPRO_THREADS=2 "$trepro" train "$scratch/scaling.json" --out "$scratch/one_rank" >/dev/null
mpirun "${mpirun_options[@]}" -np 2 -x TREPRO_THREADS=1 "$trepro" train "$scratch/scaling.json" --out "$scratch/two_ranks" >/dev/null
cmp "$scratch/one_rank/checkpoints/step_${STEPS:-30}.safetensors" "$scratch/two_ranks/checkpoints/step_${STEPS:-30}.safetensors"
floats=$("$trepro" info "$scratch/scaling.json" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["parameters"])')
mpirun "${mpirun_options[@]}" -np 2 "$build/bench/allreduce_bench" --floats "$floats" --repetitions 9 >"$out/allreduce_scaling_model.json"
mpirun "${mpirun_options[@]}" -np 2 "$build/bench/allreduce_bench" --repetitions 5 >"$out/allreduce_paper_base.json"
echo "load after: $(cat /proc/loadavg)" >>"$out/load.txt"
/usr/bin/python3 - "$scratch" "$out" <<'PY'
import json, sys
scratch, out = sys.argv[1], sys.argv[2]
def pace(run):
    report = json.load(open(f"{scratch}/{run}/report.json"))
    # The curve's points each sum `steps` steps ending at `step`; the first two steps map memory
    # and warm the caches.
    points = [p for p in report["curve"] if p["step"] - p["steps"] + 1 > 2]
    steps = sum(p["steps"] for p in points)
    tokens, seconds = sum(p["tokens"] for p in points), sum(p["seconds"] for p in points)
    return {"backend": report["backend"], "simd_target": report["simd_target"], "threads": report["threads"],
            "world_size": report.get("world_size", 1), "steps_timed": steps,
            "tokens_per_second": tokens / seconds, "seconds_per_step": seconds / steps}
one, two = pace("one_rank"), pace("two_ranks")
reduce = json.load(open(f"{out}/allreduce_scaling_model.json"))
result = {"one_rank_two_threads": one, "two_ranks_one_thread": two,
          "x_two_ranks_over_one_rank": two["tokens_per_second"] / one["tokens_per_second"],
          "reduction_seconds_per_step": reduce["reduce_shard_gradients"]["seconds"],
          "reduction_share_of_step": reduce["reduce_shard_gradients"]["seconds"] / two["seconds_per_step"],
          "parameters": reduce["floats"], "same_checkpoint_bytes": True, "cpu": reduce["cpu"],
          "load": open(f"{out}/load.txt").read()}
json.dump(result, open(f"{out}/scaling.json", "w"), indent=2)
print(json.dumps(result, indent=2))
PY
