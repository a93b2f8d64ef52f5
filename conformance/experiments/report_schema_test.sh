#!/usr/bin/env bash
# report.json of real runs validates against reports/schema.json (and a broken one does not) and names
# the CPU as /proc/cpuinfo does, as the run's train.log does;
# `trepro upgrade-report` rewrites a schema_version 1 report as this build writes it;
# a NaN stops a run naming the step, with a non_finite report; `trepro average` averages the
# last K checkpoints and refuses a K larger than the run has.
# usage: report_schema_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"
validate="$python $2/reports/validate_report.py"

"$trepro" train "$2/experiments/configs/copy_tiny.json" --out "$scratch/copy" --steps 10 --validate-every 5 >/dev/null
make_multi30k_fixture
"$trepro" train "$scratch/tiny_multi30k.json" --out "$scratch/multi30k" >/dev/null
$validate "$scratch/copy/report.json" "$scratch/multi30k/report.json" || fail "a report does not match the schema"
"$python" - "$scratch/multi30k/report.json" <<'PY' || fail "the multi30k report lacks the test perplexity or the CPU"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["test"]["split"] == "test_2016_flickr", report["test"]
assert report["test"]["perplexity"] >= 1, report["test"]
assert report["data"]["vocabulary"]["size"] == 64
fields = {}
for line in open("/proc/cpuinfo"):  # the first processor's block
    if not line.strip():
        break
    key, _, value = line.partition(":")
    fields[key.strip()] = value.strip()
cpu = (f"{fields['model name']} (family {fields['cpu family']}, model {fields['model']}, stepping {fields['stepping']})"
       if fields.get("model name") else "unknown")
assert report["cpu"] == cpu, (report["cpu"], cpu)
log = open(sys.argv[1].replace("report.json", "train.log")).readline()
assert log.rstrip().endswith(f"threads) of {cpu}"), log
PY

# `trepro upgrade-report` turns a report of schema_version 1 (every step under "steps", as
# RUN/history.jsonl has them) into exactly what this build writes, and leaves that as it is. 160
# steps: the curve's single steps and two of its windows.
"$trepro" train "$2/experiments/configs/copy_tiny.json" --out "$scratch/long" --steps 160 --validate-every 80 >/dev/null
"$python" - "$scratch/long" "$scratch/version1.json" <<'PY' || fail "could not write a schema_version 1 report"
import json, sys
run, out = sys.argv[1:]
report = json.load(open(f"{run}/report.json"))
steps = [json.loads(line) for line in open(f"{run}/history.jsonl")]
steps = [{k: v for k, v in s.items() if k != "kind"} for s in steps if s["kind"] == "step"]
assert len(steps) == 160 and [p["steps"] for p in report["curve"]][-3:] == [1, 50, 10], report["curve"][-3:]
del report["curve"]
report.update(schema_version=1, steps=steps)
json.dump(report, open(out, "w"), indent=1)
PY
"$trepro" upgrade-report "$scratch/version1.json" "$scratch/long/report.json" >"$scratch/upgrade.log" ||
  fail "upgrade-report: $(cat "$scratch/upgrade.log")"
grep -q "version1.json: schema_version 1 -> 2, 160 steps -> 102 curve points" "$scratch/upgrade.log" &&
  grep -q "long/report.json: already at schema_version 2" "$scratch/upgrade.log" ||
  fail "upgrade-report said: $(cat "$scratch/upgrade.log")"
"$python" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
  "$scratch/version1.json" "$scratch/long/report.json" || fail "the upgraded report differs from the one written"
echo '{"schema_version": 7}' >"$scratch/version7.json"
if "$trepro" upgrade-report "$scratch/version7.json" 2>"$scratch/upgrade.err"; then fail "schema_version 7 upgraded"; fi
grep -q "version7.json: schema_version 7, expected 1 or 2" "$scratch/upgrade.err" ||
  fail "the refusal does not name the file and version: $(cat "$scratch/upgrade.err")"

# Without --backend a run takes the fastest backend (here a cpu-<target>: no GPU) and reports the
# threads that backend computes with (TREPRO_THREADS sizes the cpu pool).
TREPRO_THREADS=1 "$trepro" train "$2/experiments/configs/copy_tiny.json" --out "$scratch/default" --steps 2 >/dev/null
"$python" - "$scratch/default/report.json" <<'PY' || fail "the default backend or its thread count is not reported"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["backend"].startswith("cpu-") or report["backend"] == "cuda", report["backend"]
assert report["backend"] == "cuda" or report["threads"] == 1, report["threads"]
PY

# The schema can fail: a report without its curve, and one with a BLEU but no signature.
"$python" - "$scratch/copy/report.json" "$scratch/broken1.json" "$scratch/broken2.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
del report["curve"]
json.dump(report, open(sys.argv[2], "w"))
report = json.load(open(sys.argv[1]))
report["test"]["bleu"] = 30.0
json.dump(report, open(sys.argv[3], "w"))
PY
for broken in broken1 broken2; do
  if $validate "$scratch/$broken.json" 2>/dev/null; then fail "$broken.json passed the schema"; fi
done

# A learning rate of 1e30 makes the weights overflow: the run must stop naming the step.
sed 's/"lr": 0.003/"lr": 1e30/; s/"inverse_sqrt", "warmup": 4/"constant", "warmup": 0/' \
  "$scratch/tiny_multi30k.json" >"$scratch/explode.json"
if "$trepro" train "$scratch/explode.json" --out "$scratch/explode" 2>"$scratch/explode.err" >/dev/null; then
  fail "a run with lr 1e30 finished"
fi
grep -q "step [0-9]*: .*not finite\|step [0-9]*: the loss" "$scratch/explode.err" ||
  fail "the error does not name the step: $(cat "$scratch/explode.err")"
$validate "$scratch/explode/report.json" || fail "the non_finite report does not match the schema"
grep -q '"status": "non_finite"' "$scratch/explode/report.json" || fail "status is not non_finite"

# Averaging: the last 2 checkpoints of the Multi30K run; more than it has is an error.
"$trepro" average "$scratch/multi30k" --last 2 --out "$scratch/average.safetensors" >/dev/null ||
  fail "average --last 2"
[[ -s "$scratch/average.safetensors" ]] || fail "no average written"
if "$trepro" average "$scratch/multi30k" --last 1000 --out "$scratch/too_many.safetensors" 2>/dev/null; then
  fail "average --last 1000 succeeded"
fi
[[ ! -e "$scratch/too_many.safetensors" ]] || fail "a failed average left a file"
echo "PASS"
