#!/usr/bin/env bash
# `trepro train --resume` after a kill -9 ends bit-identical to a run never interrupted: the
# final checkpoints (weights, Adam moments, step, data position) have the same sha256. Checked
# on the copy task and on a tiny Multi30K-shaped corpus (vocabulary reuse, epochs, update_freq).
# usage: resume_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

# Runs CONFIG into $scratch/NAME_whole uninterrupted and into $scratch/NAME_killed killed with
# SIGKILL once checkpoint KILL_AFTER exists, then resumed; compares the last checkpoints.
check_resume() {
  local name=$1 config=$2 kill_after=$3
  shift 3
  local whole="$scratch/${name}_whole" killed="$scratch/${name}_killed"
  "$trepro" train "$config" --out "$whole" "$@" >/dev/null
  "$trepro" train "$config" --out "$killed" "$@" >/dev/null &
  local pid=$!
  until [[ -e "$killed/checkpoints/step_$kill_after.safetensors" ]] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.005; done
  # A kill that misses (the run already over) would leave nothing to resume and the test moot.
  kill -9 "$pid" 2>/dev/null || { echo "FAIL $name: the run ended before the kill (give it more steps)" >&2; exit 1; }
  wait "$pid" || true
  local last
  last=$(cd "$whole/checkpoints" && ls step_*.safetensors | sort -t_ -k2 -n | tail -1)
  if [[ -e "$killed/checkpoints/$last" ]]; then
    echo "FAIL $name: the killed run has its last checkpoint $last already: nothing was left to resume" >&2
    exit 1
  fi
  echo "$name: killed after checkpoint $kill_after"
  "$trepro" train --resume --out "$killed" >/dev/null
  local a b
  a=$(sha256sum <"$whole/checkpoints/$last")
  b=$(sha256sum <"$killed/checkpoints/$last")
  if [[ "$a" != "$b" ]]; then
    echo "FAIL $name: $last differs after resume: $a vs $b" >&2
    exit 1
  fi
  local steps_whole steps_killed
  steps_whole=$("$python" -c 'import json,sys; print([(s["step"], s["loss"]) for s in json.load(open(sys.argv[1]))["curve"]])' "$whole/report.json")
  steps_killed=$("$python" -c 'import json,sys; print([(s["step"], s["loss"]) for s in json.load(open(sys.argv[1]))["curve"]])' "$killed/report.json")
  if [[ "$steps_whole" != "$steps_killed" ]]; then
    echo "FAIL $name: the report's training curve differs after resume" >&2
    exit 1
  fi
  echo "$name: $last identical ($a)"
}

check_resume copy "$2/experiments/configs/copy_tiny.json" 20 --steps 60 --checkpoint-every 20 --validate-every 20
# A run extended with another --steps (the documented way) stays one run: its checkpoints from
# both sessions average.
"$trepro" train --resume --out "$scratch/copy_whole" --steps 80 --checkpoint-every 20 --validate-every 20 >/dev/null
"$trepro" average "$scratch/copy_whole" --last 4 --out "$scratch/extended_average.safetensors" ||
  { echo "FAIL: the checkpoints of a run extended with --steps 80 do not average" >&2; exit 1; }
echo "copy: steps 20-80 of a run extended from --steps 60 to 80 averaged"
make_multi30k_fixture
# 30 epochs (~130 steps): the kill after step 4 lands long before the end.
sed 's/"epochs": 3/"epochs": 30/' "$scratch/tiny_multi30k.json" >"$scratch/resume_multi30k.json"
check_resume multi30k "$scratch/resume_multi30k.json" 4
echo "PASS"
