#!/usr/bin/python3
"""Regenerates golden/data/ and golden/MANIFEST.json with PyTorch.

Needs Debian's python3-torch, which only the system interpreter sees (the `python3` first on
PATH may be another one):
    /usr/bin/python3 golden/generate.py [--out DIR]
"""
import argparse
import json
import os
import platform
import shutil
import sys

import numpy
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import case, layers, model_cases, ops, tolerance, training, values  # noqa: E402

GOLDEN_DIR = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=GOLDEN_DIR, help="folder for data/ and MANIFEST.json (default: golden/)")
    out = parser.parse_args().out
    # One thread: one summation order, so a regeneration reproduces the committed bits on most
    # machines (golden/check still compares within tolerance, not bitwise).
    torch.set_num_threads(1)
    shutil.rmtree(os.path.join(out, "data"), ignore_errors=True)
    entries = []
    for module in (ops, layers, model_cases, training):
        for c in module.cases():
            entries.append(case.write_case(c, os.path.join(out, "data")))
            print(f"{c.kind:8} {c.name} {c.dtype}", flush=True)
    manifest = {
        "regenerate": "/usr/bin/python3 golden/generate.py",
        "check": "golden/check",
        "torch_version": torch.__version__,
        "numpy_version": numpy.__version__,
        "python_version": platform.python_version(),
        "comparison": " ".join(tolerance.__doc__.split()),
        "zero_gradient_rule": tolerance.ZERO_GRADIENT_RULE,
        "golden_parameter_formula": values.FORMULA,
        "paths": "relative to golden/data/",
        "cases": entries,
    }
    with open(os.path.join(out, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
