#!/usr/bin/env bash
# Crafted or broken input files make trepro exit with an error that names the file and what is
# wrong, never with a signal: JSON nested 100,000 deep (a config, a safetensors header), a key
# given twice, token ids without a token (a batch of 0 sequences or of 0 positions), a corpus
# without a pair that fits, checkpoints with a NaN weight or metadata out of range.
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

# edit_checkpoint IN OUT EDIT...: a copy of the checkpoint IN at OUT with EDITs applied in turn:
# "metadata KEY VALUE" sets a metadata field; "nan" makes element 3 of the first parameter (F32)
# NaN and prints that parameter's name.
edit_checkpoint() {
  "$python" - "$@" <<'PY'
import json, struct, sys
source, target, edits = sys.argv[1], sys.argv[2], sys.argv[3:]
data = open(source, "rb").read()
size = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + size])
metadata = header.pop("__metadata__")
body = {name: bytearray(data[8 + size + e["data_offsets"][0]:8 + size + e["data_offsets"][1]]) for name, e in header.items()}
while edits:
    if edits[0] == "metadata":
        metadata[edits[1]] = edits[2]
        edits = edits[3:]
        continue
    if edits[0] == "nan":
        name = min(k for k in header if not k.startswith("adam."))
        assert header[name]["dtype"] == "F32", header[name]
        body[name][12:16] = struct.pack("<f", float("nan"))
        print(name)
    else:
        sys.exit(f"edit_checkpoint: unknown edit {edits[0]}")
    edits = edits[1:]
offset, tensors = 0, b""
for name, e in header.items():
    e["data_offsets"] = [offset, offset + len(body[name])]
    offset += len(body[name])
    tensors += body[name]
text = json.dumps({"__metadata__": metadata, **header}).encode()
open(target, "wb").write(struct.pack("<Q", len(text)) + text + tensors)
PY
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

# Checkpoints damaged on disk or edited by hand. A NaN weight loaded everywhere: translate
# decoded with it, average wrote a NaN, and train --resume ran into a NaN loss and called the
# file "the last good checkpoint". Metadata was read with std::stoll ("trepro: error: stoll"),
# and a negative step was accepted.
run="$scratch/tiny_run"
"$trepro" train "$scratch/tiny_multi30k.json" --out "$run" --steps 4 >/dev/null
echo "ein hund nummer 3 läuft 3 mal" >"$scratch/sentence.de"
nan_weights="$scratch/nan_weights.safetensors"
tensor=$(edit_checkpoint "$run/checkpoints/step_4.safetensors" "$nan_weights" nan)
expect_error "$nan_weights: tensor $tensor: element 3 is nan, expected finite weights" \
  "$trepro" translate "$run" --checkpoint "$nan_weights" --greedy --input "$scratch/sentence.de"
# forward reads a training checkpoint's parameters, its Adam moments ignored.
"$trepro" forward --config "$run/config.json" --weights "$run/checkpoints/step_4.safetensors" --src "$ids" \
  --tgt "$ids" --out "$scratch/sound.safetensors" >/dev/null || fail "forward --weights of a training checkpoint"
expect_error "$nan_weights: tensor $tensor: element 3 is nan, expected finite weights" \
  "$trepro" forward --config "$run/config.json" --weights "$nan_weights" --src "$ids" \
  --tgt "$ids" --out "$scratch/o.safetensors"
cp -r "$run" "$scratch/nan_run"
cp "$nan_weights" "$scratch/nan_run/checkpoints/step_4.safetensors"
expect_error "$scratch/nan_run/checkpoints/step_4.safetensors: tensor $tensor: element 3 is nan" \
  "$trepro" average "$scratch/nan_run" --last 1 --out "$scratch/average.safetensors"
expect_error "$scratch/nan_run/checkpoints/step_4.safetensors: tensor $tensor: element 3 is nan" \
  "$trepro" train --resume --out "$scratch/nan_run"

edit_checkpoint "$run/checkpoints/step_4.safetensors" "$scratch/step_abc.safetensors" metadata step abc
expect_error "$scratch/step_abc.safetensors: metadata step: not a number: \"abc\"" \
  "$trepro" translate "$run" --checkpoint "$scratch/step_abc.safetensors" --greedy --input "$scratch/sentence.de"
cp -r "$run" "$scratch/negative_step_run"
edit_checkpoint "$run/checkpoints/step_4.safetensors" "$scratch/negative_step_run/checkpoints/step_4.safetensors" \
  metadata step -7
expect_error "$scratch/negative_step_run/checkpoints/step_4.safetensors: metadata step: -7, expected an integer >= 0" \
  "$trepro" train --resume --out "$scratch/negative_step_run"
# A batch index past its epoch's end (a checkpoint of another corpus): an error, not a read past
# the epoch's batch list.
cp -r "$run" "$scratch/batch_past_run"
edit_checkpoint "$run/checkpoints/step_4.safetensors" "$scratch/batch_past_run/checkpoints/step_4.safetensors" \
  metadata batch 100000
expect_error "batch 100000 is past the epoch's " "$trepro" train --resume --out "$scratch/batch_past_run" --steps 6

if [[ -e "$scratch/o.safetensors" || -e "$scratch/run" || -e "$scratch/average.safetensors" ]]; then
  echo "FAIL: a rejected command wrote its output" >&2
  exit 1
fi
echo "PASS"
