#!/usr/bin/env bash
# `trepro ablate --share-cells DIR` (experiments/ablation/twin_cells.h): a cell that another sweep
# under DIR has finished on the same backend is copied, not trained, and the copy is what training
# it gives (the twin trained apart has the same losses and hypotheses, head_dim written out or
# not); another seed, config or backend trains; a rerun skips the copy; a sweep whose twin trains
# in another process now runs its other cells first, then copies the twin's.
# usage: twin_cells_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"
validate="$python $2/reports/validate_report.py"

make_multi30k_fixture
shared=$scratch/sweeps
cat >"$scratch/first.json" <<JSON
{"name": "first", "base": "tiny_multi30k.json", "overrides": {"data.epochs": 1}, "seeds": [5],
 "variants": [{"name": "base", "set": {}}, {"name": "pre", "set": {"model.norm": "pre"}}], "baseline": "base"}
JSON
# head_dim8 is first's base written out (d_model 16 over 2 heads); head_dim4 is another model.
cat >"$scratch/second.json" <<JSON
{"name": "second", "base": "tiny_multi30k.json", "overrides": {"data.epochs": 1}, "seeds": [5, 6],
 "variants": [{"name": "head_dim8", "set": {"model.head_dim": 8}}, {"name": "head_dim4", "set": {"model.head_dim": 4}}],
 "baseline": "head_dim8"}
JSON

"$trepro" ablate "$scratch/first.json" --out "$shared/first" --share-cells "$shared" >"$scratch/first.log" \
  || fail "the first sweep failed"
[[ $(grep -c ": training$" "$scratch/first.log") == 2 ]] || fail "the first sweep did not train its 2 cells"
"$trepro" ablate "$scratch/second.json" --out "$shared/second" --share-cells "$shared" >"$scratch/second.log" \
  || fail "the second sweep failed"
grep -qF "ablate: head_dim8 seed 5: the same training as $shared/first/base/seed_5" "$scratch/second.log" \
  || fail "head_dim8 seed 5 was not copied from first's base: $(cat "$scratch/second.log")"
[[ $(grep -c "copied, not trained" "$scratch/second.log") == 1 ]] || fail "a cell without a twin was copied"
[[ $(grep -c ": training$" "$scratch/second.log") == 3 ]] || fail "the other seed and variant did not train"
$validate "$shared/second/head_dim8/seed_5/report.json" || fail "the copy's report does not match its schema"
$validate "$shared/second/summary.json" || fail "the summary does not match its schema"
"$python" - "$shared" <<'PY' || fail "the copy is not its twin's"
import json, sys
shared = sys.argv[1]
twin = json.load(open(f"{shared}/first/base/seed_5/report.json"))
copy = json.load(open(f"{shared}/second/head_dim8/seed_5/report.json"))
assert copy.pop("shared_from") == "first/base/seed_5", copy.get("shared_from")
assert copy == twin, "the copied report differs from its twin's beyond shared_from"
summary = json.load(open(f"{shared}/second/summary.json"))
cells = {(v["name"], c["seed"]): c for v in summary["variants"] for c in v["cells"]}
assert cells[("head_dim8", 5)]["shared_from"] == "first/base/seed_5", cells[("head_dim8", 5)]
assert all("shared_from" not in c for key, c in cells.items() if key != ("head_dim8", 5)), cells
PY
cmp "$shared/first/base/seed_5/test_2016_flickr.best.hyp.en" "$shared/second/head_dim8/seed_5/test_2016_flickr.best.hyp.en" \
  || fail "the copy's hypotheses differ from its twin's"

# What copying assumes: the twin trained apart gives the same cell.
"$trepro" ablate "$scratch/second.json" --out "$scratch/apart" --variant head_dim8 --seed 5 >"$scratch/apart.log" \
  || fail "the twin alone failed"
"$python" - "$shared/first/base/seed_5" "$scratch/apart/head_dim8/seed_5" <<'PY' || fail "twins trained apart differ"
import json, sys
first, apart = (json.load(open(f"{folder}/report.json")) for folder in sys.argv[1:])
assert [s["loss"] for s in first["curve"]] == [s["loss"] for s in apart["curve"]], "losses"
assert first["test"]["bleu"] == apart["test"]["bleu"] and first["best"] == apart["best"], "results"
PY
cmp "$shared/first/base/seed_5/test_2016_flickr.best.hyp.en" "$scratch/apart/head_dim8/seed_5/test_2016_flickr.best.hyp.en" \
  || fail "twins trained apart decode differently"

# A rerun skips the copy like any finished cell; another backend trains its own.
"$trepro" ablate "$scratch/second.json" --out "$shared/second" --share-cells "$shared" >"$scratch/rerun.log" \
  || fail "the rerun failed"
[[ $(grep -c "already finished, skipped" "$scratch/rerun.log") == 4 ]] || fail "the rerun did not skip every cell"
"$trepro" ablate "$scratch/second.json" --out "$shared/reference" --share-cells "$shared" --backend reference-f32 \
  --variant head_dim8 --seed 5 >"$scratch/reference.log" || fail "the cell on reference-f32 failed"
grep -q "head_dim8 seed 5: training$" "$scratch/reference.log" || fail "a twin of another backend was copied"

# --share-cells must be a folder, and --out a folder directly inside it.
echo "not a folder" >"$scratch/a_file"
"$trepro" ablate "$scratch/second.json" --out "$scratch/a_file/x" --share-cells "$scratch/a_file" 2>"$scratch/err.log" \
  && fail "a file was taken for the folder of shared cells"
grep -q "^trepro: error: --share-cells $scratch/a_file: not a folder" "$scratch/err.log" || fail "$(cat "$scratch/err.log")"
"$trepro" ablate "$scratch/second.json" --out "$scratch/elsewhere" --share-cells "$shared" 2>"$scratch/err.log" \
  && fail "an --out outside the folder of shared cells was accepted"
grep -q "must be a folder directly inside --share-cells $shared" "$scratch/err.log" || fail "$(cat "$scratch/err.log")"
# A twin whose report lacks what says it is complete is named.
mkdir -p "$shared/broken/base/seed_5"
echo '{"config": {}, "status": "finished"}' >"$shared/broken/base/seed_5/report.json"
"$trepro" ablate "$scratch/second.json" --out "$shared/third_try" --share-cells "$shared" --variant head_dim4 --seed 5 \
  2>"$scratch/err.log" && fail "a broken report among the shared cells went unnoticed"
grep -q "$shared/broken/base/seed_5/report.json: not a run report with status, config.data.dataset" "$scratch/err.log" \
  || fail "the broken report is not named: $(cat "$scratch/err.log")"
rm -r "$shared/broken"

# A twin training in another process: the sweep runs its other cell first, then copies the twin.
cat >"$scratch/third.json" <<JSON
{"name": "third", "base": "tiny_multi30k.json", "overrides": {"data.epochs": 60}, "seeds": [7],
 "variants": [{"name": "long", "set": {}}, {"name": "short", "set": {"data.epochs": 1}}]}
JSON
# start_twin SPEC NAME: trains SPEC's long seed 7 into $shared/NAME in the background, its pid in
# $holder, and returns once it trains (holding the twin's lock).
start_twin() {
  "$trepro" ablate "$1" --out "$shared/$2" --share-cells "$shared" --variant long --seed 7 >"$scratch/$2.log" 2>&1 &
  holder=$!
  for _ in $(seq 12000); do
    [[ -e "$shared/$2/long/seed_7/train.log" ]] && break
    sleep 0.005
  done
  kill -0 "$holder" 2>/dev/null || fail "$2 ended before the sweep started (train it longer)"
}
start_twin "$scratch/third.json" holder
# A sweep's child started while the twin seemed idle leaves the cell for later (exit 75), untouched.
deferred=0
"$trepro" ablate "$scratch/third.json" --out "$shared/child" --share-cells "$shared" --variant long --seed 7 \
  --defer-if-twin-runs >"$scratch/child.log" 2>&1 || deferred=$?
[[ $deferred == 75 ]] || fail "a child whose twin trains elsewhere did not defer: $(cat "$scratch/child.log")"
grep -q "long seed 7: the same training runs in another process (.*); left for later" "$scratch/child.log" \
  || fail "the deferral is not said: $(cat "$scratch/child.log")"
[[ ! -e $shared/child/long/seed_7 ]] || fail "the deferred cell left files"
"$trepro" ablate "$scratch/third.json" --out "$shared/third" --share-cells "$shared" >"$scratch/third.log" \
  || fail "the sweep beside a twin's training failed"
wait "$holder" || fail "the process training the twin failed"
order=$(grep -E "^ablate: [a-z]+ seed 7: (training|.*copied, not trained)$" "$scratch/third.log" | cut -d' ' -f2 | tr '\n' ' ')
[[ $order == "short long " ]] || fail "expected short trained, then long copied; the log: $(cat "$scratch/third.log")"
[[ $("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["shared_from"])' \
  "$shared/third/long/seed_7/report.json") == holder/long/seed_7 ]] \
  || fail "long was not copied from the process that trained it"

# The same with --jobs 2 (another twin: 61 epochs): the child for short starts first; the one for
# long, all that is left, waits for the twin and copies it.
sed 's/"data.epochs": 60/"data.epochs": 61/; s/"third"/"fourth"/' "$scratch/third.json" >"$scratch/fourth.json"
start_twin "$scratch/fourth.json" holder2
"$trepro" ablate "$scratch/fourth.json" --out "$shared/fourth" --share-cells "$shared" --jobs 2 >"$scratch/fourth.log" \
  || fail "the sweep with --jobs 2 beside a twin's training failed"
wait "$holder" || fail "the process training the second twin failed"
order=$(grep -E "^ablate: [a-z]+ seed 7: started" "$scratch/fourth.log" | cut -d' ' -f2 | tr '\n' ' ')
[[ $order == "short long " ]] || fail "--jobs 2 did not start short first: $(cat "$scratch/fourth.log")"
grep -q "copied, not trained" "$shared/fourth/logs/long.seed_7.log" || fail "--jobs 2 did not copy long"
[[ $("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["shared_from"])' \
  "$shared/fourth/long/seed_7/report.json") == holder2/long/seed_7 ]] || fail "--jobs 2 copied long from elsewhere"
echo "PASS"
