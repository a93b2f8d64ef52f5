#!/usr/bin/env bash
# Crafted or broken input files make trepro exit with an error that names the file and what is
# wrong, never with a signal: JSON nested 100,000 deep (a config, a safetensors header), a key
# given twice, token ids without a token (a batch of 0 sequences or of 0 positions), a corpus
# without a pair that fits.
# usage: crafted_inputs_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

# expect_error EXPECTED COMMAND...: COMMAND exits with status 1 and its message contains EXPECTED.
expect_error() {
  local expected=$1 status=0
  shift
  "$@" >"$scratch/out" 2>"$scratch/err" || status=$?
  if [[ $status -ne 1 ]] || ! grep -qF -- "$expected" "$scratch/err"; then
    echo "FAIL: $* exited with $status (1 expected) saying:" >&2
    cat "$scratch/err" >&2
    echo "expected a message containing: $expected" >&2
    exit 1
  fi
  echo "ok: $(tail -1 "$scratch/err")"
}

# write_safetensors FILE HEADER: a safetensors file with HEADER as its JSON header and no data
# (HEADER on stdin: 200 kB is too long for an argument).
write_safetensors() {
  "$python" -c 'import struct, sys; h = sys.stdin.buffer.read(); open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h)' \
    "$1" <<<"$2"
}

deep=$(printf '%*s' 100000 '' | tr ' ' '[')$(printf '%*s' 100000 '' | tr ' ' ']')
config="$2/experiments/configs/copy_tiny.json"
ids="$scratch/ids.safetensors"
"$python" -c 'import struct, sys
data = struct.pack("<6q", *([5] * 6))
h = b"{\"ids\":{\"dtype\":\"I64\",\"shape\":[2,3],\"data_offsets\":[0,48]}}"
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data)' "$ids"

echo "$deep" >"$scratch/deep.json"
expect_error "$scratch/deep.json: JSON nested deeper than 64 levels" \
  "$trepro" forward --config "$scratch/deep.json" --src "$ids" --tgt "$ids" --out "$scratch/o.safetensors"
expect_error "$scratch/deep.json: JSON nested deeper than 64 levels" "$trepro" info "$scratch/deep.json"
expect_error "$scratch/deep.json: JSON nested deeper than 64 levels" "$trepro" train "$scratch/deep.json" --out "$scratch/run"

write_safetensors "$scratch/deep.safetensors" "$deep"
expect_error "$scratch/deep.safetensors: header: JSON nested deeper than 64 levels" \
  "$trepro" forward --config "$config" --weights "$scratch/deep.safetensors" --src "$ids" --tgt "$ids" \
  --out "$scratch/o.safetensors"
expect_error "$scratch/deep.safetensors: header: JSON nested deeper than 64 levels" \
  "$trepro" forward --config "$config" --src "$scratch/deep.safetensors" --tgt "$ids" --out "$scratch/o.safetensors"

echo '{"model": {"vocab_size": 16, "vocab_size": 17}}' >"$scratch/twice.json"
expect_error "$scratch/twice.json: model.vocab_size: the key appears twice" "$trepro" info "$scratch/twice.json"

write_safetensors "$scratch/twice.safetensors" '{"ids":{"dtype":"I64","shape":[0],"data_offsets":[0,0]},"ids":{"dtype":"I64","shape":[0],"data_offsets":[0,0]}}'
expect_error "$scratch/twice.safetensors: header: ids: the key appears twice" \
  "$trepro" forward --config "$config" --src "$scratch/twice.safetensors" --tgt "$ids" --out "$scratch/o.safetensors"

# [0, 3] divided by zero in attention (SIGFPE); [2, 0] has no defined output.
write_ids() { write_safetensors "$1" "{\"ids\":{\"dtype\":\"I64\",\"shape\":$2,\"data_offsets\":[0,0]}}"; }
write_ids "$scratch/no_rows.safetensors" "[0,3]"
write_ids "$scratch/no_columns.safetensors" "[2,0]"
expect_error "$scratch/no_rows.safetensors: tensor ids: shape [0, 3] holds no token; --src needs" \
  "$trepro" forward --config "$config" --src "$scratch/no_rows.safetensors" --tgt "$ids" --out "$scratch/o.safetensors"
expect_error "$scratch/no_rows.safetensors: tensor ids: shape [0, 3] holds no token; --tgt needs" \
  "$trepro" forward --config "$config" --src "$ids" --tgt "$scratch/no_rows.safetensors" --out "$scratch/o.safetensors"
expect_error "$scratch/no_columns.safetensors: tensor ids: shape [2, 0] holds no token; --tgt needs" \
  "$trepro" forward --config "$config" --src "$ids" --tgt "$scratch/no_columns.safetensors" \
  --labels "$scratch/no_columns.safetensors" --out "$scratch/o.safetensors"
expect_error "$scratch/no_columns.safetensors: tensor ids: shape [2, 0] holds no token; --src needs" \
  "$trepro" forward --config "$config" --src "$scratch/no_columns.safetensors" --tgt "$ids" --out "$scratch/o.safetensors"

# A corpus of which no pair fits max_len gave training an epoch without a batch (SIGSEGV).
make_multi30k_fixture
sed 's/"max_len": 32/"max_len": 2/' "$scratch/tiny_multi30k.json" >"$scratch/max_len_2.json"
expect_error "$scratch/data/multi30k/train.de.gz: none of its 120 pairs fits: each is empty or longer than model.max_len 2" \
  "$trepro" train "$scratch/max_len_2.json" --out "$scratch/run_max_len_2"

if [[ -e "$scratch/o.safetensors" || -e "$scratch/run" ]]; then
  echo "FAIL: a rejected command wrote its output" >&2
  exit 1
fi
echo "PASS"
