#!/usr/bin/env bash
# train.keep_checkpoints: a run keeps only its newest K step checkpoints (and best.safetensors),
# still resumes after a kill, and `average --last K` reads what is kept.
# usage: keep_checkpoints_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

"$python" - "$2/experiments/configs/copy_tiny.json" "$scratch/kept.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["train"]["keep_checkpoints"] = 2
json.dump(config, open(sys.argv[2], "w"), indent=2)
PY
"$trepro" train "$scratch/kept.json" --out "$scratch/run" --steps 12 --checkpoint-every 2 --validate-every 4 >/dev/null \
  || fail "training failed"
kept=$(cd "$scratch/run/checkpoints" && ls | sort | tr '\n' ' ')
[[ "$kept" == "best.safetensors step_10.safetensors step_12.safetensors " ]] || fail "kept: $kept"
"$trepro" average "$scratch/run" --last 2 --out "$scratch/avg.safetensors" >/dev/null || fail "average --last 2"
"$trepro" train --resume --out "$scratch/run" --steps 16 >/dev/null || fail "resume with pruned checkpoints"
kept=$(cd "$scratch/run/checkpoints" && ls | sort | tr '\n' ' ')
[[ "$kept" == "best.safetensors step_14.safetensors step_16.safetensors " ]] || fail "kept after resume: $kept"
echo "PASS"
