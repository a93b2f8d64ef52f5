#!/usr/bin/env bash
# A rank that dies, fails or hangs ends the whole job within seconds, never a hang: rank 1
# killed with SIGKILL mid-run (mpirun notices, names it and ends the others); rank 1 failing on
# its own (its config missing: MPMD launch) while rank 0 waits in a collective (trepro aborts
# the job, naming rank 1); rank 1 stopped with SIGSTOP (rank 0's collective times out after
# $TREPRO_COLLECTIVE_TIMEOUT_S and aborts the job). Also the refusal of a rank count that does
# not divide train.replicas, and a setup (vocabulary, corpus encoding) longer than the deadline,
# which must not end the job.
# usage: rank_failure_test.sh TREPRO SOURCE_DIR
set -euo pipefail
source "$2/conformance/distributed/mpi_fixture.sh"
deadline=20  # seconds from the failure to the job's end; a hang would run until ctest's timeout

make_copy_config 2
sed -i 's/"max_steps": 6/"max_steps": 100000/; s/"checkpoint_every": 3/"checkpoint_every": 2/' "$scratch/copy_2.json"

# Ends within the deadline with a non-zero status and a message matching PATTERN (the output is
# in $scratch/LOG).
expect_job_end() {
  local pid=$1 log=$2 started=$3 pattern=$4 status=0
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
  grep -E "$pattern" "$scratch/$log" || { echo "FAIL: no message matches '$pattern':" >&2; cat "$scratch/$log" >&2; exit 1; }
  echo "ended with status $status after $((SECONDS - started)) s"
}

# Starts a 2-rank run into $scratch/NAME (output in NAME.log) and, once it has written its
# first checkpoint, sends SIGNAL to rank 1's process; sets $job and $victim.
signal_rank_1() {
  local name=$1 signal=$2 child
  shift 2
  mpirun "${mpirun_options[@]}" "$@" -np 2 "$trepro" train "$scratch/copy_2.json" --out "$scratch/$name" \
    >"$scratch/$name.log" 2>&1 &
  job=$!
  until [[ -e "$scratch/$name/checkpoints/step_2.safetensors" ]]; do
    kill -0 "$job" 2>/dev/null || { echo "FAIL: the job ended early" >&2; cat "$scratch/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  victim=""
  for child in $(pgrep -P "$job" || true); do
    if tr '\0' '\n' <"/proc/$child/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then victim=$child; fi
  done
  [[ -n $victim ]] || { echo "FAIL: rank 1's process not found under mpirun $job" >&2; exit 1; }
  kill "-$signal" "$victim"
}

signal_rank_1 killed KILL
expect_job_end "$job" killed.log "$SECONDS" "rank 1"

signal_rank_1 stopped STOP -x TREPRO_COLLECTIVE_TIMEOUT_S=3
expect_job_end "$job" stopped.log "$SECONDS" "waited more than 3.* one of them hangs"
kill -9 "$victim" 2>/dev/null || true  # mpirun's SIGTERM does not reach a stopped process

started=$SECONDS
mpirun "${mpirun_options[@]}" -np 1 "$trepro" train "$scratch/copy_2.json" --out "$scratch/failed" : \
  -np 1 "$trepro" train "$scratch/missing.json" --out "$scratch/failed" >"$scratch/failed.log" 2>&1 &
expect_job_end $! failed.log "$started" "rank 1 of 2: error: .*missing.json"

make_copy_config 3
if launch 2 "$trepro" train "$scratch/copy_3.json" --out "$scratch/indivisible" >"$scratch/indivisible.log" 2>&1; then
  echo "FAIL: 2 ranks trained train.replicas 3" >&2
  exit 1
fi
grep -q "train.replicas 3 is not a multiple of the 2 ranks" "$scratch/indivisible.log" || { cat "$scratch/indivisible.log" >&2; exit 1; }
[[ ! -e "$scratch/indivisible/config.json" ]] || { echo "FAIL: the refused run wrote config.json" >&2; exit 1; }
# A setup longer than the deadline is no hang: rank 0 trains the vocabulary and encodes N pairs
# (150,000: ~5 s on a 2-core machine), then the other rank encodes them, each waiting for the
# other without the 2 s collective deadline that training's collectives keep. A machine that sets
# up in less than the deadline would test nothing: N doubles until the setup outlasts it by 2 s
# (what is timed includes mpirun's start-up, which rank 1 does not wait through).
make_multi30k_fixture
sed -i 's/"update_freq": 2,/"update_freq": 2, "replicas": 2,/; s/"max_steps": 1000/"max_steps": 2/' "$scratch/tiny_multi30k.json"
slow_setup() {
  local pairs=$1 started job
  "$python" - "$scratch/data/multi30k" "$pairs" <<'PY'
import gzip, sys
with gzip.open(f"{sys.argv[1]}/train.de.gz", "wt") as de, gzip.open(f"{sys.argv[1]}/train.en.gz", "wt") as en:
    for i in range(int(sys.argv[2])):
        de.write(f"ein hund nummer {i} läuft {i % 7} mal\n")
        en.write(f"a dog number {i} runs {i % 7} times\n")
PY
  rm -rf "$scratch/slow_setup"
  started=$(date +%s.%N)
  launch 2 -x TREPRO_COLLECTIVE_TIMEOUT_S=2 "$trepro" train "$scratch/tiny_multi30k.json" --out "$scratch/slow_setup" \
    >"$scratch/slow_setup.log" 2>&1 &
  job=$!
  # Rank 0 writes config.json when its own setup is done; rank 1 waited that long at the barrier.
  until [[ -e "$scratch/slow_setup/config.json" ]] || ! kill -0 "$job" 2>/dev/null; do sleep 0.05; done
  rank_0_setup=$("$python" -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$started")
  wait "$job" || { echo "FAIL: a setup longer than the deadline ended the job" >&2; cat "$scratch/slow_setup.log" >&2; exit 1; }
  grep -q '"status": "finished"' "$scratch/slow_setup/report.json" || { echo "FAIL: no finished report" >&2; exit 1; }
}
pairs=150000
slow_setup "$pairs"
while ! "$python" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 4 else 1)" "$rank_0_setup"; do
  ((pairs < 1200000)) ||
    { echo "FAIL: rank 0's setup of $pairs pairs took $rank_0_setup s, not 2 s past the 2 s deadline" >&2; exit 1; }
  echo "rank 0's setup of $pairs pairs took $rank_0_setup s, not 2 s past the deadline: again with twice the pairs"
  pairs=$((2 * pairs))
  slow_setup "$pairs"
done
echo "rank 1 waited ${rank_0_setup} s for rank 0's setup of $pairs pairs, past the 2 s collective deadline, and the job finished"
echo "PASS"
