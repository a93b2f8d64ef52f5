#!/usr/bin/python3
"""safetensors files between trepro and the Python `safetensors` package (PyPI; scripts/setup
installs it for /usr/bin/python3), both ways, through two committed files:

  python_numpy.safetensors  written by safetensors.numpy.save_file: its layout differs from ours
                            (tensors ordered by dtype size, then name, not by name; metadata
                            first). safetensors_interop_test.cc reads it with our reader.
  trepro.safetensors        written by our writer (safetensors_interop_test.cc checks that the
                            writer still gives these bytes). This script reads it with the package.

Checks: the installed package writes python_numpy.safetensors from TENSORS (the same header, up
to the order of the metadata keys, which the package takes from a hash map, and the same data
bytes: the file is what that writer makes), and reads trepro.safetensors back as TENSORS with its
metadata.

Usage: /usr/bin/python3 safetensors_check.py [--write-python-file]
Exit 77 (ctest: skipped; a failure in CI) when safetensors or numpy is missing.
"""
import json
import os
import sys
import tempfile

try:
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file
except ImportError as e:
    print(f"safetensors_check: skipped: {e.name} is not importable by {sys.executable} "
          "(scripts/setup installs safetensors for /usr/bin/python3)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_FILE = os.path.join(HERE, "python_numpy.safetensors")
TREPRO_FILE = os.path.join(HERE, "trepro.safetensors")
# The same tensors and metadata as safetensors_interop_test.cc.
TENSORS = {
    "a.weight": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
    "b.ids": np.array([7, -3, 11], dtype=np.int32),
    "c.double": np.array([0.1, -2.5], dtype=np.float64),
    "d.long": np.array([[1 << 40], [-5]], dtype=np.int64),
    "e.scalar": np.array(1.5, dtype=np.float32),
}
METADATA = {"format": "np", "note": "python"}

failures = []


def header_and_data(blob):
    """(the parsed JSON header, the data section) of a safetensors file's bytes."""
    n = int.from_bytes(blob[:8], "little")
    return json.loads(blob[8:8 + n]), blob[8 + n:]


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def main(argv):
    if argv == ["--write-python-file"]:
        save_file(TENSORS, PYTHON_FILE, metadata=METADATA)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "python.safetensors")
        save_file(TENSORS, path, metadata=METADATA)
        with open(path, "rb") as f, open(PYTHON_FILE, "rb") as g:
            check(header_and_data(f.read()) == header_and_data(g.read()),
                  f"the package writes {os.path.basename(PYTHON_FILE)}: its header and data")
    try:
        ours = load_file(TREPRO_FILE)
        with safe_open(TREPRO_FILE, framework="numpy") as f:
            metadata = f.metadata()
    except Exception as e:  # the package's own error types vary by version
        check(False, f"the package reads {TREPRO_FILE}: {e}")
        return 1
    check(sorted(ours) == sorted(TENSORS), f"the names of {os.path.basename(TREPRO_FILE)}: {sorted(ours)}")
    for name, expected in TENSORS.items():
        got = ours.get(name)
        check(got is not None and got.dtype == expected.dtype and got.shape == expected.shape
              and np.array_equal(got, expected), f"{name}: {expected.dtype} {list(expected.shape)} equal")
    check(metadata == METADATA, f"metadata {metadata}")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
