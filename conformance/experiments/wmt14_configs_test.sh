#!/usr/bin/env bash
# The WMT14 En-De configs (experiments/configs/wmt14_ende_{base,big}.json) run end to end on a
# tiny synthetic corpus in their layout (train, newstest2013, newstest2014 .en/.de): `prepare`
# (the sampled vocabulary, the binarized folder), its reuse, and 2 steps of `train --data`, with
# only the sizes shrunk (vocabulary, model, batch) so the test takes seconds. Everything else (the
# dataset, splits, filter, schedule, label smoothing, optimizer) is the committed recipe.
# usage: wmt14_configs_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

corpus="$scratch/wmt14"
mkdir -p "$corpus"
for split in train:1:200 newstest2013:201:220 newstest2014:221:240; do
  IFS=: read -r name first last <<<"$split"
  for ((i = first; i <= last; i++)); do echo "a dog number $i runs $((i % 7)) times"; done >"$corpus/$name.en"
  for ((i = first; i <= last; i++)); do echo "ein hund nummer $i läuft $((i % 7)) mal"; done >"$corpus/$name.de"
done

for size in base big; do
  config="$2/experiments/configs/wmt14_ende_$size.json"
  "$trepro" info "$config" >/dev/null || { echo "FAIL: $config does not validate" >&2; exit 1; }
  $python - "$config" "$scratch/$size.json" "$corpus" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["model"].update(vocab_size=64, d_model=16, heads=2, encoder_layers=1, decoder_layers=1, d_ff=32)
config["data"]["vocabulary"].update(size=64, sample_sentences=300)
config["data"]["dir"] = sys.argv[3]
config["train"].update(max_tokens=256)  # 8 batches a step on 8 shards, as the paper's 8 GPUs
json.dump(config, open(sys.argv[2], "w"))
PY
  "$trepro" prepare "$scratch/$size.json" --out "$scratch/prepared_$size" 2>"$scratch/prepare_$size.log" >/dev/null
  grep -q "binarizing train: 200 pairs" "$scratch/prepare_$size.log" ||
    { cat "$scratch/prepare_$size.log" >&2; echo "FAIL: no progress line for binarizing train" >&2; exit 1; }
  "$trepro" prepare "$scratch/$size.json" --out "$scratch/prepared_$size" 2>&1 >/dev/null | grep -q "reusing" ||
    { echo "FAIL: a second prepare did not reuse the folder" >&2; exit 1; }
  "$trepro" train "$scratch/$size.json" --data "$scratch/prepared_$size" --out "$scratch/run_$size" --steps 2 \
    --backend cpu >"$scratch/train_$size.log" 2>&1 || { cat "$scratch/train_$size.log" >&2; exit 1; }
  $python - "$scratch/run_$size/report.json" <<'PY' || exit 1
import json, sys
report = json.load(open(sys.argv[1]))
steps = report["curve"]
assert report["status"] == "finished", report["status"]
assert len(steps) == 2 and all(s["loss"] > 0 for s in steps), steps
assert report["data"]["dataset"] == "parallel" and report["data"]["train_pairs"] == 200, report["data"]
assert report["data"]["test_split"] == "newstest2014", report["data"]
PY
  echo "$size: prepared, reused, 2 steps trained on newstest2013-validated data"
done
