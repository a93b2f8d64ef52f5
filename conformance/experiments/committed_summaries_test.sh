#!/usr/bin/env bash
# Every committed ablation summary (reports/ablations/*/summary.json) is what this tree's
# `trepro ablate --summarize-only` makes of that folder's committed cells, followed by `trepro
# verdicts` over all the folders (the pooled variance and Holm's adjustment span them), the time it was written
# and the commit aside (numbers within 1e-12 relative: the bootstrap's sums in another build), and
# follows reports/ablation_schema.json. So a change to the statistics, the verdicts or the schema
# cannot leave committed verdicts as older code computed them, and a summary cannot count a cell
# that is not committed. The bootstrap reads Multi30K's test references from the data the
# repository ships (data/multi30k/); without them the test fails, naming what is missing (no skip:
# the data is part of the project).
# usage: committed_summaries_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"
cd "$2"
# The committed files only, the summaries among them: a sweep running in this checkout leaves
# cells git does not hold yet, rewrites the summaries with them and starts folders of its own.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t summaries < <(git ls-files 'reports/ablations/*/summary.json')
  listed() { git ls-files "$1"; }
  committed_copy() { git show ":$1"; }
else
  summaries=(reports/ablations/*/summary.json)
  listed() { find "$1" -type f; }
  committed_copy() { cat "$1"; }
fi
[[ -e ${summaries[0]} ]] || fail "no committed summary under reports/ablations/"
[[ -d $2/data/multi30k ]] ||
  fail "$2/data/multi30k/ is missing: the Multi30K data ships with the repository (data/multi30k/README.md)"
for summary in "${summaries[@]}"; do
  folder=$(dirname "$summary") name=$(basename "$(dirname "$summary")")
  copy=$scratch/sweeps/$name
  files=$(listed "$folder")
  while read -r file; do
    mkdir -p "$copy/$(dirname "${file#"$folder"/}")"
    committed_copy "$file" >"$copy/${file#"$folder"/}"
  done <<<"$files"
  committed=$scratch/$name.summary.json
  mv "$copy/summary.json" "$committed"
  spec=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["spec"])' "$committed")
  "$trepro" ablate "$spec" --out "$copy" --summarize-only >"$scratch/$name.log" 2>&1 ||
    fail "$summary: --summarize-only failed: $(cat "$scratch/$name.log")"
done
"$trepro" verdicts "$scratch/sweeps" >"$scratch/verdicts.log" 2>&1 || fail "trepro verdicts failed: $(cat "$scratch/verdicts.log")"
for summary in "${summaries[@]}"; do
  name=$(basename "$(dirname "$summary")")
  committed=$scratch/$name.summary.json
  "$python" reports/validate_report.py "$committed" || fail "$summary does not follow its schema"
  "$python" - "$committed" "$scratch/sweeps/$name/summary.json" <<'PY' || fail "$summary is not what this tree makes of its cells"
import json, math, sys

def same(a, b, path):
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        if isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                sys.exit(f"{path}: keys {sorted(a.keys() ^ b.keys())} in one only")
            for key in a:
                same(a[key], b[key], f"{path}.{key}")
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                sys.exit(f"{path}: {len(a)} items committed, {len(b)} made now")
            for i, (x, y) in enumerate(zip(a, b)):
                same(x, y, f"{path}[{i}]")
        elif a != b:
            sys.exit(f"{path}: committed {a!r}, made now {b!r}")
    elif not math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12):
        sys.exit(f"{path}: committed {a!r}, made now {b!r}")

committed, now = (json.load(open(p)) for p in sys.argv[1:])
for written in ("created", "git_commit"):
    committed.pop(written), now.pop(written)
same(committed, now, "summary")
PY
done
echo "PASS: ${#summaries[@]} committed summaries are current"
