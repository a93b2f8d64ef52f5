#!/usr/bin/env bash
# A training stopped (SIGSTOP) and continued: the step the stop fell in is marked "stopped" in
# history.jsonl, the log says so, and the report's timings leave its wall time out
# (train_seconds sums the other steps' seconds; stopped_steps counts the marked ones).
# usage: stopped_steps_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

# Endless steps with a report at every 200th (a "running" report carries the timings so far).
"$trepro" train "$2/experiments/configs/copy_tiny.json" --out "$scratch/run" --steps 100000000 \
  --validate-every 200 --checkpoint-every 100000000 >"$scratch/out.log" 2>&1 &
pid=$!
trap 'kill -9 "$pid" 2>/dev/null || true; rm -rf "$scratch"' EXIT
history="$scratch/run/history.jsonl"

# Steps take most of the run's time, so a stop lands in one within a few tries.
for ((i = 0; i < 600; i++)); do [[ -s "$history" ]] && break; sleep 0.1; done
[[ -s "$history" ]] || fail "no step within a minute: $(cat "$scratch/out.log")"
for ((try = 0; try < 20; try++)); do
  kill -STOP "$pid"
  sleep 1
  kill -CONT "$pid"
  sleep 0.3
  grep -q '"stopped":true' "$history" && break
done
grep -q '"stopped":true' "$history" || fail "20 stops of a second, and no step marked stopped in $history"

# The next validation's report holds the marked step.
read_stopped() {
  "$python" -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["timings"].get("stopped_steps", 0))
except (OSError, ValueError, KeyError): print(0)' "$scratch/run/report.json"
}
for ((i = 0; i < 600; i++)); do (($(read_stopped) > 0)) && break; sleep 0.1; done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
(($(read_stopped) > 0)) || fail "no report with stopped_steps within a minute of the stop"

"$python" - "$scratch/run/report.json" "$history" "$scratch/run/train.log" <<'PY' || fail "the timings count a stopped step"
import json, sys
report = json.load(open(sys.argv[1]))
steps = [json.loads(line) for line in open(sys.argv[2]) if '"kind":"step"' in line]
reported = [s for s in steps if s["step"] <= report["curve"][-1]["step"]]
stopped = [s for s in reported if s.get("stopped")]
timed = [s for s in reported if not s.get("stopped")]
timings = report["timings"]
assert timings["stopped_steps"] == len(stopped) >= 1, (timings, len(stopped))
# Each marked step's wall time holds the second-long stop; the timings hold none of it.
assert all(s["seconds"] >= 0.9 for s in stopped), [s["seconds"] for s in stopped]
expected = sum(s["seconds"] for s in timed)
assert abs(timings["train_seconds"] - expected) <= 1e-9 * max(1.0, expected), (timings, expected)
assert timings["target_tokens"] == sum(s["tokens"] for s in reported), timings
rate = sum(s["tokens"] for s in timed) / expected
assert abs(timings["target_tokens_per_second"] - rate) <= 1e-9 * rate, (timings, rate)
log = open(sys.argv[3]).read()
for s in stopped:
    assert f"step {s['step']}: the process was stopped and continued during it" in log, s["step"]
print(f"{len(stopped)} stopped step(s) of {len(reported)}: {[round(s['seconds'], 2) for s in stopped]} s left out")
PY
"$python" "$2/reports/validate_report.py" "$scratch/run/report.json" || fail "the report does not match the schema"
echo "PASS"
