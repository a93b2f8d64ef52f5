#!/usr/bin/env bash
# train.patience: a run whose validation loss stops improving ends once `patience` validations
# in a row bring no new best, with status "finished" and "stopped_early": true in a report that
# matches reports/schema.json; --resume of such a run trains no further step.
# usage: early_stop_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

# The copy task with a learning rate so small that float32 weights do not move: every
# validation loss after the first equals the best, so patience 2 runs out at the third.
"$python" - "$2/experiments/configs/copy_tiny.json" "$scratch/patient.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["train"]["optimizer"]["lr"] = 1e-30
config["train"]["schedule"] = {"kind": "constant", "warmup": 0}
config["train"]["patience"] = 2
json.dump(config, open(sys.argv[2], "w"), indent=2)
PY
"$trepro" train "$scratch/patient.json" --out "$scratch/run" --validate-every 5 --checkpoint-every 100 >/dev/null
"$python" "$2/reports/validate_report.py" "$scratch/run/report.json" || fail "the report does not match the schema"
check_report() {
  "$python" - "$scratch/run/report.json" <<'PY' || fail "$1"
import json, sys
report = json.load(open(sys.argv[1]))
steps = [s["step"] for s in report["curve"]]
validations = [v["step"] for v in report["validation"]]
assert report["status"] == "finished", report["status"]
assert report["stopped_early"] is True, report.get("stopped_early")
assert report["config"]["train"]["patience"] == 2, report["config"]["train"]
assert steps[-1] < report["config"]["train"]["max_steps"], steps[-1]
# Stopped at the validation that used up the patience: two after the best, none later.
assert [v for v in validations if v > report["best"]["step"]] == validations[-2:], (validations, report["best"])
assert validations[-1] == steps[-1], (validations, steps[-1])
print(f"stopped early at step {steps[-1]}, best step {report['best']['step']}, validations {validations}")
PY
}
check_report "the run did not stop early as train.patience says"
last=$(ls "$scratch/run/checkpoints" | grep step_ | sort -t_ -k2 -n | tail -1)
[[ "$last" == "step_$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["curve"][-1]["step"])' "$scratch/run/report.json").safetensors" ]] ||
  fail "the last step has no checkpoint ($last)"

# Resuming a run that stopped early keeps it stopped.
"$trepro" train --resume --out "$scratch/run" >/dev/null
check_report "a resumed early-stopped run trained on"

# Without the key the config, and so its hash, is what it was before train.patience existed.
"$trepro" train "$2/experiments/configs/copy_tiny.json" --out "$scratch/plain" --steps 2 >/dev/null
"$python" - "$scratch/plain/report.json" "$scratch/plain/config.json" <<'PY' || fail "a config without patience is written with it"
import json, sys
report, config = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert "patience" not in report["config"]["train"] and "patience" not in config["train"]
assert report["stopped_early"] is False
PY
echo "PASS"
