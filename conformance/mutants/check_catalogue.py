#!/usr/bin/python3
"""ctest mutants_catalogue: the mutant catalogue is well-formed and every mutant's patch still
applies to the source tree, so a refactor that breaks a mutant fails CI. Builds nothing.

  check_catalogue.py SOURCE_DIR

Checks: the catalogue validates (catalogue.py), at least 60 mutants spread over every area, one
patch per mutant and no stray patch, the targets are executables of the build, each patch touches only shipped code (never conformance/ or
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


def executables(source):
    """Names given to add_executable in the project's CMakeLists.txt files."""
    names = set()
    for root, dirs, files in os.walk(source):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        if "CMakeLists.txt" in files:
            with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
                names.update(re.findall(r"add_executable\(\s*([A-Za-z0-9_]+)", f.read()))
    return names


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
    known_targets = executables(source)
    for m in mutants:
        unknown = sorted(set(m["targets"]) - known_targets)
        check(not unknown, f"{m['name']}: its targets are executables of the build (unknown: {unknown})")
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
