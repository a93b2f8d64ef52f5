"""The tolerance rules: one verdict and one ratio (error / allowed; pass when <= 1) per tensor.

float64 and float32 outputs: the manifest's rule (golden/MANIFEST.json "comparison"), per
element, with the case's tolerance for the precision the implementation computed in:

    |actual - expected| <= atol * max|expected| + rtol * |expected|
    ratio = max over elements of |actual - expected| / (atol * max|expected| + rtol * |expected|)

(max|expected| of the same attention's k_proj.weight gradient for a k_proj.bias gradient: the
manifest's "zero_gradient_rule").

bfloat16 and float16 outputs: FlashAttention's rule for forward values (logits, loss): the
error may be at most FLASH_K times the error of the same computation done in that precision by
a plain implementation, plus a floor:

    max|actual - expected| <= FLASH_K * max|baseline - expected| + FLOOR_ROUNDINGS * u * max|expected|

The baseline is reference.py's numpy model on the same weights and batch, computed as
`low_precision` says: "gemm" (default) is the project's bf16 emulation, the cuda backend's bf16
mode (every linear layer's operands rounded to the format, float32 everywhere else: what
torch.autocast does too); "all" also rounds every op's output and every weight (a module cast
with .to(torch.bfloat16)). No committed golden holds bf16 values: the goldens are PyTorch's
float64 and float32 runs, so the baseline is computed here, from the committed weights, with the
emulation's own rounding. The floor is one rounding of the output to the format at its largest
magnitude (u = 2^-8 for bfloat16, 2^-11 for float16): an output stored in that format cannot be
closer, and without it a baseline that happens to be nearly exact (a loss whose errors cancel)
would ask the impossible (FlashAttention's tests add a floor for the same reason).

Gradients in bfloat16 / float16 have no baseline (reference.py has no backward): they are held
to the bound the C++ suite holds the project's own bf16 mode's whole models to
(conformance/support/tolerances.cc kBf16ModelGradientNormBound): norm-wise relative error

    ||actual - expected||_2 <= GRAD_NORM_BOUND * ||expected||_2

(measured 0.02 to 0.125 there; a zero, negated, doubled or another tensor's gradient is off by
0.5 or more). A k_proj.bias gradient, zero in exact arithmetic, is held to
max|actual - expected| <= GRAD_NORM_BOUND * max|k_proj.weight gradient| instead.
"""
import dataclasses

import numpy as np

FORMATS = {"float64": 2.0**-53, "float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11}
LOW_PRECISION = ("bfloat16", "float16")
LOW_PRECISION_SCOPES = ("gemm", "all")
FLASH_K = 2.0
FLOOR_ROUNDINGS = 1.0
GRAD_NORM_BOUND = 0.25
TINY = 1e-300


def low_precision_rules():
    """The constants of the low-precision rules (part of the tolerance table's version)."""
    return {"flash_k": FLASH_K, "floor_roundings": FLOOR_ROUNDINGS, "unit_roundoff": FORMATS,
            "grad_norm_bound": GRAD_NORM_BOUND, "scopes": list(LOW_PRECISION_SCOPES)}


@dataclasses.dataclass
class Outcome:
    ratio: float      # inf when not finite (NaN in the output, a shape that differs)
    tolerance: dict   # the rule and its numbers, as the report records them
    detail: str = ""  # where the worst element is, or what is wrong

    @property
    def passed(self):
        return bool(self.ratio <= 1.0)


def scale_tensor_name(name, names):
    """The expected tensor whose largest magnitude `name`'s atol is relative to: itself, except
    for a k_proj.bias gradient (the manifest's zero_gradient_rule)."""
    if "grad" not in name or not name.endswith("k_proj.bias"):
        return name
    weight = name[: -len("bias")] + "weight"
    return weight if weight in names else weight.replace("grad.", "grad_sample.", 1)


def as_float64(actual, expected, name):
    """actual as float64 with expected's shape, or an Outcome saying why it cannot be compared."""
    try:
        a = np.asarray(actual, dtype=np.float64)
    except (TypeError, ValueError) as e:
        return None, f"{name}: not numeric ({e})"
    if a.size != expected.size:
        return None, f"{name}: shape {list(a.shape)}, expected {list(expected.shape)}"
    a = a.reshape(expected.shape)
    if not np.all(np.isfinite(a)):
        return None, f"{name}: {int(np.sum(~np.isfinite(a)))} elements are NaN or infinite"
    return a, None


def _worst(ratio, a, e):
    i = int(np.argmax(ratio)) if ratio.size else 0
    return float(ratio.reshape(-1)[i]) if ratio.size else 0.0, \
        (f"worst element {i}: {a.reshape(-1)[i]:.17g}, expected {e.reshape(-1)[i]:.17g}" if ratio.size else "")


def manifest_rule(name, actual, expected_tensors, tol):
    """The manifest's elementwise rule; tol = {"atol", "rtol"} of the case for the precision."""
    e = np.asarray(expected_tensors[name], dtype=np.float64)
    scale = float(np.max(np.abs(np.asarray(expected_tensors[scale_tensor_name(name, expected_tensors)])), initial=0.0))
    tolerance = {"rule": "manifest", "atol": tol["atol"], "rtol": tol["rtol"], "scale": scale}
    a, problem = as_float64(actual, e, name)
    if problem:
        return Outcome(float("inf"), tolerance, problem)
    allowed = tol["atol"] * scale + tol["rtol"] * np.abs(e)
    ratio, where = _worst(np.abs(a - e) / np.maximum(allowed, TINY), a, e)
    return Outcome(ratio, tolerance, where)


def flash_rule(name, actual, expected, baseline, fmt, scope):
    """FlashAttention's rule: max error <= FLASH_K x the baseline's max error + one rounding."""
    e = np.asarray(expected, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64).reshape(e.shape)
    baseline_error = float(np.max(np.abs(b - e), initial=0.0))
    floor = FLOOR_ROUNDINGS * FORMATS[fmt] * float(np.max(np.abs(e), initial=0.0))
    allowed = FLASH_K * baseline_error + floor
    tolerance = {"rule": "flash", "k": FLASH_K, "baseline_error": baseline_error, "floor": floor,
                 "baseline": f"reference.py, {fmt} {scope}"}
    a, problem = as_float64(actual, e, name)
    if problem:
        return Outcome(float("inf"), tolerance, problem)
    error = np.abs(a - e)
    i = int(np.argmax(error)) if error.size else 0
    worst = float(error.reshape(-1)[i]) if error.size else 0.0
    return Outcome(worst / max(allowed, TINY), tolerance,
                   f"max error {worst:.3g} at element {i}; baseline's {baseline_error:.3g}, floor {floor:.3g}")


def norm_rule(name, actual, expected_tensors):
    """Low-precision gradients: ||a - e|| <= GRAD_NORM_BOUND ||e|| (k_proj.bias: max norms
    relative to the k_proj.weight gradient)."""
    e = np.asarray(expected_tensors[name], dtype=np.float64)
    scale_name = scale_tensor_name(name, expected_tensors)
    zero_gradient = scale_name != name
    tolerance = {"rule": "gradient_norm", "bound": GRAD_NORM_BOUND,
                 "norm": "max, relative to " + scale_name if zero_gradient else "l2"}
    a, problem = as_float64(actual, e, name)
    if problem:
        return Outcome(float("inf"), tolerance, problem)
    if zero_gradient:
        error = float(np.max(np.abs(a - e), initial=0.0))
        scale = float(np.max(np.abs(np.asarray(expected_tensors[scale_name])), initial=0.0))
    else:
        error, scale = float(np.linalg.norm(a - e)), float(np.linalg.norm(e))
    return Outcome(error / max(GRAD_NORM_BOUND * scale, TINY), tolerance,
                   f"error {error:.3g} against {'max' if zero_gradient else 'norm'} {scale:.3g}")
