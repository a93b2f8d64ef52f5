#!/usr/bin/env bash
# What a new user meets first (issue "First contact"): every command's --help says what it does
# with an example; a typo of a command or an option gets the nearest name; --version; `backends`
# marks the default; `info` leads with the count beside the paper's; an unavailable backend says
# why; a trial `train` says what it does and for how many threads its pace is; and failures name
# their cause (a failed train in its log too) and leave nothing behind (a prepare's .lock).
# usage: first_contact_test.sh TREPRO SOURCE_DIR
trepro=$1
source "$2/conformance/experiments/cli_fixture.sh"

# Exits non-zero, with `expected` in its stderr.
expect_failure() {
  local expected=$1
  shift
  if "$@" >"$scratch/out" 2>"$scratch/err"; then fail "$* succeeded"; fi
  grep -qF -- "$expected" "$scratch/err" || fail "$* said: $(cat "$scratch/err") (expected: $expected)"
}

# Every command: what it does and an example.
commands=$("$trepro" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}')
[[ $(wc -w <<<"$commands") -ge 14 ]] || fail "trepro --help lists too few commands: $commands"
for command in $commands; do
  "$trepro" "$command" --help >"$scratch/help" || fail "$command --help failed"
  grep -q "^Example:" "$scratch/help" && grep -q "^  .*trepro $command" "$scratch/help" ||
    fail "$command --help has no example: $(cat "$scratch/help")"
  example=$(grep -A1 "^Example:" "$scratch/help" | tail -1 | sed 's/^  //')
  grep -qxF -- "$example" "$2/docs/cli.md" || fail "docs/cli.md does not list $command's example: $example"
done
if grep -q "ENUM:" <("$trepro" translate --help); then fail "translate --help shows CLI11's ENUM mapping"; fi

# Typos get the nearest name; --version names the build.
expect_failure 'unknown command "trian"; did you mean "train"?' "$trepro" trian
expect_failure "unknown option --step; did you mean --steps?" "$trepro" train x.json --out "$scratch/r" --step 2
version=$("$trepro" --version)
[[ $version == "trepro "* ]] || fail "--version: $version"

# backends marks the one default; info leads with the count beside the paper's.
"$python" - "$("$trepro" backends 2>/dev/null)" <<'PY' || fail "backends does not mark one default"
import json, sys
backends = json.loads(sys.argv[1])
assert sum(b["default"] for b in backends) == 1, backends
PY
"$trepro" info "$2/experiments/configs/paper_base.json" >"$scratch/info.json"
"$python" - "$scratch/info.json" <<'PY' || fail "info: $(head -c 400 "$scratch/info.json")"
import json, sys
info = json.load(open(sys.argv[1]))
assert list(info)[:3] == ["parameters", "parameters_millions", "paper"], list(info)
assert info["paper"]["model"] == "base" and 0.9 < info["paper"]["ratio"] < 1.1, info["paper"]
assert "tensors" not in info, "the breakdown is printed unasked"
PY
"$trepro" info "$2/experiments/configs/paper_base.json" --breakdown >"$scratch/breakdown.json"
grep -q '"tensors"' "$scratch/breakdown.json" || fail "info --breakdown has no tensors"
if [[ $("$trepro" backends 2>/dev/null) != *'"cuda"'* ]]; then
  expect_failure 'backend "cuda" is not available: ' "$trepro" compare-kernels --backend cuda --out "$scratch/k.json"
fi

# A trial run says what it trains on and for how many threads its pace is.
make_multi30k_fixture
"$trepro" train "$scratch/tiny_multi30k.json" --out "$scratch/trial" --steps 2 >"$scratch/trial.log" || fail "trial train"
grep -q "parameters on .* threads)" "$scratch/trial.log" || fail "the trial does not say what it trains on"
grep -q "data: encoding the training, validation and test splits" "$scratch/trial.log" || fail "encoding is silent"
grep -q "^pace: .* here (.*, [0-9]* threads)$" "$scratch/trial.log" || fail "the pace does not name its threads"

# Failures name their cause: the log of a failed train says why; a prepare leaves no lock.
sed "s|$scratch/data|$scratch/no_data|" "$scratch/tiny_multi30k.json" >"$scratch/no_data.json"
expect_failure "data folder not found" "$trepro" train "$scratch/no_data.json" --out "$scratch/failed"
grep -q "^train: stopped: data folder not found" "$scratch/failed/train.log" ||
  fail "a failed train's log does not say why it stopped: $(cat "$scratch/failed/train.log" 2>&1)"
expect_failure "data folder not found" "$trepro" prepare "$scratch/no_data.json" --out "$scratch/prepared"
[[ ! -e "$scratch/prepared.lock" ]] || fail "a failed prepare left its lock"
"$trepro" prepare "$scratch/tiny_multi30k.json" --out "$scratch/prepared" >/dev/null || fail "prepare"
[[ ! -e "$scratch/prepared.lock" ]] || fail "prepare left its lock"
expect_failure "cannot open: No such file or directory" "$trepro" bleu "$scratch/missing.txt" "$scratch/missing.txt"
expect_failure "missing.txt: cannot open: No such file or directory" \
  "$trepro" translate "$scratch/trial" --input "$scratch/missing.txt"
"$trepro" train "$2/experiments/configs/copy_tiny.json" --out "$scratch/copy" --steps 1 >/dev/null || fail "copy train"
expect_failure "which has no vocabulary to translate with" "$trepro" translate "$scratch/copy" --input /dev/null

# A spec copied to another folder says where it looked for its base.
mkdir -p "$scratch/elsewhere"
cp "$2/experiments/specs/table3_heads.json" "$scratch/elsewhere/"
expect_failure "is resolved against the spec's own folder" \
  "$trepro" ablate "$scratch/elsewhere/table3_heads.json" --out "$scratch/sweep" --summarize-only
echo "PASS"
