#!/usr/bin/env bash
# Crafted or broken input files make trepro exit with an error that names the file and what is
# wrong, never with a signal: JSON nested 100,000 deep (a config, a safetensors header), a key
# given twice.
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

if [[ -e "$scratch/o.safetensors" || -e "$scratch/run" ]]; then
  echo "FAIL: a rejected command wrote its output" >&2
  exit 1
fi
echo "PASS"
