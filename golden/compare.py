#!/usr/bin/python3
"""Compares freshly generated goldens (a folder written by generate.py --out) with the committed
ones: the same cases and files, JSON and integer tensors identical, floating tensors within the
manifest tolerance of the golden's own dtype (PyTorch's summation order may differ between
machines, so bits need not match). Also checks every committed file against its sha256.

    /usr/bin/python3 golden/compare.py FRESH_DIR      (golden/check does the whole thing)
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import case, safetensors, tolerance  # noqa: E402

GOLDEN_DIR = os.path.dirname(os.path.abspath(__file__))


def load_manifest(folder):
    with open(os.path.join(folder, "MANIFEST.json")) as f:
        return {(c["name"], c["dtype"]): c for c in json.load(f)["cases"]}


def without_hashes(entry):
    return dict(entry, files={role: f["path"] for role, f in entry["files"].items()})


def compare_tensors(committed, fresh, tol, absolute):
    """Returns (worst error / allowed, problem or None); `absolute` maps names to an absolute atol."""
    if committed.keys() != fresh.keys():
        return float("inf"), f"tensor names differ: {sorted(committed.keys() ^ fresh.keys())}"
    worst = 0.0
    for name, expected in committed.items():
        actual = fresh[name]
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            return float("inf"), f"{name}: {actual.dtype}{list(actual.shape)}, committed {expected.dtype}{list(expected.shape)}"
        if expected.dtype.kind == "i":
            if not np.array_equal(expected, actual):
                return float("inf"), f"{name}: integers differ"
            continue
        e, a = expected.astype(np.float64), actual.astype(np.float64)
        if name in absolute:
            allowed = np.full(e.shape, absolute[name])
        else:
            scale = np.abs(committed[tolerance.scale_tensor_name(name, committed)]).max(initial=0.0)
            allowed = tol["atol"] * scale + tol["rtol"] * np.abs(e)
        ratio = np.abs(a - e) / np.maximum(allowed, np.finfo(np.float64).tiny)
        worst = max(worst, float(ratio.max(initial=0.0)))
        if worst > 1.0:
            return worst, f"{name}: worst element {int(ratio.argmax())} off by {worst:.3g} x the tolerance"
    return worst, None


def compare_case(key, committed, fresh, fresh_dir):
    if without_hashes(committed) != without_hashes(fresh):
        return float("inf"), "manifest entry differs (checks, params, tolerance or files)"
    worst = 0.0
    tol = committed["tolerance"][committed["dtype"]]
    params = committed["params"]
    # Training: weights whose gradient is only rounding noise (see gen/training.py).
    absolute = {f"final.{n}": params["zero_gradient_atol"][committed["dtype"]]
                for n in params.get("zero_gradient_parameters", [])}
    for role, entry in committed["files"].items():
        committed_path = os.path.join(GOLDEN_DIR, "data", entry["path"])
        fresh_path = os.path.join(fresh_dir, "data", entry["path"])
        if case.sha256_file(committed_path) != entry["sha256"]:
            return float("inf"), f"{entry['path']}: sha256 differs from MANIFEST.json (edited by hand?)"
        if entry["path"].endswith(".json"):
            with open(committed_path) as a, open(fresh_path) as b:
                if json.load(a) != json.load(b):
                    return float("inf"), f"{entry['path']}: differs"
            continue
        ratio, problem = compare_tensors(safetensors.read(committed_path), safetensors.read(fresh_path), tol, absolute)
        worst = max(worst, ratio)
        if problem:
            return worst, f"{entry['path']}: {problem}"
    return worst, None


def main():
    fresh_dir = sys.argv[1]
    committed, fresh = load_manifest(GOLDEN_DIR), load_manifest(fresh_dir)
    failures = 0
    if committed.keys() != fresh.keys():
        print(f"FAIL: the generator's cases differ from the committed ones: {sorted(committed.keys() ^ fresh.keys())}")
        failures += 1
    for key in sorted(committed.keys() & fresh.keys()):
        worst, problem = compare_case(key, committed[key], fresh[key], fresh_dir)
        print(f"{'FAIL' if problem else 'ok  '} {key[0]} {key[1]}: worst {worst:.3g} of tolerance"
              + (f": {problem}" if problem else ""))
        failures += problem is not None
    print(f"{len(committed)} committed cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
