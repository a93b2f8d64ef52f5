#!/usr/bin/env bash
# `trepro ablate` with seeds: a two-variant grid x two seeds over the tiny Multi30K-shaped corpus
# runs every cell (train, then decode the test split), writes valid run reports and a valid
# summary with statistics, a baseline comparison and a claim verdict; a sweep killed midway and
# rerun ends with the same cells as one never interrupted; --jobs 2 and single cells
# (--variant/--seed, as a job array runs them) give the same cells too; --summarize-only
# rebuilds the summary; cells of two backends are never mixed in one spec.
# usage: ablate_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"
validate="$python $2/reports/validate_report.py"

make_multi30k_fixture
cat >"$scratch/spec.json" <<JSON
{"name": "tiny", "base": "tiny_multi30k.json", "overrides": {"data.epochs": 1},
 "grid": {"model.norm": ["post", "pre"]}, "seeds": [5, 6], "baseline": "norm=post",
 "claims": [{"claim": "Pre-LN decodes better", "better": "norm=pre", "worse": "norm=post", "metric": "bleu"},
            {"claim": "Pre-LN has the lower validation perplexity", "better": "norm=pre", "worse": "norm=post",
             "metric": "validation_perplexity"}]}
JSON
cells=("norm=post/seed_5" "norm=pre/seed_5" "norm=post/seed_6" "norm=pre/seed_6")

# The reference sweep, never interrupted; it ends with its claims and cells (reports/render.py --tables).
"$trepro" ablate "$scratch/spec.json" --out "$scratch/whole" >"$scratch/whole.log" || fail "ablate failed"
grep -q "^### Claims" "$scratch/whole.log" && grep -q "^### Cells" "$scratch/whole.log" ||
  fail "the sweep does not end with its tables: $(tail -5 "$scratch/whole.log")"
for cell in "${cells[@]}"; do $validate "$scratch/whole/$cell/report.json" || fail "$cell: report schema"; done
$validate "$scratch/whole/summary.json" || fail "the summary does not match its schema"
"$python" - "$scratch/whole" <<'PY' || fail "the summary does not reflect the cells"
import json, sys
folder = sys.argv[1]
summary = json.load(open(f"{folder}/summary.json"))
assert summary["seeds"] == [5, 6] and summary["baseline"] == "norm=post", summary
names = [v["name"] for v in summary["variants"]]
assert names == ["norm=post", "norm=pre"], names
for v in summary["variants"]:
    assert [c["seed"] for c in v["cells"]] == [5, 6], v
    for c in v["cells"]:
        report = json.load(open(f"{folder}/{c['report']}"))
        assert c["status"] == "finished", c
        assert report["config"]["model"]["norm"] == v["set"]["model.norm"], (v, report["config"]["model"])
        assert report["config"]["train"]["seed"] == c["seed"], c
        assert "test_bleu" in c and "hypotheses" in c, c
        assert len(open(f"{folder}/{c['hypotheses']}").read().splitlines()) == 20, c
        # Every cell decodes Multi30K's three test sets; the first is also the report's "test".
        tests = report["tests"]
        assert sorted(tests) == ["test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"], tests.keys()
        assert tests["test_2016_flickr"]["bleu"] == report["test"]["bleu"], (tests, report["test"])
        assert report["test"]["split"] == "test_2016_flickr", report["test"]
        for split, lines in (("test_2017_flickr", 10), ("test_2017_mscoco", 10)):
            hyp = f"{folder}/{c['report'].rsplit('/', 1)[0]}/{tests[split]['hypotheses_file']}"
            assert len(open(hyp).read().splitlines()) == lines, (split, hyp)
        # The three sets one after another, scored by the summary.
        assert 0 <= c["test_bleu_three_sets"] <= 100 and sorted(c["test_sets"]) == sorted(tests), c
    stats = v["statistics"]["test_bleu"]
    assert stats["n"] == 2 and stats["values"] == [c["test_bleu"] for c in v["cells"]], stats
assert "vs_baseline" not in summary["variants"][0]
vs = summary["variants"][1]["vs_baseline"]
assert vs["metric"] == "bleu" and len(vs["per_seed"]) == 2 and "p_value" in vs and len(vs["interval"]) == 2, vs
claims = summary["claims"]
assert [c["metric"] for c in claims] == ["bleu", "validation_perplexity"], claims
# Every cell decoded the three test sets, so the BLEU claim compares on their concatenation.
assert claims[0]["test_set"]["method"].startswith("paired bootstrap") and claims[0]["test"]["quantity"] == "test_bleu_three_sets", claims
assert claims[0]["test_sets"] == ["test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"], claims
assert claims[1]["test"]["quantity"] == "log_test_perplexity" and claims[1]["measured_on"] == "test_perplexity", claims
assert all("p_holm" in c and "q_bh" in c for c in claims), claims
for c in claims:
    assert c["verdict"] in ("reproduced", "contradicted", "inconclusive"), c
PY

# Losses of every cell, to compare sweeps cell by cell.
losses() {
  "$python" - "$1" "${cells[@]}" <<'PY'
import json, sys
for cell in sys.argv[2:]:
    report = json.load(open(f"{sys.argv[1]}/{cell}/report.json"))
    print(cell, [s["loss"] for s in report["curve"]], report["test"].get("bleu"))
PY
}
losses "$scratch/whole" >"$scratch/whole.losses"

# A rerun skips every finished cell.
"$trepro" ablate "$scratch/spec.json" --out "$scratch/whole" >"$scratch/rerun.log" || fail "rerun failed"
[[ $(grep -c "already finished, skipped" "$scratch/rerun.log") == 4 ]] || fail "a finished cell ran again"

# A finished cell trained on another budget is not reused: the sweep stops, naming the key and
# both values, until --rerun-stale trains it again on the budget asked for. A budget inside the
# warmup (4 steps here) is warned about.
cp -r "$scratch/whole" "$scratch/stale"
"$trepro" ablate "$scratch/spec.json" --out "$scratch/stale" --variant norm=pre --seed 5 --steps 3 \
  >"$scratch/stale.log" 2>"$scratch/err.log" && fail "a cell trained on another budget was reused"
grep -qF "norm=pre seed 5 trained another config than the spec asks for now" "$scratch/err.log" &&
  grep -qF "train.max_steps: 1000 -> 3" "$scratch/err.log" || fail "the stale key is not named: $(cat "$scratch/err.log")"
grep -qF "ablate: warning: norm=pre: a budget of 3 steps ends inside the warmup (train.schedule.warmup 4)" \
  "$scratch/stale.log" || fail "a budget inside the warmup was not warned about: $(cat "$scratch/stale.log")"
"$trepro" ablate "$scratch/spec.json" --out "$scratch/stale" --variant norm=pre --seed 5 --steps 3 --rerun-stale \
  >"$scratch/stale.log" || fail "--rerun-stale failed"
grep -qF "norm=pre seed 5: stale (--rerun-stale): training it again" "$scratch/stale.log" || fail "the stale cell was not retrained"
"$python" -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["config"]["train"]["max_steps"] == 3, r["config"]["train"]' \
  "$scratch/stale/norm=pre/seed_5/report.json" || fail "the retrained cell is not on the budget asked for"

# Killed midway (once the second cell has a checkpoint), then rerun: every cell the kill found
# finished is skipped, every one it found with checkpoints resumes, and the cells end as the
# whole sweep's. A cell trains for only tens of milliseconds after its step 4, so the poll is
# quick, and the expectations are read from what the kill left, whenever it landed.
"$trepro" ablate "$scratch/spec.json" --out "$scratch/killed" >"$scratch/killed.log" &
pid=$!
for _ in $(seq 12000); do
  [[ -e "$scratch/killed/norm=pre/seed_5/checkpoints/step_4.safetensors" ]] && break
  sleep 0.005
done
kill -9 "$pid" 2>/dev/null || fail "the sweep ended before it could be killed"
wait "$pid" 2>/dev/null || true
"$python" - "$scratch/killed" "${cells[@]}" >"$scratch/expected_resume.log" <<'PY'
import json, os, sys
folder = sys.argv[1]
for cell in sys.argv[2:]:
    name = cell.replace("/seed_", " seed ")
    report = os.path.join(folder, cell, "report.json")
    if os.path.exists(report) and "bleu" in json.load(open(report))["test"]:
        print(f"ablate: {name}: already finished, skipped")
    elif os.path.isdir(os.path.join(folder, cell, "checkpoints")):
        print(f"ablate: {name}: resuming")
    else:
        print(f"ablate: {name}: training")
PY
"$trepro" ablate "$scratch/spec.json" --out "$scratch/killed" >"$scratch/resumed.log" || fail "the resumed sweep failed"
grep -q "resuming\|skipped" "$scratch/expected_resume.log" || fail "the kill found no cell begun"
while read -r line; do
  grep -qF "$line" "$scratch/resumed.log" || fail "after the kill, expected \"$line\""
done <"$scratch/expected_resume.log"
losses "$scratch/killed" | diff "$scratch/whole.losses" - || fail "a killed and resumed sweep differs from a whole one"

# Two cells at a time, each a child with one thread: the same cells (results do not depend on
# the thread count).
TREPRO_THREADS=2 "$trepro" ablate "$scratch/spec.json" --out "$scratch/jobs" --jobs 2 >"$scratch/jobs.log" \
  || fail "--jobs 2 failed"
[[ $(grep -c "started (1 threads" "$scratch/jobs.log") == 4 ]] || fail "2 threads were not shared by 2 jobs"
losses "$scratch/jobs" | diff "$scratch/whole.losses" - || fail "--jobs 2 differs from one cell at a time"

# A sweep killed with --jobs takes its children with it (a rerun must not meet them training).
# Its cells train for 50 epochs here, so a child outliving the sweep would still be found.
sed 's/"data.epochs": 1/"data.epochs": 50/' "$scratch/spec.json" >"$scratch/long_spec.json"
children() { pgrep -f -- "--out $scratch/orphans --variant" || true; }
"$trepro" ablate "$scratch/long_spec.json" --out "$scratch/orphans" --jobs 2 >"$scratch/orphans.log" &
pid=$!
training() { [[ -e "$scratch/orphans/norm=post/seed_5/train.log" && -e "$scratch/orphans/norm=pre/seed_5/train.log" ]]; }
for _ in $(seq 12000); do
  training && break
  sleep 0.005
done
training && [[ $(children | wc -l) == 2 ]] || fail "the sweep did not start 2 children training"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
# They get SIGKILL with their parent (PR_SET_PDEATHSIG); their exit is not instant on a loaded
# machine, so the wait is long and ends as soon as they are gone.
for _ in $(seq 1000); do
  [[ -z $(children) ]] && break
  sleep 0.01
done
[[ -z $(children) ]] || fail "the killed sweep's children still run 10 s later"

# A cell being run refuses a second process.
mkdir -p "$scratch/locked/norm=pre"
exec {lock}>"$scratch/locked/norm=pre/seed_5.lock"
flock "$lock"
"$trepro" ablate "$scratch/spec.json" --out "$scratch/locked" --variant norm=pre --seed 5 2>"$scratch/err.log" \
  && fail "a locked cell ran"
grep -q "norm=pre seed 5 is being run by another process" "$scratch/err.log" || fail "the lock is not named"
exec {lock}>&-

# A job array: each cell alone, then the summary from the finished cells.
for cell in "${cells[@]}"; do
  "$trepro" ablate "$scratch/spec.json" --out "$scratch/array" --variant "${cell%/seed_*}" --seed "${cell#*/seed_}" \
    >>"$scratch/array.log" || fail "cell $cell alone failed"
done
[[ ! -e "$scratch/array/summary.json" ]] || fail "a single cell wrote the summary"
"$trepro" ablate "$scratch/spec.json" --out "$scratch/array" --summarize-only >/dev/null || fail "--summarize-only"
$validate "$scratch/array/summary.json" || fail "the job array's summary does not match its schema"
losses "$scratch/array" | diff "$scratch/whole.losses" - || fail "the job array's cells differ from the sweep's"

# Errors name what is wrong.
"$trepro" ablate "$scratch/spec.json" --out "$scratch/array" --variant "norm=mid" --seed 5 2>"$scratch/err.log" \
  && fail "an unknown variant was accepted"
grep -q 'no variant is named "norm=mid"' "$scratch/err.log" || fail "the unknown variant is not named"
"$trepro" ablate "$scratch/spec.json" --out "$scratch/array" --variant "norm=pre" --seed 9 2>"$scratch/err.log" \
  && fail "a seed outside the spec was accepted"
grep -q "seed 9 is not among variant .*'s seeds" "$scratch/err.log" || fail "the foreign seed is not named"
# A spec's cells stay on one backend: the summary names it; a cell of another is neither skipped
# nor resumed, and a summary over two is refused, naming a cell of each.
backend=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["backend"])' "$scratch/array/summary.json")
[[ $backend == $("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["backend"])' \
  "$scratch/array/norm=pre/seed_5/report.json") ]] || fail "the summary's backend is not the cells' ($backend)"
cp -r "$scratch/array" "$scratch/mixed"
"$trepro" ablate "$scratch/spec.json" --out "$scratch/mixed" --variant "norm=pre" --seed 5 --backend reference-f32 \
  2>"$scratch/err.log" && fail "a cell finished on $backend was taken as done on reference-f32"
grep -qF "norm=pre seed 5 ran on \"$backend\", this sweep runs on \"reference-f32\"" "$scratch/err.log" ||
  fail "the other backend is not named: $(cat "$scratch/err.log")"
"$python" - "$scratch/mixed/norm=pre/seed_5/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["backend"] = "cuda"
json.dump(report, open(sys.argv[1], "w"))
PY
"$trepro" ablate "$scratch/spec.json" --out "$scratch/mixed" --summarize-only 2>"$scratch/err.log" &&
  fail "a summary over two backends was written"
grep -qF "mixed/norm=pre/seed_5/report.json: trained on cuda, but $scratch/mixed/norm=post/seed_5/report.json trained on $backend" \
  "$scratch/err.log" || fail "the two backends' cells are not named: $(cat "$scratch/err.log")"
# A cell report of schema_version 1 (every step under "steps") is named, with the command that
# upgrades it.
"$python" - "$scratch/array/norm=pre/seed_6/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report.update(schema_version=1, steps=report.pop("curve"))
json.dump(report, open(sys.argv[1], "w"))
PY
"$trepro" ablate "$scratch/spec.json" --out "$scratch/array" --summarize-only 2>"$scratch/err.log" \
  && fail "a schema_version 1 cell was summarized"
grep -q 'norm=pre/seed_6/report.json: no "curve" (a report of schema_version 1; `trepro upgrade-report' \
  "$scratch/err.log" || fail "the old report is not named: $(cat "$scratch/err.log")"
echo "PASS"
