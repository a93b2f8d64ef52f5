#!/usr/bin/env bash
# `trepro train --resume` after a kill between a validation that wrote best.safetensors and the
# next step checkpoint: when the resumed session does not replay that validation (here it stops
# earlier, --steps), best.safetensors goes back to the best of the restored step, so the report's
# best step, its test checkpoint step and the file's own step agree.
# usage: resume_best_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

make_multi30k_fixture
run="$scratch/run"
"$trepro" train "$scratch/tiny_multi30k.json" --out "$run" --steps 12 --validate-every 4 --checkpoint-every 8 \
  >/dev/null || fail "train failed"

# The step a safetensors file was written at, from its __metadata__.
file_step() {
  "$python" - "$1" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    (length,) = struct.unpack("<Q", f.read(8))
    print(json.loads(f.read(length))["__metadata__"]["step"])
PY
}
[[ $(file_step "$run/checkpoints/best.safetensors") == 12 ]] || fail "precondition: the best validation is not step 12's"

# The disk of a session killed after validation 12 wrote best.safetensors, before step_12.
rm "$run/checkpoints/step_12.safetensors"
"$trepro" train --resume --out "$run" --steps 8 >"$scratch/resume.out" || fail "train --resume failed"
grep -q "best.safetensors of step 12 is past step 8: replaced by .*step_8.safetensors" "$scratch/resume.out" ||
  fail "the console does not say the best checkpoint was replaced ($(cat "$scratch/resume.out"))"
best_file=$(file_step "$run/checkpoints/best.safetensors")
"$python" - "$run/report.json" "$best_file" <<'PY' || fail "the report and best.safetensors disagree"
import json, sys
report, file_step = json.load(open(sys.argv[1])), int(sys.argv[2])
steps = (report["best"]["step"], report["test"].get("checkpoint_step"), file_step)
print(f"best step {steps[0]}, test checkpoint step {steps[1]}, best.safetensors step {steps[2]}")
sys.exit(0 if steps == (8, 8, 8) else 1)
PY
echo "PASS"
