#!/usr/bin/env bash
# `trepro train --resume` after a kill between a validation that wrote best.safetensors and the
# next step checkpoint: the run adopts that file as its best (a replay would recompute it bit for
# bit), so even a session that stops earlier (--steps) reports the file's step as the best and
# tests it. An unreadable best.safetensors is set aside, not a reason to refuse the resume.
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
grep -q "best.safetensors of step 12, past step 8 (a validation after the last step checkpoint), stays the best" \
  "$scratch/resume.out" || fail "the console does not say the best checkpoint was kept ($(cat "$scratch/resume.out"))"
best_file=$(file_step "$run/checkpoints/best.safetensors")
"$python" - "$run/report.json" "$best_file" <<'PY' || fail "the report and best.safetensors disagree"
import json, sys
report, file_step = json.load(open(sys.argv[1])), int(sys.argv[2])
steps = (report["best"]["step"], report["test"].get("checkpoint_step"), file_step)
print(f"best step {steps[0]}, test checkpoint step {steps[1]}, best.safetensors step {steps[2]}")
sys.exit(0 if steps == (12, 12, 12) else 1)
PY

echo "not a safetensors file" >"$run/checkpoints/best.safetensors"
"$trepro" train --resume --out "$run" --steps 8 >"$scratch/unreadable.out" || fail "resume refused an unreadable best.safetensors"
grep -q "set aside as .*best.safetensors.unreadable" "$scratch/unreadable.out" || fail "the console does not say it was set aside"
[[ -s "$run/checkpoints/best.safetensors.unreadable" ]] || fail "the unreadable file was not kept aside"
echo "PASS"
