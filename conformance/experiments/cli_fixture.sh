# Sourced by the CLI tests: a scratch folder, a tiny Multi30K-shaped data folder (generated, so
# the tests need no downloaded data) and a tiny config that trains on it across epochs.
set -euo pipefail
scratch=$(mktemp -d "${TMPDIR:-/tmp}/trepro_cli_test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# 120 pairs "ein hund nummer N läuft" / "a dog number N runs", 20 for val and the 2016 test set,
# 10 for each 2017 test set (the three that sweeps decode).
make_multi30k_fixture() {
  local data="$scratch/data/multi30k" split first last i
  mkdir -p "$data"
  for split in train:1:120 val:121:140 test_2016_flickr:141:160 test_2017_flickr:161:170 test_2017_mscoco:171:180; do
    IFS=: read -r name first last <<<"$split"
    for ((i = first; i <= last; i++)); do echo "ein hund nummer $i läuft $((i % 7)) mal"; done | gzip >"$data/$name.de.gz"
    for ((i = first; i <= last; i++)); do echo "a dog number $i runs $((i % 7)) times"; done | gzip >"$data/$name.en.gz"
  done
  cat >"$scratch/tiny_multi30k.json" <<JSON
{
  "model": {"vocab_size": 64, "d_model": 16, "heads": 2, "encoder_layers": 1, "decoder_layers": 1,
            "d_ff": 32, "max_len": 32, "dropout": 0.1},
  "train": {"optimizer": {"lr": 0.003}, "schedule": {"kind": "inverse_sqrt", "warmup": 4}, "seed": 5,
            "max_tokens": 128, "update_freq": 2, "max_steps": 1000, "validate_every": 4,
            "checkpoint_every": 4},
  "data": {"dataset": "multi30k", "source_language": "de", "target_language": "en",
           "vocabulary": {"kind": "bpe", "size": 64}, "epochs": 3, "dir": "$scratch/data"}
}
JSON
}

# The jsonschema validator lives in Debian's python3 (python3-jsonschema).
python=/usr/bin/python3

# A test's failure: what went wrong, on stderr, and exit 1.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
