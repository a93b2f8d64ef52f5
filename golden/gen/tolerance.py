"""The tolerance every golden case is held to, recorded in MANIFEST.json.

A tensor passes when, elementwise, |actual - expected| <= atol * max|expected| + rtol * |expected|:
atol is relative to the tensor's largest magnitude, so one tolerance serves gradients of any
scale, and an element far below that scale is not asked for more relative accuracy than the
sums that produced it can give.

The value is factor * K * u, with u the unit roundoff of the less precise of the golden's and
the backend's dtypes (2^-53 or 2^-24) and K the longest sum the checked values depend on:
Higham's bound for a K-term sum is gamma_K ~ K u relative to the sum of the absolute terms.
The factor counts the chained operations: 4 for one op (bias, activation, exp/log, scale),
16 for a layer (~10 ops; LayerNorm renormalises, so errors add rather than multiply), 64 for a
whole model (2-4 layers deep, plus embeddings, final norm and the loss).
"""

# Attention key biases have an identically zero gradient (softmax is invariant to the constant
# <q_i, b_k> that b_k adds to every score of query i), so both sides compute rounding noise
# there. Its scale is that of the key projection's weight gradient (both are sums of the same
# d(key) rows), which is therefore the scale their atol is relative to.
ZERO_GRADIENT_RULE = ("a gradient tensor named *k_proj.bias is identically 0 in exact arithmetic (softmax shift "
                      "invariance): its atol is relative to max|expected| of the same attention's k_proj.weight "
                      "gradient (grad_sample.* when only a sample is committed), the scale of the noise both "
                      "sides compute")


def scale_tensor_name(name, names):
    """The tensor whose largest magnitude `name`'s atol is relative to."""
    if "grad" not in name or not name.endswith("k_proj.bias"):
        return name
    weight = name[: -len("bias")] + "weight"
    return weight if weight in names else weight.replace("grad.", "grad_sample.", 1)


UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24}
FACTORS = {"op": 4, "layer": 16, "model": 64}


def tolerance(golden_dtype, kind, accumulation_length, reason, factor=None):
    factor = factor if factor is not None else FACTORS[kind]
    entry = {"accumulation_length": accumulation_length, "factor": factor, "reason": reason}
    for backend_dtype in ("float64", "float32"):
        u = max(UNIT_ROUNDOFF[golden_dtype], UNIT_ROUNDOFF[backend_dtype])
        value = factor * accumulation_length * u
        entry[backend_dtype] = {"atol": value, "rtol": value}
    return entry
