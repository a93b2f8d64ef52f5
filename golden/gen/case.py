"""A golden case: what it checks, its tolerance and its files, written into the golden folder."""
import dataclasses
import hashlib
import json
import os

from . import safetensors


@dataclasses.dataclass
class Case:
    name: str        # unique with dtype, e.g. "attention_causal"
    kind: str        # "op" | "layer" | "model" | "training"
    dtype: str       # "float64" | "float32": the dtype PyTorch computed in
    checks: str      # one sentence: what a backend that passes has shown
    pytorch: list    # the PyTorch modules and functions that produced the values
    by_hand: list    # what the generator wrote itself because PyTorch has no such module
    params: dict     # what a test needs to re-run the case (op flags, sizes)
    tolerance: dict  # gen.tolerance.tolerance(...)
    files: dict      # role -> (relative path, {name: tensor} or a JSON-able dict)


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_case(case, out_dir):
    """Writes the case's files; returns its manifest entry (files with their sha256)."""
    files = {}
    for role, (relative, content) in case.files.items():
        path = os.path.join(out_dir, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if relative.endswith(".json"):
            with open(path, "w") as f:
                json.dump(content, f, indent=2)
                f.write("\n")
        else:
            safetensors.write(path, content, {"generator": "golden/generate.py", "case": case.name})
        files[role] = {"path": relative, "sha256": sha256_file(path)}
    entry = dataclasses.asdict(case)
    entry["files"] = files
    return entry
