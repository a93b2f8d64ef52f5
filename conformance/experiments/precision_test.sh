#!/usr/bin/env bash
# train.precision "bf16" on a backend without a bf16 mode (the reference, the CPU backend) stops
# `trepro train` at its start with an error naming the key and the backend, and leaves no run
# behind (no config.json), instead of silently training in float32. "float32" runs as before.
# usage: precision_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

sed 's/"max_steps": 300,/"max_steps": 2, "precision": "bf16",/' "$2/experiments/configs/copy_tiny.json" >"$scratch/bf16.json"
sed 's/"max_steps": 300,/"max_steps": 2, "precision": "float32",/' "$2/experiments/configs/copy_tiny.json" >"$scratch/f32.json"
grep -q '"precision": "bf16"' "$scratch/bf16.json" || { echo "FAIL: could not set precision in the test config" >&2; exit 1; }

for backend in reference-f32 cpu; do
  if "$trepro" train "$scratch/bf16.json" --out "$scratch/run_$backend" --backend "$backend" 2>"$scratch/err_$backend"; then
    echo "FAIL: bf16 trained on $backend instead of refusing" >&2
    exit 1
  fi
  message=$(cat "$scratch/err_$backend")
  echo "$backend: $message"
  [[ "$message" == *"train.precision"* ]] || { echo "FAIL: the error does not name train.precision" >&2; exit 1; }
  [[ "$message" == *"backend ${backend}"* ]] || { echo "FAIL: the error does not name the backend $backend" >&2; exit 1; }
  if [[ -e "$scratch/run_$backend/config.json" ]]; then
    echo "FAIL: the refused run left $scratch/run_$backend/config.json" >&2
    exit 1
  fi
done

"$trepro" train "$scratch/f32.json" --out "$scratch/run_f32" --backend cpu >/dev/null
grep -q '"precision": "float32"' "$scratch/run_f32/config.json" || { echo "FAIL: config.json lacks the precision" >&2; exit 1; }
echo "float32 on cpu: trained, config.json records the precision"
