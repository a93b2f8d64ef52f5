#!/usr/bin/env bash
# train and evaluate measure the test loss over the same pairs: a parallel corpus whose test split
# has one pair past data.max_len_filter (but within model.max_len) has it left out by both, counted
# in the report (data.test_dropped_pairs, test.decoding.loss_skipped_pairs), and the two losses of
# the best checkpoint agree.
# usage: evaluation_pairs_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

data="$scratch/parallel"
mkdir -p "$data"
for split in train:1:120 valid:121:140 test:141:160; do
  IFS=: read -r name first last <<<"$split"
  for ((i = first; i <= last; i++)); do echo "ein hund nummer $i läuft"; done >"$data/$name.de"
  for ((i = first; i <= last; i++)); do echo "a dog number $i runs"; done >"$data/$name.en"
done
long=$(for i in $(seq 30); do printf 'hund %s ' "$i"; done)
sed -i "5s/.*/$long/" "$data/test.de"  # ~60 pieces: past the filter of 24, within max_len 128
cat >"$scratch/parallel.json" <<JSON
{
  "model": {"vocab_size": 64, "d_model": 16, "heads": 2, "encoder_layers": 1, "decoder_layers": 1,
            "d_ff": 32, "max_len": 128, "dropout": 0.1},
  "train": {"optimizer": {"lr": 0.003}, "schedule": {"kind": "inverse_sqrt", "warmup": 4}, "seed": 5,
            "max_tokens": 128, "max_steps": 8, "validate_every": 4, "checkpoint_every": 4},
  "data": {"dataset": "parallel", "source_language": "de", "target_language": "en", "train": "train",
           "valid": "valid", "test": ["test"], "max_len_filter": 24,
           "vocabulary": {"kind": "bpe", "size": 64}, "dir": "$data"}
}
JSON
run="$scratch/run"
"$trepro" train "$scratch/parallel.json" --out "$run" >/dev/null || fail "train failed"
cp "$run/report.json" "$scratch/trained.json"
"$trepro" evaluate "$run" --split test --greedy >/dev/null || fail "evaluate failed"
"$python" - "$scratch/trained.json" "$run/report.json" <<'PY' || fail "train and evaluate measured different test pairs"
import json, sys
trained, evaluated = (json.load(open(p)) for p in sys.argv[1:])
dropped, skipped = trained["data"]["test_dropped_pairs"], evaluated["test"]["decoding"]["loss_skipped_pairs"]
a, b = trained["test"]["loss"], evaluated["test"]["loss"]
print(f"test pairs left out: train {dropped}, evaluate {skipped}; test loss: train {a:.6f}, evaluate {b:.6f}")
sys.exit(0 if dropped == skipped == 1 and abs(a - b) <= 1e-5 * abs(b) else 1)
PY
echo "PASS"
