#!/usr/bin/env bash
# `trepro ablate`: a two-variant grid over the tiny Multi30K-shaped corpus writes one valid run
# report per variant and a valid summary; rerunning skips finished variants; --summarize-only
# picks up BLEU that decoding added to a run report.
# usage: ablate_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"
validate="$python $2/reports/validate_report.py"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

make_multi30k_fixture
cat >"$scratch/spec.json" <<JSON
{"name": "tiny", "base": "tiny_multi30k.json", "overrides": {"data.epochs": 1},
 "grid": {"model.norm": ["post", "pre"]}}
JSON
"$trepro" ablate "$scratch/spec.json" --out "$scratch/ablation" >"$scratch/first.log" || fail "ablate failed"
$validate "$scratch/ablation/norm=post/report.json" "$scratch/ablation/norm=pre/report.json" \
  "$scratch/ablation/summary.json" || fail "a report does not match its schema"
"$python" - "$scratch/ablation" <<'PY' || fail "the summary does not reflect the runs"
import json, sys
folder = sys.argv[1]
summary = json.load(open(f"{folder}/summary.json"))
names = [v["name"] for v in summary["variants"]]
assert names == ["norm=post", "norm=pre"], names
for v in summary["variants"]:
    report = json.load(open(f"{folder}/{v['report']}"))
    assert v["status"] == "finished", v
    assert report["config"]["model"]["norm"] == v["set"]["model.norm"], (v, report["config"]["model"])
    assert v["config_hash"] == report["config_hash"], v
    assert v["steps"] == report["steps"][-1]["step"]
PY

"$trepro" ablate "$scratch/spec.json" --out "$scratch/ablation" >"$scratch/second.log" || fail "rerun failed"
[[ $(grep -c "already finished, skipped" "$scratch/second.log") == 2 ]] || fail "a finished variant ran again"

# Decoding adds BLEU to a run report; the summary picks it up.
"$python" - "$scratch/ablation/norm=pre/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["test"].update({"bleu": 12.5, "bleu_signature": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0"})
json.dump(report, open(sys.argv[1], "w"))
PY
"$trepro" ablate "$scratch/spec.json" --out "$scratch/ablation" --summarize-only >/dev/null || fail "--summarize-only"
grep -q '"test_bleu": 12.5' "$scratch/ablation/summary.json" || fail "the summary lacks the added BLEU"
$validate "$scratch/ablation/summary.json" || fail "the summary with BLEU does not match its schema"
echo "PASS"
