#!/usr/bin/env bash
# One process with train.replicas at its default trains what it trained before data-parallel
# training existed, so the committed results stay valid: the first steps of the committed
# Multi30K anchor run (reports/runs/multi30k_deen_anchor, dropout 0.2) are retrained on its
# backend and their loss and gradient norm must equal the committed ones exactly. Skips, saying
# why, without Multi30K or in a build that is not Release (exit 77: a failure under CI=true), and
# on a CPU without the run's target (printing "SKIP (hardware)": a skip everywhere; CI's
# machines are Zen 3 or Zen 4, and the anchor ran on cpu-avx3).
# usage: committed_run_test.sh TREPRO SOURCE_DIR BUILD_TYPE
set -euo pipefail
trepro=$1
committed=$2/reports/runs/multi30k_deen_anchor
build_type=${3:-Release}
source "$2/conformance/experiments/cli_fixture.sh"
steps=3
if [[ $build_type != Release ]]; then
  # The committed bits are a Release build's; a Debug build with sanitizers takes longer than
  # the test's 300 s to retrain even 3 steps of the anchor, and would prove nothing more.
  echo "SKIP: this is a $build_type build; the committed run was trained by a Release build"
  exit 77
fi
backend=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["backend"])' "$committed/report.json")
if [[ $("$trepro" backends) != *"\"$backend\""* ]]; then
  # Hardware, not a package: no setup can add it, so this skip holds in CI too (ctest reads it
  # from the output: SKIP_REGULAR_EXPRESSION), where exit 77 would be a failure.
  echo "SKIP (hardware): the committed run's backend $backend is not available on this CPU"
  exit 0
fi
if ! "$trepro" train "$committed/config.json" --out "$scratch/run" --steps "$steps" --backend "$backend" \
  >"$scratch/train.log" 2>&1; then
  if grep -q "multi30k" "$scratch/train.log" && grep -qi "no such file\|not found\|missing" "$scratch/train.log"; then
    echo "SKIP: Multi30K not found:"; cat "$scratch/train.log"
    exit 77
  fi
  cat "$scratch/train.log" >&2
  exit 1
fi
"$python" - "$committed/report.json" "$scratch/run/report.json" "$steps" <<'PY'
import json, sys
committed, ours, steps = json.load(open(sys.argv[1]))["curve"], json.load(open(sys.argv[2]))["curve"], int(sys.argv[3])
for a, b in zip(committed[:steps], ours[:steps], strict=True):
    for key in ("loss", "grad_norm", "tokens", "learning_rate"):
        if a[key] != b[key]:
            sys.exit(f"FAIL step {a['step']}: {key} {b[key]!r}, committed {a[key]!r}")
    print(f"step {a['step']}: loss {b['loss']!r} grad_norm {b['grad_norm']!r} as committed")
PY
echo "PASS"
