#!/usr/bin/env bash
# The installed package (cmake/install.cmake), as an outside project meets it: install this build
# into a scratch prefix, build examples/out_of_tree_backend against that prefix (no include or
# library path into this source or build tree), and run the package's op test bodies on its
# backend: activation and swiglu forward pass, everything else is "not provided", nothing fails.
# usage: installed_package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$scratch/prefix" >"$scratch/install.log" || fail "install: $(tail -5 "$scratch/install.log")"
cmake -S "$source/examples/out_of_tree_backend" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$scratch/configure.log" || fail "configure: $(tail -20 "$scratch/configure.log")"
cmake --build "$scratch/build" >"$scratch/build.log" || fail "build: $(tail -20 "$scratch/build.log")"

# Against the prefix only: no -I or library path into the tree (the example's own sources aside).
if grep -oE -- '-(I|isystem) ?[^ "]+' "$scratch/build/compile_commands.json" | grep -qF -e "$source" -e "$build"; then
  fail "the example compiles with a path into the tree: $(grep -oE -- '-(I|isystem) ?[^ "]+' "$scratch/build/compile_commands.json" | grep -F -e "$source" -e "$build" | head -3)"
fi
if grep -F -e "$build/" "$scratch/build/build.ninja" | grep -q "LINK_LIBRARIES"; then fail "the example links a library of the build tree"; fi

ctest --test-dir "$scratch/build" --output-on-failure >"$scratch/ctest.log" || fail "the example's conformance run: $(tail -30 "$scratch/ctest.log")"
/usr/bin/python3 - "$scratch/build/conformance.json" <<'PY' || fail "the example's results"
import json, sys
report = json.load(open(sys.argv[1]))
tests = [t for s in report["testsuites"] for t in s["testsuite"]]
passed = [t for t in tests if t["result"] == "COMPLETED" and not t.get("failures")]
skipped = [t for t in tests if t["result"] == "SKIPPED"]
failed = [t for t in tests if t.get("failures")]
own = {"activation forward", "swiglu forward"}
called = set().union(*(set(filter(None, t.get("ops", "").split(","))) for t in passed))
problems = [f"{t['classname']}.{t['name']} failed" for t in failed]
problems += [f"passing tests called {sorted(called - own)}, which the example does not provide"] if called - own else []
problems += [f"no passing test of {op}" for op in sorted(own - called)]
problems += [f"{t['classname']}.{t['name']} skipped, not as not provided" for t in skipped if not t.get("not_provided")]
print(f"out-of-tree-f32: {len(passed)} pass, {len(failed)} fail, {len(skipped)} not provided")
if problems:
    sys.exit("\n".join(problems))
PY
