#!/usr/bin/env bash
# scripts/gpu-sweep works before a GPU machine's scarce minutes are spent on it: from a pack laid
# out as scripts/gpu-pack lays it (here the cpu build, TREPRO_BACKEND=cpu, no CUDA MPS), it
# trains two specs' cells side by side into GPU_SWEEP_ROOT, puts exactly the files git keeps of
# each finished cell (report, config and its configs/ copy, log, hypotheses) and the summaries into
# RESULTS/sweep.tar.gz, by the spec's name as reports/ablations/ holds them, and says how many
# cells it finished; --results packs the same alone; a second call skips the finished cells and
# packs them again. --detach and --wait, the two device calls' commands, run on a machine where
# runs/ does not exist (it does not travel), report a sweep still running and one that failed.
# usage: gpu_sweep_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

make_multi30k_fixture
cat >"$scratch/spec.json" <<JSON
{"name": "tiny", "base": "tiny_multi30k.json", "overrides": {"data.epochs": 1},
 "grid": {"model.norm": ["post", "pre"]}, "seeds": [5], "baseline": "norm=post"}
JSON
# tiny2's relu at seed 5 is tiny's norm=post at seed 5 (the base's own norm and activation): one
# of the two specs trains it, the other copies it.
cat >"$scratch/spec2.json" <<JSON
{"name": "tiny2", "base": "tiny_multi30k.json", "overrides": {"data.epochs": 1},
 "variants": [{"name": "relu", "set": {}}], "seeds": [5, 7], "baseline": "relu"}
JSON
pack=$scratch/pack
mkdir -p "$pack/build/experiments" "$pack/lib"
cp "$trepro" "$pack/build/experiments/trepro"
(cd "$2" && pwd) >"$pack/source_dir"
echo "$pack/build" >"$pack/build_dir"

sweep() {
  RESULTS=$scratch/$1 GPU_SWEEP_ROOT=$scratch/root TREPRO_BACKEND=cpu TREPRO_JOBS=2 \
    "$2/scripts/gpu-sweep" "${3:-$pack}" 600 "$scratch/spec.json" "$scratch/spec2.json" >"$scratch/$1.log" 2>&1 ||
    fail "gpu-sweep failed: $(cat "$scratch/$1.log")"
}
# A pack whose trepro predates the options scripts/reproduce passes is refused before any cell.
stale=$scratch/stale
mkdir -p "$stale/build/experiments" "$stale/lib"
printf '#!/bin/sh\necho "Options: --out --jobs"\n' >"$stale/build/experiments/trepro"
chmod +x "$stale/build/experiments/trepro"
cp "$pack/source_dir" "$stale/source_dir"
echo "$stale/build" >"$stale/build_dir"
RESULTS=$scratch/stale_results GPU_SWEEP_ROOT=$scratch/stale_root TREPRO_BACKEND=cpu "$2/scripts/gpu-sweep" "$stale" 600 \
  "$scratch/spec.json" >"$scratch/stale.log" 2>&1 && fail "a stale pack was used"
grep -q "holds a trepro older than this tree" "$scratch/stale.log" || fail "the stale pack is not named: $(cat "$scratch/stale.log")"
[[ ! -e $scratch/stale_root/tiny ]] || fail "a cell started from the stale pack"
sweep first "$2"
# Both specs at once, the slots shared by the cells each has left (2 and 2 of 2 slots).
grep -q "gpu-sweep: $scratch/spec.json with 1 cells at once" "$scratch/first.log" &&
  grep -q "gpu-sweep: $scratch/spec2.json with 1 cells at once" "$scratch/first.log" &&
  grep -q "gpu-sweep: 2 cells at once; 4 cells finished in [0-9]* s, 1 of them copied from a twin (.* trained an hour), 4 finished in all; sweep exit 0" \
    "$scratch/first.log" || fail "the first call's shares or count: $(cat "$scratch/first.log")"
[[ $(cat "$scratch"/root/tiny/norm=post/seed_5/report.json "$scratch"/root/tiny2/relu/seed_5/report.json |
  grep -c '"shared_from"') == 1 ]] || fail "the twin cells were not trained once and copied once"
expected="tiny/configs/norm=post.seed_5.json
tiny/configs/norm=pre.seed_5.json
tiny/norm=post/seed_5/config.json
tiny/norm=post/seed_5/report.json
tiny/norm=post/seed_5/test_2016_flickr.best.hyp.en
tiny/norm=post/seed_5/test_2017_flickr.best.hyp.en
tiny/norm=post/seed_5/test_2017_mscoco.best.hyp.en
tiny/norm=post/seed_5/train.log
tiny/norm=pre/seed_5/config.json
tiny/norm=pre/seed_5/report.json
tiny/norm=pre/seed_5/test_2016_flickr.best.hyp.en
tiny/norm=pre/seed_5/test_2017_flickr.best.hyp.en
tiny/norm=pre/seed_5/test_2017_mscoco.best.hyp.en
tiny/norm=pre/seed_5/train.log
tiny/summary.json
tiny2/configs/relu.seed_5.json
tiny2/configs/relu.seed_7.json
tiny2/relu/seed_5/config.json
tiny2/relu/seed_5/report.json
tiny2/relu/seed_5/test_2016_flickr.best.hyp.en
tiny2/relu/seed_5/test_2017_flickr.best.hyp.en
tiny2/relu/seed_5/test_2017_mscoco.best.hyp.en
tiny2/relu/seed_5/train.log
tiny2/relu/seed_7/config.json
tiny2/relu/seed_7/report.json
tiny2/relu/seed_7/test_2016_flickr.best.hyp.en
tiny2/relu/seed_7/test_2017_flickr.best.hyp.en
tiny2/relu/seed_7/test_2017_mscoco.best.hyp.en
tiny2/relu/seed_7/train.log
tiny2/summary.json"
[[ $(tar -tzf "$scratch/first/sweep.tar.gz" | sort) == "$expected" ]] ||
  fail "sweep.tar.gz holds: $(tar -tzf "$scratch/first/sweep.tar.gz" | sort | tr '\n' ' ')"
[[ -d $scratch/root/tiny/norm=pre/seed_5/checkpoints ]] || fail "no checkpoints where the cells trained"
# --results packs what has finished, as a second device call does while a detached sweep runs.
RESULTS=$scratch/now GPU_SWEEP_ROOT=$scratch/root "$2/scripts/gpu-sweep" --results >"$scratch/now.log" ||
  fail "--results: $(cat "$scratch/now.log")"
grep -q "gpu-sweep: 4 finished cells, 30 files in $scratch/now/sweep.tar.gz" "$scratch/now.log" ||
  fail "--results said: $(cat "$scratch/now.log")"
[[ $(tar -tzf "$scratch/now/sweep.tar.gz" | sort) == "$expected" ]] || fail "--results packed other files"

reports=$(sha256sum "$scratch"/root/tiny*/*/seed_*/report.json)
sweep second "$2"
[[ $(sha256sum "$scratch"/root/tiny*/*/seed_*/report.json) == "$reports" ]] ||
  fail "the second call did not skip the finished cells: $(cat "$scratch/second.log")"
grep -q "gpu-sweep: 2 cells at once; 0 cells finished in [0-9]* s, 0 of them copied from a twin (0 trained an hour), 4 finished in all; sweep exit 0" \
  "$scratch/second.log" ||
  fail "the second call's count: $(tail -1 "$scratch/second.log")"
! grep -q "spec.*with [0-9]* cells at once" "$scratch/second.log" ||
  fail "the second call gave slots to specs with no cell left: $(cat "$scratch/second.log")"
[[ $(tar -tzf "$scratch/second/sweep.tar.gz" | sort) == "$expected" ]] || fail "the second call's tar differs"

# A carried PACK.tar.xz is unpacked beside it once, and again only when it is another file (a warm
# machine keeps the folder of an earlier call).
cp -r "$pack" "$scratch/tarred"
(cd "$scratch" && /usr/bin/python3 -m tarfile -c tarred.tar.xz tarred && rm -r tarred)
sweep unpacked "$2" "$scratch/tarred"
[[ -x $scratch/tarred/build/experiments/trepro && -s $scratch/tarred/.unpacked_from ]] ||
  fail "PACK.tar.xz was not unpacked: $(cat "$scratch/unpacked.log")"
touch "$scratch/tarred/kept"
sweep same_tar "$2" "$scratch/tarred"
[[ -e $scratch/tarred/kept ]] || fail "the same PACK.tar.xz was unpacked again"
touch -d '+1 minute' "$scratch/tarred.tar.xz"  # the same content, as a carried copy has
sweep touched_tar "$2" "$scratch/tarred"
[[ -e $scratch/tarred/kept ]] || fail "the same PACK.tar.xz with another mtime was unpacked again"
# Another pack: its content differs.
mkdir -p "$scratch/tarred2"
cp -r "$pack" "$scratch/tarred2/tarred"
echo other >"$scratch/tarred2/tarred/note"
(cd "$scratch/tarred2" && /usr/bin/python3 -m tarfile -c ../tarred.tar.xz tarred)
sweep new_tar "$2" "$scratch/tarred"
[[ ! -e $scratch/tarred/kept && -e $scratch/tarred/note && -x $scratch/tarred/build/experiments/trepro ]] ||
  fail "a new PACK.tar.xz was not unpacked over the old folder"
[[ -z $(find "$scratch" -maxdepth 1 -name '.unpacking.*') ]] || fail "a temporary unpacking folder was left"
# --detach and --wait, as the device calls run them: the sweep root (runs/gpu-sweep by default,
# git-ignored, so absent on a fresh machine) is made by the script, not by the caller's
# redirection. A pack whose trepro waits for a file the test makes stands for cells that outlast
# the first call (an event, not a clock: a loaded machine cannot make it end early).
slow=$scratch/slow release=$scratch/release_the_cells
mkdir -p "$slow/build/experiments" "$slow/lib"
printf '#!/bin/sh\n[ "$1 $2" = "ablate --help" ] && { echo "Options: --share-cells"; exit 0; }\nwhile [ ! -e %s ]; do sleep 0.1; done\n' \
  "$release" >"$slow/build/experiments/trepro"
chmod +x "$slow/build/experiments/trepro"
cp "$pack/source_dir" "$slow/source_dir"
echo "$slow/build" >"$slow/build_dir"
fresh=$scratch/fresh_machine/runs/gpu-sweep
in_fresh() { GPU_SWEEP_ROOT=$fresh TREPRO_BACKEND=cpu TREPRO_JOBS=1 RESULTS=$scratch/$1 "$2/scripts/gpu-sweep" "${@:3}"; }
in_fresh out_none "$2" --wait 5 >"$scratch/wait_none.log" 2>&1 && fail "--wait with no sweep started succeeded"
grep -q "no sweep started under $fresh" "$scratch/wait_none.log" || fail "--wait with no sweep: $(cat "$scratch/wait_none.log")"
in_fresh unused "$2" --detach "$slow" 600 "$scratch/spec.json" >"$scratch/detach.log" 2>&1 ||
  fail "--detach on a fresh machine: $(cat "$scratch/detach.log")"
grep -q "gpu-sweep: detached (pid [0-9]*), log $fresh/sweep.log" "$scratch/detach.log" || fail "--detach said: $(cat "$scratch/detach.log")"
in_fresh unused "$2" --detach "$slow" 600 "$scratch/spec.json" >"$scratch/detach_again.log" 2>&1 &&
  fail "a second --detach started beside a running sweep"
grep -q "a sweep runs already" "$scratch/detach_again.log" || fail "the second --detach said: $(cat "$scratch/detach_again.log")"
in_fresh out_early "$2" --wait 0 >"$scratch/wait_early.log" 2>&1 || fail "--wait 0: $(cat "$scratch/wait_early.log")"
grep -q "gpu-sweep: the sweep runs on (pid [0-9]*); 0 finished cells so far" "$scratch/wait_early.log" &&
  [[ -e $scratch/out_early/gpu-sweep.log && -e $scratch/out_early/sweep.tar.gz ]] ||
  fail "--wait while the sweep runs: $(cat "$scratch/wait_early.log")"
touch "$release"
in_fresh out_end "$2" --wait 600 >"$scratch/wait_end.log" 2>&1 || fail "--wait to the end: $(cat "$scratch/wait_end.log")"
grep -q "gpu-sweep: the sweep ended, exit 0" "$scratch/wait_end.log" &&
  grep -q "gpu-sweep: [0-9]* cells at once; 0 cells finished" "$scratch/out_end/gpu-sweep.log" ||
  fail "--wait to the end said: $(cat "$scratch/wait_end.log")"
# A sweep that fails (here the stale pack) fails the --wait that finds it ended, with its log.
in_fresh unused "$2" --detach "$stale" 600 "$scratch/spec.json" >"$scratch/detach_stale.log" 2>&1 ||
  fail "--detach of the stale pack: $(cat "$scratch/detach_stale.log")"
in_fresh out_stale "$2" --wait 600 >"$scratch/wait_stale.log" 2>&1 && fail "--wait passed over a failed sweep"
grep -q "the sweep ended, exit 2" "$scratch/wait_stale.log" &&
  grep -q "holds a trepro older than this tree" "$scratch/out_stale/gpu-sweep.log" ||
  fail "--wait after a failed sweep: $(cat "$scratch/wait_stale.log")"
echo "PASS"
