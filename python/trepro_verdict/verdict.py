"""Runs a model callable on the golden model cases and judges every output tensor.

The contract (python/README.md "The callable"):

    def model(case: ModelCase) -> dict | None

`case` holds one golden model case: name, dtype ("float64" or "float32": what PyTorch computed
the golden in, and the dtype of the weights given), config (the case's config.json: "model" and
"train" sections, README "The config"), weights ({project name: array}, README "Parameter
names"; case.torch_weights(prefix_map) gives them in nn.Transformer names, q/k/v packed), and
the batch: src [B, S], tgt [B, T], labels [B, T] (encoder-only: [B, S]) as int64 arrays; src is
None for the decoder-only model, tgt for the encoder-only one. Padding is config model.pad_id.

It returns a dict, every key optional:
    "logits"        [B, T, V] ([B, S, V] encoder-only), the model's output before the softmax
    "loss"          the label-smoothed cross-entropy (train.label_smoothing, _form), mean over
                    non-pad labels: a float or 0-d array
    "grads"         {parameter name: dL/dparameter}, project names or nn.Transformer names
                    (mapped with "prefix_map"; a "grad." prefix is dropped)
    "precision"     what it computed in: float64, float32, bfloat16 or float16 (default: the
                    logits' dtype; numpy has no bfloat16, so say it)
    "low_precision" for bfloat16 / float16: "gemm" (only the linear layers' operands in that
                    format, the default) or "all" (every op's output too: a module cast with
                    .to(torch.bfloat16)); it picks the baseline (compare.py)
    "prefix_map"    {their prefix: project prefix} for gradient names (default
                    naming.DEFAULT_PREFIXES)
An output that is None or missing is "not provided", as is every output of a case for which the
callable returns None or raises NotImplementedError (its message is the reason). Any other
exception fails the case's outputs, with the exception as the detail.
"""
import dataclasses
import fnmatch
import math
import traceback

import numpy as np

from . import compare, naming, reference

RESULT_KEYS = ("logits", "loss", "grads", "precision", "low_precision", "prefix_map")
NUMPY_PRECISION = {"float64": "float64", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}


@dataclasses.dataclass(frozen=True)
class ModelCase:
    name: str
    dtype: str
    config: dict
    weights: dict
    src: object
    tgt: object
    labels: object

    @property
    def label(self):
        return f"{self.name}/{self.dtype}"

    def torch_weights(self, prefix_map=naming.DEFAULT_PREFIXES):
        """The weights in nn.Transformer names (naming.to_torch): ready for load_state_dict."""
        return naming.to_torch(self.weights, prefix_map)


@dataclasses.dataclass
class Options:
    precision: str = None        # overrides the callable's "precision"
    low_precision: str = None    # overrides the callable's "low_precision"
    prefix_map: dict = None      # default for gradient names (naming.DEFAULT_PREFIXES)
    state_dict_shapes: dict = None  # project name -> shape of --state-dict: other cases not provided
    cases: tuple = ()            # fnmatch patterns over "<case>/<dtype>"; empty: all


def model_case(case):
    copy = lambda a: None if a is None else np.array(a)
    return ModelCase(case.name, case.dtype, case.config(), {n: np.array(v) for n, v in case.weights().items()},
                     copy(case.ids("src")), copy(case.ids("tgt")), copy(case.ids("labels")))


def judged_names(expected):
    """The expected tensors a verdict is given on, in report order (grad_index.* are indices)."""
    names = [n for n in ("logits", "loss") if n in expected]
    return names + sorted(n for n in expected if n.startswith(("grad.", "grad_sample.", "grad_norm.")))


def parameter_of(tensor):
    return tensor.split(".", 1)[1] if tensor.startswith("grad") else None


def infer_precision(logits, golden_dtype):
    name = getattr(getattr(logits, "dtype", None), "name", None)
    return NUMPY_PRECISION.get(name, golden_dtype)


class CaseJudge:
    def __init__(self, case, options):
        self.case, self.options = case, options
        self.expected = case.expected()
        self.names = judged_names(self.expected)
        self._baseline = {}

    def result(self, tensor, verdict, precision=None, outcome=None, reason=None, detail=None):
        r = {"id": f"{self.case.label}/{tensor}", "case": self.case.name, "golden_dtype": self.case.dtype,
             "kind": self.case.kind, "tensor": tensor,
             "direction": "backward" if tensor.startswith("grad") else "forward",
             "precision": precision, "verdict": verdict,
             "ratio": outcome.ratio if outcome and math.isfinite(outcome.ratio) else None,  # JSON has no inf
             "tolerance": outcome.tolerance if outcome else None}
        if reason:
            r["reason"] = reason
        if detail or (outcome and outcome.detail):
            r["detail"] = detail or outcome.detail
        return r

    def all_as(self, verdict, reason=None, detail=None):
        return [self.result(n, verdict, reason=reason, detail=detail) for n in self.names]

    def baseline(self, fmt, scope):
        key = (fmt, scope)
        if key not in self._baseline:
            c = self.case
            self._baseline[key] = reference.run(c.config(), c.weights(), c.ids("src"), c.ids("tgt"), c.ids("labels"),
                                                np.float32, gemm_operands=fmt, storage=fmt if scope == "all" else None)
        return self._baseline[key]

    def judge(self, tensor, actual, precision, scope):
        if precision in compare.LOW_PRECISION:
            if tensor in ("logits", "loss"):
                return compare.flash_rule(tensor, actual, self.expected[tensor], self.baseline(precision, scope)[tensor],
                                          precision, scope)
            return compare.norm_rule(tensor, actual, self.expected)
        return compare.manifest_rule(tensor, actual, self.expected, self.case.tolerance(precision))

    def run(self, model):
        c = self.case
        shapes = self.options.state_dict_shapes
        if shapes is not None:
            ours = naming.parameter_shapes(c.config()["model"])
            if shapes != ours:
                missing = sorted(set(ours) - set(shapes))
                extra = sorted(set(shapes) - set(ours))
                differ = sorted(n for n in set(ours) & set(shapes) if tuple(ours[n]) != tuple(shapes[n]))
                why = "; ".join(f"{what} {len(names)}: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}"
                                for what, names in (("missing", missing), ("unexpected", extra),
                                                    ("other shape", differ)) if names)
                return self.all_as("not_provided", reason=f"--state-dict's parameters are not this case's ({why})")
        try:
            out = model(model_case(c))
        except NotImplementedError as e:
            return self.all_as("not_provided", reason=str(e) or "NotImplementedError")
        except Exception as e:  # the implementation's error is its verdict, not the tool's crash
            return self.all_as("fail", detail=f"the callable raised {type(e).__name__}: {e}\n"
                                              + traceback.format_exc(limit=-3))
        if out is None:
            return self.all_as("not_provided", reason="the callable returned None")
        if not isinstance(out, dict):
            return self.all_as("fail", detail=f"the callable returned a {type(out).__name__}, not a dict")
        unknown = sorted(set(out) - set(RESULT_KEYS))
        if unknown:
            return self.all_as("fail", detail=f"the callable returned unknown keys {unknown} (known: {list(RESULT_KEYS)})")
        precision = self.options.precision or out.get("precision") or infer_precision(out.get("logits"), c.dtype)
        scope = self.options.low_precision or out.get("low_precision") or "gemm"
        if precision not in compare.FORMATS:
            return self.all_as("fail", detail=f"precision {precision!r}: not one of {list(compare.FORMATS)}")
        if scope not in compare.LOW_PRECISION_SCOPES:
            return self.all_as("fail", detail=f"low_precision {scope!r}: not one of {list(compare.LOW_PRECISION_SCOPES)}")

        results = []
        for tensor in ("logits", "loss"):
            if tensor not in self.names:
                continue
            if out.get(tensor) is None:
                results.append(self.result(tensor, "not_provided", reason=f"the callable returned no {tensor}"))
            else:
                outcome = self.judge(tensor, out[tensor], precision, scope)
                results.append(self.result(tensor, "pass" if outcome.passed else "fail", precision, outcome))
        results += self.run_grads(out, precision, scope)
        return results

    def run_grads(self, out, precision, scope):
        names = [n for n in self.names if n.startswith("grad")]
        if out.get("grads") is None:
            return [self.result(n, "not_provided", reason="the callable returned no gradients") for n in names]
        prefix_map = out.get("prefix_map", self.options.prefix_map or naming.DEFAULT_PREFIXES)
        try:
            raw = {n[len("grad."):] if n.startswith("grad.") else n: g for n, g in out["grads"].items()}
            grads = naming.to_project(raw, prefix_map)
        except (ValueError, AttributeError, TypeError) as e:
            return [self.result(n, "fail", detail=f"gradients: {e}") for n in names]
        results = []
        for tensor in names:
            param = parameter_of(tensor)
            if param not in grads:
                results.append(self.result(tensor, "not_provided", reason=f"the callable returned no gradient of {param}"))
                continue
            actual = np.asarray(grads[param], dtype=np.float64)
            if tensor.startswith("grad_sample."):
                index = self.expected[f"grad_index.{param}"]
                if actual.size <= int(index.max(initial=0)):
                    results.append(self.result(tensor, "fail", precision,
                                               detail=f"gradient of {param}: {actual.size} elements, "
                                                      f"expected {list(self.case.weights()[param].shape)}"))
                    continue
                actual = actual.reshape(-1)[index]
            elif tensor.startswith("grad_norm."):
                actual = np.linalg.norm(actual.reshape(-1))
            outcome = self.judge(tensor, actual, precision, scope)
            results.append(self.result(tensor, "pass" if outcome.passed else "fail", precision, outcome))
        expected_params = {parameter_of(n) for n in names}
        for param in sorted(set(grads) - expected_params):
            results.append(self.result(f"grad.{param}", "fail", precision,
                                       detail=f"{param} is no parameter of this case's golden model (README "
                                              "\"Parameter names\"; a prefix map missing?)"))
        return results


def selected_cases(golden, patterns=()):
    cases = golden.cases("model")
    if patterns:
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.label, p) for p in patterns)]
    return cases


def run(model, golden, options=None, on_case=None):
    """Results of every selected golden model case (a list of report result entries)."""
    options = options or Options()
    results = []
    for case in selected_cases(golden, options.cases):
        case_results = CaseJudge(case, options).run(model)
        if on_case:
            on_case(case, case_results)
        results += case_results
    return results


def state_dict_shapes(path, prefix_map=None):
    """{project name: shape} of a safetensors state dict in nn.Transformer names (its header
    only: no tensor is read), q/k/v of a packed in_proj split in three."""
    import json
    import struct

    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    header.pop("__metadata__", None)
    shapes = {}
    for name, entry in header.items():
        parts = naming.project_name_parts(name, prefix_map)
        shape = tuple(entry["shape"])
        if len(parts) == 3:
            shape = (shape[0] // 3,) + shape[1:]
        for part in parts:
            shapes[part] = shape
    return shapes
