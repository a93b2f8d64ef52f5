#!/usr/bin/python3
"""ctest mutants_catalogue: the mutant catalogue is well-formed and every mutant's patch still
applies to the source tree, so a refactor that breaks a mutant fails CI. Builds nothing.

  check_catalogue.py SOURCE_DIR

Checks: the catalogue validates (catalogue.py), at least 20 mutants spread over every area, one
patch per mutant and no stray patch, each patch touches only shipped code (never conformance/ or
golden/: a mutant must be found by the suite, not by editing it), applies cleanly
(`git apply --check`) and is not applied already (its reverse does not apply: the tree is the
shipped code).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalogue  # noqa: E402

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def touched_files(patch_text):
    return re.findall(r"^\+\+\+ b/(\S+)", patch_text, flags=re.M)


def git_apply_check(source, patch, reverse=False):
    command = ["git", "apply", "--check"] + (["--reverse"] if reverse else []) + [patch]
    return subprocess.run(command, cwd=source, capture_output=True, text=True)


def main(argv):
    if len(argv) != 1:
        print("usage: check_catalogue.py SOURCE_DIR", file=sys.stderr)
        return 2
    source = os.path.abspath(argv[0])
    path = os.path.join(source, "conformance", "mutants", "catalogue.json")
    try:
        data = catalogue.load(path)
        catalogue.check_patch_files(path, data)
    except catalogue.CatalogueError as e:
        print(f"FAIL {e}")
        return 1
    mutants = data["mutants"]
    check(len(mutants) >= catalogue.MINIMUM_MUTANTS,
          f"{len(mutants)} mutants, at least {catalogue.MINIMUM_MUTANTS}")
    areas = {m["area"] for m in mutants}
    check(areas == set(catalogue.AREAS), f"every area has a mutant (missing: {sorted(set(catalogue.AREAS) - areas)})")
    for m in mutants:
        patch = catalogue.patch_path(path, m["name"])
        with open(patch, encoding="utf-8") as f:
            files = touched_files(f.read())
        check(bool(files), f"{m['name']}: the patch changes a file")
        for name in files:
            check(not name.startswith(("conformance/", "golden/")) and os.path.isfile(os.path.join(source, name)),
                  f"{m['name']}: patches shipped code ({name})")
        applies = git_apply_check(source, patch)
        check(applies.returncode == 0, f"{m['name']}: applies cleanly {applies.stderr.strip()}")
        check(git_apply_check(source, patch, reverse=True).returncode != 0,
              f"{m['name']}: not applied to the tree already")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
