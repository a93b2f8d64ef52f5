#!/usr/bin/env bash
# The cpu backend's results do not depend on its thread count, end to end (docs/backends.md):
# the same training at TREPRO_THREADS 1 and 3 (one thread, and chunks that split unevenly) ends
# in checkpoints of the same sha256, on a small Multi30K-shaped corpus with dropout 0.1 and
# update_freq 2 (so Philox masks are drawn in chunks), and greedy and beam decoding of it write
# the same hypotheses. conformance/cpu/determinism_test.cc checks the ops one by one; this
# checks that nothing between them (the trainer, the model, the search) brings a thread-dependent
# order in.
# usage: thread_count_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"
make_multi30k_fixture
# Wide enough that the ops split: 512-token batches give the feed-forward 512 x 256 activations
# (32 dropout chunks of 4096, GEMM row blocks on every thread).
"$python" - "$scratch/tiny_multi30k.json" "$scratch/split.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["model"].update({"d_model": 64, "heads": 4, "d_ff": 256})
config["train"]["max_tokens"] = 512
config["data"]["epochs"] = 40  # 12 steps of 1,024 tokens: about 10 epochs of this corpus
json.dump(config, open(sys.argv[2], "w"))
PY

for threads in 1 3; do
  TREPRO_THREADS=$threads "$trepro" train "$scratch/split.json" --backend cpu --out "$scratch/t$threads" \
    --steps 12 >"$scratch/t$threads.log" 2>&1 || fail "training at $threads threads: $(tail -3 "$scratch/t$threads.log")"
  "$python" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["threads"] != int(sys.argv[2]))' \
    "$scratch/t$threads/report.json" "$threads" || fail "the run at $threads threads reports another thread count"
done
for checkpoint in step_12 best; do
  a=$(sha256sum <"$scratch/t1/checkpoints/$checkpoint.safetensors")
  b=$(sha256sum <"$scratch/t3/checkpoints/$checkpoint.safetensors")
  [[ $a == "$b" ]] || fail "$checkpoint.safetensors differs between 1 and 3 threads"
done
echo "ok   training: the checkpoints at 1 and 3 threads are identical"

for search in "--greedy" "--beam 4"; do
  for threads in 1 3; do
    # shellcheck disable=SC2086
    TREPRO_THREADS=$threads "$trepro" translate "$scratch/t1" --backend cpu $search \
      --input "$scratch/data/multi30k/test_2016_flickr.de.gz" --output "$scratch/hyp$threads" \
      >/dev/null 2>"$scratch/translate.log" || fail "translate $search at $threads threads: $(cat "$scratch/translate.log")"
  done
  cmp -s "$scratch/hyp1" "$scratch/hyp3" || fail "translate $search differs between 1 and 3 threads"
  echo "ok   decoding ($search): the same hypotheses at 1 and 3 threads"
done
