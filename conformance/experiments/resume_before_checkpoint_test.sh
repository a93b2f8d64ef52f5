#!/usr/bin/env bash
# `trepro train --resume` on a run killed before its first checkpoint starts the run over from
# RUN/config.json, saying so on the console and in train.log, and ends bit-identical to a run
# never interrupted (final and best checkpoints, report steps): a scheduler restarts a preempted
# job with one fixed command. The same command with CONFIG starts a run folder that does not
# exist yet; a run with checkpoints is never started over without --resume.
# usage: resume_before_checkpoint_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

config="$2/experiments/configs/copy_tiny.json"
# One checkpoint, at the end; validations (and best.safetensors) long before it.
lengths=(--steps 600 --checkpoint-every 600 --validate-every 20)
whole="$scratch/whole" killed="$scratch/killed" fresh="$scratch/fresh"
last=checkpoints/step_600.safetensors

"$trepro" train "$config" --out "$whole" "${lengths[@]}" >/dev/null

"$trepro" train "$config" --out "$killed" "${lengths[@]}" >/dev/null &
pid=$!
until [[ -e "$killed/checkpoints/best.safetensors" ]] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
kill -9 "$pid" 2>/dev/null || fail "the run ended before the kill"
wait "$pid" || true
compgen -G "$killed/checkpoints/step_*.safetensors" >/dev/null && fail "the run reached a checkpoint before the kill"
echo "killed after $(grep -c '"kind":"step"' "$killed/history.jsonl") steps, before the first checkpoint"

"$trepro" train --resume --out "$killed" >"$scratch/resume.out" || fail "train --resume failed"
grep -q "resume: no step_<N>.safetensors in .* yet: starting the run over from step 0" "$scratch/resume.out" ||
  fail "the console does not say the run starts over"
grep -q "starting the run over from step 0" "$killed/train.log" || fail "train.log does not say the run starts over"

"$trepro" train "$config" --out "$fresh" --resume "${lengths[@]}" >/dev/null || fail "train CONFIG --resume on a new folder failed"

for run in "$killed" "$fresh"; do
  for file in "$last" checkpoints/best.safetensors; do
    [[ $(sha256sum <"$whole/$file") == $(sha256sum <"$run/$file") ]] || fail "$run/$file differs from $whole/$file"
  done
  "$python" - "$whole/report.json" "$run/report.json" <<'PY' || fail "$run/report.json differs from the uninterrupted run's"
import json, sys
whole, run = (json.load(open(path)) for path in sys.argv[1:])
same = lambda key: [(s["step"], s["loss"]) for s in whole[key]] == [(s["step"], s["loss"]) for s in run[key]]
sys.exit(0 if same("curve") and same("validation") and run["status"] == "finished" and not run["resumed"] else 1)
PY
done

# Without --resume, a run folder in use is refused and its checkpoints are kept.
before=$(sha256sum <"$killed/$last")
if "$trepro" train "$config" --out "$killed" "${lengths[@]}" 2>"$scratch/err" >/dev/null; then fail "train reused a run folder"; fi
grep -q "the run folder is in use" "$scratch/err" || fail "unexpected error: $(cat "$scratch/err")"
[[ $(sha256sum <"$killed/$last") == "$before" ]] || fail "a refused train changed $last"
echo "PASS"
