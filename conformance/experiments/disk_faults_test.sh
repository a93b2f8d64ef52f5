#!/usr/bin/env bash
# Faults of the machine while `trepro train` writes: a full disk (a small tmpfs) while a
# checkpoint is written and while report.json is written, and a read-only checkpoints folder and
# run folder (read-only bind mounts: root ignores permission bits, so chmod proves nothing). Each
# must stop the run with status 1 and a message naming the file and the system's reason, leave
# no temporary file, and leave every file that was there before unchanged.
# The mounts live in a private mount namespace (`unshare --mount`, or `--map-root-user` for an
# unprivileged user), so they vanish with the test. Where neither is allowed the test skips
# (status 77), which CI turns into a failure (conformance/support/skip_fails_in_ci.sh).
# usage: disk_faults_test.sh TREPRO SOURCE_DIR
if [[ -z "${TREPRO_IN_MOUNT_NAMESPACE:-}" ]]; then
  for how in "--mount" "--mount --map-root-user"; do
    # shellcheck disable=SC2086  # $how is two words on purpose
    if unshare $how sh -c 'mount -t tmpfs -o size=4k tmpfs /mnt' 2>/dev/null; then
      TREPRO_IN_MOUNT_NAMESPACE=1 exec unshare $how --propagation private "$0" "$@"
    fi
  done
  echo "SKIP: cannot create a mount namespace here (unshare --mount), so no tmpfs to fill"
  exit 77
fi

trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"
# The mounts go first (the deepest first), or rm meets read-only folders and busy mount points.
unmount_all() { findmnt -rn -o TARGET | grep "^$scratch/" | sort -r | xargs -r -n1 umount; }
trap 'unmount_all; rm -rf "$scratch"' EXIT
config="$2/experiments/configs/copy_tiny.json"

# expect_failure WHAT EXPECTED COMMAND...: COMMAND exits with status 1 saying EXPECTED.
expect_failure() {
  local what=$1 expected=$2 status=0
  shift 2
  "$@" >"$scratch/out" 2>"$scratch/err" || status=$?
  if [[ $status -ne 1 ]] || ! grep -qF -- "$expected" "$scratch/err"; then
    echo "FAIL ($what): $* exited with $status (1 expected) saying:" >&2
    cat "$scratch/err" >&2
    echo "expected a message containing: $expected" >&2
    exit 1
  fi
  echo "ok ($what): $(tail -1 "$scratch/err")"
}

# fingerprint DIR: every file's name and sha256, to show that a failed write changed nothing.
fingerprint() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); }

# no_partial_files DIR: no temporary sibling of an atomic write is left behind.
no_partial_files() {
  local left
  left=$(find "$1" -name '*.tmp.*')
  [[ -z "$left" ]] || { echo "FAIL: partial files left: $left" >&2; exit 1; }
}

# mount_tmpfs DIR BYTES
mount_tmpfs() { mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1"; }

# 1. A full disk while the first checkpoint (about 540 kB) is written: 256 kB hold the config,
#    the log and the history, not the checkpoint.
mount_tmpfs "$scratch/mnt_small" 256k
run="$scratch/mnt_small/run"
expect_failure "full disk, checkpoint" "$run/checkpoints/step_1.safetensors: write of" \
  "$trepro" train "$config" --out "$run" --steps 3 --checkpoint-every 1 --validate-every 1000
grep -qF "No space left on device" "$scratch/err" || { echo "FAIL: no reason given: $(cat "$scratch/err")" >&2; exit 1; }
no_partial_files "$run"
[[ -z "$(ls -A "$run/checkpoints")" ]] || { echo "FAIL: checkpoints left: $(ls "$run/checkpoints")" >&2; exit 1; }
# The folder is left resumable: with room again, --resume starts the run over.
cp -r "$run" "$scratch/roomy"
"$trepro" train --resume --out "$scratch/roomy" --steps 3 >/dev/null || { echo "FAIL: no resume after a full disk" >&2; exit 1; }

# 2. A full disk while report.json is written: a finished run copied onto a tmpfs filled up to
#    one page less than the report needs. Resuming the finished run rewrites history.jsonl
#    (smaller, it fits) and then report.json (it does not). 60 steps: the report's training
#    curve keeps each of the first 100 steps, so it is larger than the history only that far.
finished="$scratch/finished"
"$trepro" train "$config" --out "$finished" --steps 60 --checkpoint-every 60 --validate-every 60 >/dev/null
page=4096
pages() { echo $((($(stat -c %s "$1") + page - 1) / page)); }
report_pages=$(pages "$finished/report.json")
history_pages=$(pages "$finished/history.jsonl")
# one page of room for train.log's new lines
((history_pages + 1 < report_pages)) || { echo "FAIL: setup: the report ($report_pages pages) is not larger than the history ($history_pages) + 1" >&2; exit 1; }
mount_tmpfs "$scratch/mnt_report" 4m
run="$scratch/mnt_report/run"
cp -r "$finished" "$run"
free=$(df --output=avail -B1 "$scratch/mnt_report" | tail -1)
fallocate -l $((free - (report_pages - 1) * page)) "$scratch/mnt_report/filler"
before=$(fingerprint "$run" | grep -v -e history.jsonl -e train.log)
expect_failure "full disk, report" "$run/report.json: write of" "$trepro" train --resume --out "$run"
grep -qF "No space left on device" "$scratch/err" || { echo "FAIL: no reason given: $(cat "$scratch/err")" >&2; exit 1; }
no_partial_files "$run"
[[ "$(fingerprint "$run" | grep -v -e history.jsonl -e train.log)" == "$before" ]] ||
  { echo "FAIL: the failed report write changed the run folder" >&2; exit 1; }

# 3. A read-only checkpoints folder: the run goes on from step 60 and fails at its next
#    checkpoint, which is the best one or the step one (both in checkpoints/), changing nothing.
run="$scratch/readonly_checkpoints"
cp -r "$finished" "$run"
mount --bind "$run/checkpoints" "$run/checkpoints"
mount -o remount,bind,ro "$run/checkpoints"
before=$(fingerprint "$run/checkpoints")
expect_failure "read-only checkpoints" "$run/checkpoints/" \
  "$trepro" train --resume --out "$run" --steps 70 --checkpoint-every 5 --validate-every 5
grep -qF "Read-only file system" "$scratch/err" || { echo "FAIL: no reason given: $(cat "$scratch/err")" >&2; exit 1; }
[[ "$(fingerprint "$run/checkpoints")" == "$before" ]] || { echo "FAIL: checkpoints changed" >&2; exit 1; }
umount "$run/checkpoints"
no_partial_files "$run"

# 4. A read-only run folder: the first file the run writes names itself and the reason.
run="$scratch/readonly_run"
cp -r "$finished" "$run"
mount --bind "$run" "$run"
mount -o remount,bind,ro "$run"
before=$(fingerprint "$run")
expect_failure "read-only run folder" "$run/train.log: cannot open for appending: Read-only file system" \
  "$trepro" train --resume --out "$run" --steps 70
[[ "$(fingerprint "$run")" == "$before" ]] || { echo "FAIL: the read-only run folder changed" >&2; exit 1; }
umount "$run"
echo "PASS"
