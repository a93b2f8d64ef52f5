#!/usr/bin/env bash
# A rank that dies or fails ends the whole job within seconds, naming the rank, never a hang:
# rank 1 killed with SIGKILL mid-run (mpirun notices and ends the others), and rank 1 failing on
# its own (its config missing: MPMD launch) while rank 0 waits in a collective (trepro aborts
# the job). Also the refusal of a rank count that does not divide train.replicas.
# usage: rank_failure_test.sh TREPRO SOURCE_DIR
set -euo pipefail
source "$2/conformance/distributed/mpi_fixture.sh"
deadline=20  # seconds from the failure to the job's end; a hang would run until ctest's timeout

make_copy_config 2
sed -i 's/"max_steps": 6/"max_steps": 100000/; s/"checkpoint_every": 3/"checkpoint_every": 2/' "$scratch/copy_2.json"

# Ends within the deadline with a non-zero status and a message naming rank 1 (the output is
# in $scratch/LOG).
expect_job_end() {
  local pid=$1 log=$2 started=$3 status=0
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS - started > deadline)); then
      echo "FAIL: the job still runs $deadline s after rank 1 failed" >&2
      kill -TERM "$pid"  # mpirun ends its ranks on TERM
      sleep 2
      kill -9 "$pid" 2>/dev/null || true
      exit 1
    fi
    sleep 0.2
  done
  wait "$pid" || status=$?
  ((status != 0)) || { echo "FAIL: the job exited 0 after rank 1 failed" >&2; exit 1; }
  grep -E "rank 1" "$scratch/$log" || { echo "FAIL: no message names rank 1:" >&2; cat "$scratch/$log" >&2; exit 1; }
  echo "ended with status $status after $((SECONDS - started)) s"
}

launch 2 "$trepro" train "$scratch/copy_2.json" --out "$scratch/killed" >"$scratch/killed.log" 2>&1 &
job=$!
until [[ -e "$scratch/killed/checkpoints/step_2.safetensors" ]]; do
  kill -0 "$job" 2>/dev/null || { echo "FAIL: the job ended before the kill" >&2; cat "$scratch/killed.log" >&2; exit 1; }
  sleep 0.1
done
victim=""
for child in $(pgrep -P "$job" || true) $(pgrep -P "$(pgrep -P "$job" | head -1)" 2>/dev/null || true); do
  if tr '\0' '\n' <"/proc/$child/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then victim=$child; fi
done
[[ -n $victim ]] || { echo "FAIL: rank 1's process not found under mpirun $job" >&2; exit 1; }
kill -9 "$victim"
expect_job_end "$job" killed.log "$SECONDS"

started=$SECONDS
mpirun "${mpirun_options[@]}" -np 1 "$trepro" train "$scratch/copy_2.json" --out "$scratch/failed" : \
  -np 1 "$trepro" train "$scratch/missing.json" --out "$scratch/failed" >"$scratch/failed.log" 2>&1 &
expect_job_end $! failed.log "$started"
grep -q "rank 1 of 2: error: .*missing.json" "$scratch/failed.log" || { echo "FAIL: rank 1's error not reported" >&2; exit 1; }

make_copy_config 3
if launch 2 "$trepro" train "$scratch/copy_3.json" --out "$scratch/indivisible" >"$scratch/indivisible.log" 2>&1; then
  echo "FAIL: 2 ranks trained train.replicas 3" >&2
  exit 1
fi
grep -q "train.replicas 3 is not a multiple of the 2 ranks" "$scratch/indivisible.log" || { cat "$scratch/indivisible.log" >&2; exit 1; }
[[ ! -e "$scratch/indivisible/config.json" ]] || { echo "FAIL: the refused run wrote config.json" >&2; exit 1; }
echo "PASS"
