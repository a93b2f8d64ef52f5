"""The golden cases (golden/MANIFEST.json and golden/data/): a case's config, inputs, weights
and expected outputs as numpy arrays, every file checked against the manifest's sha256.

The golden folder is, in this order: the `folder` argument (CLI --golden), $TREPRO_GOLDEN_DIR,
or golden/ of the checkout this package sits in (python/trepro_verdict/ -> ../../golden). A
package installed from the checkout with pip (not editable) has no checkout above it: give the
folder then.
"""
import hashlib
import json
import math
import os

import numpy as np

from . import naming

MANIFEST = "MANIFEST.json"


class GoldenError(Exception):
    """The golden folder is missing, or a file differs from its manifest entry."""


def find_golden_dir(folder=None):
    candidates = [folder] if folder else []
    if not folder and os.environ.get("TREPRO_GOLDEN_DIR"):
        candidates.append(os.environ["TREPRO_GOLDEN_DIR"])
    if not candidates:
        candidates.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "golden"))
    for candidate in candidates:
        if os.path.isfile(os.path.join(candidate, MANIFEST)):
            return os.path.realpath(candidate)
    raise GoldenError(f"no {MANIFEST} in {os.path.normpath(candidates[0])}: pass the repository's golden/ folder "
                      "(--golden DIR or TREPRO_GOLDEN_DIR)")


def sha256_bytes(blob):
    return hashlib.sha256(blob).hexdigest()


def sha256_file(path):
    with open(path, "rb") as f:
        return sha256_bytes(f.read())


def data_sha256(tensors):
    """The manifest's weights_data_sha256: sha256 of the lines "<name> <sha256 of the raw
    little-endian bytes>\\n" in sorted name order (golden/gen/model_cases.py)."""
    def raw(t):
        return np.ascontiguousarray(t, dtype=t.dtype.newbyteorder("<")).tobytes()

    lines = "".join(f"{name} {sha256_bytes(raw(tensors[name]))}\n" for name in sorted(tensors))
    return sha256_bytes(lines.encode())


# ---- The golden parameter formula (the manifest's "golden_parameter_formula") -------------------
# The one Python copy (golden/gen/values.py imports it); the same bits as conformance/golden/golden_weights.cc; the weights it
# gives are checked against the manifest's weights_data_sha256 before any case uses them.

def unit_values(name, count):
    """count values in [-1, 1): splitmix64 of (first 8 bytes of sha256(name)) + k * golden gamma."""
    key = np.uint64(int(hashlib.sha256(name.encode()).hexdigest()[:16], 16))
    with np.errstate(over="ignore"):
        z = key + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-52 - 1.0


def golden_parameter(name, shape):
    """Matrices [out, in]: U(-a, a), a = sqrt(3 / in); norm gains 1 + U(-1/4, 1/4); biases U(-1/8, 1/8)."""
    t = unit_values(name, math.prod(shape)).reshape(shape)
    if len(shape) == 2:
        return math.sqrt(3.0 / shape[1]) * t
    if name.endswith(".bias"):
        return 0.125 * t
    return 1.0 + 0.25 * t


NUMPY_DTYPES = {"float64": np.float64, "float32": np.float32}


class Case:
    """One manifest entry: `name` and `dtype` (what PyTorch computed in) identify it."""

    def __init__(self, golden, entry):
        self.golden, self.entry = golden, entry
        self.name, self.kind, self.dtype = entry["name"], entry["kind"], entry["dtype"]
        self._cache = {}

    @property
    def label(self):
        return f"{self.name}/{self.dtype}"

    def has(self, role):
        return role in self.entry["files"]

    def path(self, role):
        return os.path.join(self.golden.folder, "data", self.entry["files"][role]["path"])

    def tolerance(self, precision):
        """{"atol", "rtol"} of the manifest for an implementation computing in `precision`
        (float64 or float32)."""
        return self.entry["tolerance"][precision]

    def _read_checked(self, role):
        path = self.path(role)
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except OSError as e:
            raise GoldenError(f"{self.label}: {e}") from e
        if sha256_bytes(blob) != self.entry["files"][role]["sha256"]:
            raise GoldenError(f"{path}: sha256 differs from {MANIFEST} (edited, or a Git LFS pointer?)")
        return blob

    def read(self, role):
        """{name: array} of a safetensors file, or the dict of a JSON one (cached)."""
        if role not in self._cache:
            blob = self._read_checked(role)
            if self.entry["files"][role]["path"].endswith(".json"):
                self._cache[role] = json.loads(blob)
            else:
                from safetensors.numpy import load as load_safetensors
                self._cache[role] = load_safetensors(blob)
        return self._cache[role]

    # ---- model cases ----------------------------------------------------------------------------
    def config(self):
        return self.read("config")

    def ids(self, role):
        """src, tgt or labels as int64 [B, T], or None where the case has none (no src for the
        decoder-only model, no tgt for the encoder-only one)."""
        return self.read(role)[role] if self.has(role) else None

    def weights(self):
        """Project-named weights in the case's dtype: the committed file, or (the paper-shaped
        case) the golden parameter formula, checked against the manifest's hash either way."""
        if "weights" not in self._cache:
            if self.has("weights"):
                weights = dict(self.read("weights"))
            else:
                shapes = naming.parameter_shapes(self.config()["model"])
                weights = {n: golden_parameter(n, s).astype(NUMPY_DTYPES[self.dtype]) for n, s in shapes.items()}
            expected = self.entry["params"].get("weights_data_sha256")
            if expected and data_sha256(weights) != expected:
                raise GoldenError(f"{self.label}: the weights' data sha256 differs from the manifest's "
                                  "(the golden parameter formula or parameter names disagree with golden/gen)")
            self._cache["weights"] = weights
        return self._cache["weights"]

    def expected(self):
        return self.read("expected")


class Golden:
    def __init__(self, folder=None):
        self.folder = find_golden_dir(folder)
        blob = open(os.path.join(self.folder, MANIFEST), "rb").read()
        self.manifest_sha256 = sha256_bytes(blob)
        self.manifest = json.loads(blob)
        self.all_cases = [Case(self, e) for e in self.manifest["cases"]]

    def cases(self, kind):
        return [c for c in self.all_cases if c.kind == kind]

    def tolerance_table(self):
        """What every verdict on these goldens depends on: each case's tolerance entry and the
        zero-gradient rule (its text); compare.low_precision_rules() adds the package's own."""
        return {"cases": {c.label: c.entry["tolerance"] for c in self.all_cases},
                "zero_gradient_rule": self.manifest.get("zero_gradient_rule")}

    def suite_commit(self):
        """(commit, dirty) of the git checkout holding the golden folder, or (None, None)."""
        import subprocess
        try:
            commit = subprocess.run(["git", "-C", self.folder, "rev-parse", "HEAD"], capture_output=True,
                                    text=True, timeout=30)
            if commit.returncode != 0:
                return None, None
            status = subprocess.run(["git", "-C", self.folder, "status", "--porcelain", "--", "."],
                                    capture_output=True, text=True, timeout=30)
            return commit.stdout.strip(), bool(status.stdout.strip()) if status.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            return None, None
