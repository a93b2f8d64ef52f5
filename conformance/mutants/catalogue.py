"""The mutant catalogue (conformance/mutants/catalogue.json): loading and validation, shared by
conformance/mutation-score and the ctest that keeps the catalogue and its patches in step with
the code (check_catalogue.py).

A catalogue is {"description", "exclude", "mutants": [...]}; each mutant has
  name      the patch is <name>.patch next to the catalogue (lower case, digits, _)
  area      reference | cpu | model | loss | schedule | optimizer | decoding | bleu | resume | interop
  bug       the bug in one line
  seen_in   where the bug is met in the wild (paper, tutorial, well-known code)
  labels    ctest -L regex: the labels worth running for it
  regex     ctest -R regex: the tests worth running for it
  targets   the build targets (test executables) those tests live in: built before ctest knows
            their tests, since gtest discovery runs when an executable is linked
"exclude" (ctest -E) names the slow end-to-end tests that no mutant runs.
"""
import json
import os
import re

AREAS = ("reference", "cpu", "model", "loss", "schedule", "optimizer", "decoding", "bleu", "resume", "interop")
TEXT_FIELDS = ("name", "area", "bug", "seen_in", "labels", "regex")
FIELDS = TEXT_FIELDS + ("targets",)
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
MINIMUM_MUTANTS = 60


class CatalogueError(Exception):
    """A catalogue that cannot be used: the message names the file and the entry."""


def _check_regex(path, where, value):
    try:
        re.compile(value)
    except re.error as e:
        raise CatalogueError(f"{path}: {where}: not a regular expression: {e}") from e


def load(path):
    """The catalogue at `path`, validated; raises CatalogueError naming what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise CatalogueError(f"{path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise CatalogueError(f"{path}: not JSON: {e.msg} at line {e.lineno}") from e
    if not isinstance(data, dict) or not isinstance(data.get("mutants"), list):
        raise CatalogueError(f"{path}: expected an object with a \"mutants\" list")
    if not isinstance(data.get("exclude", ""), str):
        raise CatalogueError(f"{path}: exclude: expected a string (a ctest -E regex)")
    _check_regex(path, "exclude", data.get("exclude", ""))
    seen = set()
    for i, m in enumerate(data["mutants"]):
        where = f"mutants[{i}]"
        if not isinstance(m, dict):
            raise CatalogueError(f"{path}: {where}: expected an object")
        for field in TEXT_FIELDS:
            if not isinstance(m.get(field), str) or not m[field].strip():
                raise CatalogueError(f"{path}: {where}: \"{field}\" must be a non-empty string")
        targets = m.get("targets")
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) and NAME.match(t) for t in targets):
            raise CatalogueError(f"{path}: {where} ({m['name']}): \"targets\" must be a non-empty list of target names")
        unknown = sorted(set(m) - set(FIELDS))
        if unknown:
            raise CatalogueError(f"{path}: {where} ({m['name']}): unknown keys {unknown}")
        if not NAME.match(m["name"]):
            raise CatalogueError(f"{path}: {where}: name {m['name']!r} must match {NAME.pattern}")
        if m["name"] in seen:
            raise CatalogueError(f"{path}: {where}: name {m['name']!r} appears twice")
        seen.add(m["name"])
        if m["area"] not in AREAS:
            raise CatalogueError(f"{path}: {where} ({m['name']}): area {m['area']!r} is not one of {', '.join(AREAS)}")
        _check_regex(path, f"{where} ({m['name']}).labels", m["labels"])
        _check_regex(path, f"{where} ({m['name']}).regex", m["regex"])
    return data


def patch_path(catalogue_path, name):
    return os.path.join(os.path.dirname(os.path.abspath(catalogue_path)), name + ".patch")


def check_patch_files(catalogue_path, data):
    """Every mutant has its patch and every patch its mutant; raises CatalogueError otherwise."""
    folder = os.path.dirname(os.path.abspath(catalogue_path))
    names = {m["name"] for m in data["mutants"]}
    missing = sorted(n for n in names if not os.path.isfile(patch_path(catalogue_path, n)))
    if missing:
        raise CatalogueError(f"{catalogue_path}: no patch file for {', '.join(missing)}")
    strays = sorted(f for f in os.listdir(folder) if f.endswith(".patch") and f[:-len(".patch")] not in names)
    if strays:
        raise CatalogueError(f"{catalogue_path}: patches not in the catalogue: {', '.join(strays)}")
