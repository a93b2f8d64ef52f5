#!/usr/bin/env bash
# N ranks train the same bits as one: mpirun -np 2 and -np 4 (oversubscribed) against -np 1 on
# the copy task, and -np 2 against -np 1 on a tiny Multi30K-shaped corpus, with dropout on; the
# checkpoints (weights, Adam moments, step, data position) are compared byte for byte. --resume
# with another N continues to the same bits, and rank 0 alone writes (world_size in the report).
# Each rank builds only the batches it runs (batches_read_per_rank in the report).
# usage: bit_identity_test.sh TREPRO SOURCE_DIR
set -euo pipefail
source "$2/conformance/distributed/mpi_fixture.sh"

make_copy_config 4
for ranks in 1 2 4; do
  launch "$ranks" "$trepro" train "$scratch/copy_4.json" --out "$scratch/copy_np$ranks" >/dev/null
done
same_checkpoints "$scratch/copy_np1" "$scratch/copy_np2"
same_checkpoints "$scratch/copy_np1" "$scratch/copy_np4"
world=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["world_size"])' "$scratch/copy_np4/report.json")
[[ $world == 4 ]] || { echo "FAIL: report.json world_size $world, expected 4" >&2; exit 1; }

# Each rank built only its shards' batches: the ranks' counts are disjoint shares of one rank's.
shared_reading() {  # ONE_RANK_RUN N_RANK_RUN
  "$python" - "$1/report.json" "$2/report.json" <<'PY'
import json, sys
alone, shared = (json.load(open(p))["batches_read_per_rank"] for p in sys.argv[1:])
ok = len(alone) == 1 and sum(shared) == alone[0] and all(0 < n < alone[0] for n in shared)
print(("" if ok else "FAIL: ") + f"batches read per rank: {shared}, one rank alone: {alone}")
sys.exit(0 if ok else 1)
PY
}
shared_reading "$scratch/copy_np1" "$scratch/copy_np4"

# Half the run on 1 rank, the rest on 2 (the step-3 checkpoints differ in the config hash of
# --steps 3, as any resumed run's do).
launch 1 "$trepro" train "$scratch/copy_4.json" --out "$scratch/copy_switch" --steps 3 >/dev/null
launch 2 "$trepro" train --resume --out "$scratch/copy_switch" --steps 6 >/dev/null
same_checkpoints "$scratch/copy_np1" "$scratch/copy_switch" step_6.safetensors

make_multi30k_fixture  # update_freq 2
sed -i 's/"update_freq": 2,/"update_freq": 2, "replicas": 2,/; s/"epochs": 3/"epochs": 1/' "$scratch/tiny_multi30k.json"
for ranks in 1 2; do
  launch "$ranks" "$trepro" train "$scratch/tiny_multi30k.json" --out "$scratch/m30k_np$ranks" >/dev/null
done
same_checkpoints "$scratch/m30k_np1" "$scratch/m30k_np2"
shared_reading "$scratch/m30k_np1" "$scratch/m30k_np2"
"$python" "$2/reports/validate_report.py" "$scratch/m30k_np2/report.json"
echo "PASS"
