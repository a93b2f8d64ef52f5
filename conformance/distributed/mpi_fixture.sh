# Sourced by the mpirun tests: $scratch, the tiny Multi30K fixture (cli_fixture.sh), and
# `launch N ARGS...`, mpirun with what CI needs: --oversubscribe (more ranks than the 2 cores),
# --allow-run-as-root (CI runs as root), one thread per rank, shared memory between the ranks.
# Exits 77 (a skip; a failure under CI=true, skip_fails_in_ci.sh) when mpirun is missing.
source "$2/conformance/experiments/cli_fixture.sh"
trepro=$1
if ! command -v mpirun >/dev/null; then
  echo "SKIP: mpirun not found (scripts/setup installs openmpi-bin)"
  exit 77
fi
mpirun_options=(--oversubscribe --mca btl self,vader -x TREPRO_THREADS=1)
[[ $(id -u) -eq 0 ]] && mpirun_options+=(--allow-run-as-root)
launch() {
  local ranks=$1
  shift
  mpirun "${mpirun_options[@]}" -np "$ranks" "$@"
}

# The copy task of experiments/configs/copy_tiny.json with dropout on, REPLICAS virtual shards
# and as many batches per step, into $scratch/copy_REPLICAS.json.
make_copy_config() {
  local replicas=$1
  cat >"$scratch/copy_$replicas.json" <<JSON
{
  "model": {"vocab_size": 16, "d_model": 32, "heads": 4, "encoder_layers": 1, "decoder_layers": 1,
            "d_ff": 64, "norm": "pre", "max_len": 32, "dropout": 0.1, "attention_dropout": 0.1},
  "train": {"optimizer": {"lr": 0.003}, "schedule": {"kind": "inverse_sqrt", "warmup": 4}, "seed": 7,
            "update_freq": $replicas, "replicas": $replicas, "max_steps": 6, "validate_every": 3,
            "checkpoint_every": 3},
  "data": {"dataset": "copy", "min_length": 4, "max_length": 12, "batch_size": 8}
}
JSON
}

# Fails unless run B has a byte-identical twin of each checkpoint of run A (or of those named),
# and run A has at least one; then also its training log (same_history).
same_checkpoints() {
  local a=$1 b=$2 file name
  shift 2
  local names=("$@")
  ((${#names[@]})) || names=($(cd "$a/checkpoints" && ls))
  if ((${#names[@]} == 0)); then
    echo "FAIL: $a/checkpoints holds no checkpoint to compare" >&2
    exit 1
  fi
  for name in "${names[@]}"; do
    file="$a/checkpoints/$name"
    if ! cmp -s "$file" "$b/checkpoints/$name"; then
      echo "FAIL: $file and $b/checkpoints/$name differ" >&2
      exit 1
    fi
  done
  echo "same checkpoints: $a $b (${names[*]})"
  same_history "$a" "$b"
}

# Fails unless the step records both runs' history.jsonl share (loss, gradient norm, learning
# rate, tokens: the global, reduced figures rank 0 logs) are equal; timings are left out.
same_history() {
  "$python" - "$1/history.jsonl" "$2/history.jsonl" <<'PY'
import json, sys
def steps(path):
    records = (json.loads(line) for line in open(path) if line.strip())
    return {r["step"]: {k: r[k] for k in ("loss", "grad_norm", "learning_rate", "tokens")}
            for r in records if r.get("kind") == "step"}
a, b = (steps(p) for p in sys.argv[1:])
shared = sorted(set(a) & set(b))
differ = [s for s in shared if a[s] != b[s]]
if not shared or differ:
    print(f"FAIL: training logs {sys.argv[1]} and {sys.argv[2]}: {len(shared)} steps in common, "
          f"these differ: {differ[:5]}", file=sys.stderr)
    sys.exit(1)
print(f"same training log: {len(shared)} steps")
PY
}
