"""Op cases: one Backend op, forward and the gradient of every input.

Tensors in an op file: input.<x>, cotangent.<y> (the upstream gradient fed to backward),
expected.<y> and expected.grad.<x>. Every case runs in float64 and float32.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import losses, values
from .case import Case
from .tolerance import tolerance


def _leaf(x, dtype):
    return x.to(dtype).requires_grad_(True)


def _grads(output, inputs, cotangent):
    return torch.autograd.grad(output, list(inputs.values()), cotangent)


def _op_case(name, dtype, op, checks, pytorch, by_hand, params, k, inputs, expected, cotangent=None):
    tensors = {f"input.{n}": t.detach() for n, t in inputs.items()}
    tensors.update({f"expected.{n}": t.detach() for n, t in expected.items()})
    if cotangent is not None:
        tensors.update({f"cotangent.{n}": t for n, t in cotangent.items()})
    reason = f"one op; longest sum {k} terms" + (" (a mean over rows of vocabulary sums: nested, gamma_(N+V))"
                                                 if op == "cross_entropy" else "")
    return Case(name, "op", dtype, checks, pytorch, by_hand, dict(params, op=op), tolerance(dtype, "op", k, reason),
                {"tensors": (f"ops/{name}_{values.SHORT[dtype]}.safetensors", tensors)})


# ---- attention ----------------------------------------------------------------------------

ATTENTION = {
    # name: (Tq, Tk, key lengths per batch row or None, causal)
    "attention": (5, 7, None, False),
    "attention_key_padding": (5, 7, [7, 4], False),
    "attention_causal": (6, 6, None, True),
    "attention_causal_key_padding": (6, 6, [6, 4], True),
    # Fewer queries than keys: queries are aligned to the end of the keys (a decoding step with
    # a cache), the project's convention: query i sees keys j <= i + Tk - Tq.
    "attention_causal_cached": (2, 6, None, True),
}


def attention(name, dtype_name):
    tq, tk, lengths, causal = ATTENTION[name]
    batch, heads, d_head = 2, 2, 4
    width = heads * d_head
    dtype = values.DTYPES[dtype_name]
    gen = values.generator(name)
    q, k, v = (_leaf(values.uniform(gen, (batch, t, width), -2, 2), dtype) for t in (tq, tk, tk))
    padding = torch.zeros(batch, tk, dtype=torch.bool)
    for row, length in enumerate(lengths or []):
        padding[row, length:] = True
    future = torch.ones(tq, tk, dtype=torch.bool).triu(1 + tk - tq) if causal else None

    # nn.MultiheadAttention with identity projections and zero biases is exactly the op on
    # already-projected q, k, v: x I^T + 0 is exact in floating point, forward and backward.
    mha = nn.MultiheadAttention(width, heads, batch_first=True, dtype=dtype)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.eye(width).repeat(3, 1))
        mha.in_proj_bias.zero_()
        mha.out_proj.weight.copy_(torch.eye(width))
        mha.out_proj.bias.zero_()
    out, _ = mha(q, k, v, key_padding_mask=padding if lengths else None, attn_mask=future, need_weights=False)

    # lse is the op's saved log-sum-exp; PyTorch does not expose it, so it is computed by hand.
    scale = 1.0 / math.sqrt(d_head)
    split = lambda x: x.detach().view(batch, x.shape[1], heads, d_head).transpose(1, 2)
    scores = scale * split(q) @ split(k).transpose(-1, -2)
    mask = padding[:, None, None, :] | (future if causal else torch.zeros(tq, tk, dtype=torch.bool))
    lse = torch.logsumexp(scores.masked_fill(mask, -math.inf), dim=-1)

    cotangent = values.uniform(gen, out.shape).to(dtype)
    dq, dk, dv = _grads(out, {"q": q, "k": k, "v": v}, cotangent)
    masks = " + ".join(m for m, on in (("key padding", lengths), ("causal", causal)) if on) or "no"
    aligned = f", {tq} queries aligned to the end of {tk} keys" if tq != tk and causal else ""
    return _op_case(
        name, dtype_name, "attention",
        f"attention_forward/backward ({masks} mask{aligned}): out, lse, dq, dk, dv",
        ["nn.MultiheadAttention (identity in/out projections, zero biases)"],
        ["lse = torch.logsumexp of the masked scores"] + (["the cached causal mask j > i + Tk - Tq"] if causal and tq != tk else []),
        {"heads": heads, "causal": causal, "scale": scale, "key_padding": bool(lengths)},
        max(tk, d_head),
        {"q": q, "k": k, "v": v, **({"key_padding": padding.long()} if lengths else {})},
        {"out": out, "lse": lse, "grad.q": dq, "grad.k": dk, "grad.v": dv},
        {"out": cotangent})


# ---- layer norm ---------------------------------------------------------------------------

def layer_norm(name, dtype_name):
    rows, d = {"layer_norm": (6, 16), "layer_norm_wide": (4, 512)}[name]
    dtype = values.DTYPES[dtype_name]
    gen = values.generator(name)
    # A mean far from 0 and a spread far from 1, so that both are really removed.
    x = _leaf(values.uniform(gen, (rows, d), -1, 5), dtype)
    gamma = _leaf(values.uniform(gen, (d,), 0.75, 1.25), dtype)
    beta = _leaf(values.uniform(gen, (d,), -0.125, 0.125), dtype)
    norm = nn.LayerNorm(d, eps=1e-5, dtype=dtype)
    with torch.no_grad():
        norm.weight.copy_(gamma)
        norm.bias.copy_(beta)
    y = norm(x)
    cotangent = values.uniform(gen, y.shape).to(dtype)
    dx, dgamma, dbeta = torch.autograd.grad(y, [x, norm.weight, norm.bias], cotangent)
    return _op_case(name, dtype_name, "layer_norm", "norm_forward/backward (layernorm): y, dx, dgamma, dbeta",
                    ["nn.LayerNorm(eps=1e-5)"], [], {"eps": 1e-5}, d,
                    {"x": x, "gamma": gamma, "beta": beta},
                    {"y": y, "grad.x": dx, "grad.gamma": dgamma, "grad.beta": dbeta}, {"y": cotangent})


# ---- activations --------------------------------------------------------------------------

ACTIVATIONS = {
    "relu": ("F.relu", F.relu),
    "gelu": ("F.gelu(approximate='none')", F.gelu),
    "gelu_tanh": ("F.gelu(approximate='tanh')", lambda x: F.gelu(x, approximate="tanh")),
}


def activation(name, dtype_name):
    act = name.removeprefix("activation_")
    label, fn = ACTIVATIONS[act]
    dtype = values.DTYPES[dtype_name]
    gen = values.generator(name)
    x = values.uniform(gen, (4, 16), -4, 4)
    x[0, 0] = 0.0  # relu'(0) = 0, PyTorch's convention and the project's
    x = _leaf(x, dtype)
    y = fn(x)
    cotangent = values.uniform(gen, y.shape).to(dtype)
    (dx,) = _grads(y, {"x": x}, cotangent)
    return _op_case(name, dtype_name, "activation", f"activation_forward/backward ({act}): y, dx", [label], [],
                    {"activation": act}, 1, {"x": x}, {"y": y, "grad.x": dx}, {"y": cotangent})


def swiglu(name, dtype_name):
    dtype = values.DTYPES[dtype_name]
    gen = values.generator(name)
    gate, up = (_leaf(values.uniform(gen, (4, 16), -4, 4), dtype) for _ in range(2))
    y = F.silu(gate) * up
    cotangent = values.uniform(gen, y.shape).to(dtype)
    dgate, dup = _grads(y, {"gate": gate, "up": up}, cotangent)
    return _op_case(name, dtype_name, "swiglu", "swiglu_forward/backward: y, dgate, dup", ["F.silu"],
                    ["the gate product silu(gate) * up (PyTorch has no SwiGLU)"], {}, 1,
                    {"gate": gate, "up": up}, {"y": y, "grad.gate": dgate, "grad.up": dup}, {"y": cotangent})


# ---- linear -------------------------------------------------------------------------------

def linear(name, dtype_name):
    act = name.removeprefix("linear_")
    label, fn = ACTIVATIONS.get(act, ("identity", lambda x: x))
    rows, k, m = 6, 24, 10
    dtype = values.DTYPES[dtype_name]
    gen = values.generator(name)
    x = _leaf(values.uniform(gen, (rows, k)), dtype)
    layer = nn.Linear(k, m, dtype=dtype)
    with torch.no_grad():
        layer.weight.copy_(values.uniform(gen, (m, k), -0.5, 0.5))
        layer.bias.copy_(values.uniform(gen, (m,), -0.5, 0.5))
    y = fn(layer(x))
    cotangent = values.uniform(gen, y.shape).to(dtype)
    dx, dw, db = torch.autograd.grad(y, [x, layer.weight, layer.bias], cotangent)
    return _op_case(name, dtype_name, "linear", f"linear_forward/backward (activation {act}): y, dx, dw, db",
                    ["nn.Linear", label], [], {"activation": act}, max(k, rows),
                    {"x": x, "w": layer.weight, "b": layer.bias},
                    {"y": y, "grad.x": dx, "grad.w": dw, "grad.b": db}, {"y": cotangent})


# ---- cross-entropy ------------------------------------------------------------------------

CROSS_ENTROPY = {  # name: (form, eps)
    "cross_entropy_uniform_0": ("uniform", 0.0),
    "cross_entropy_uniform_0.1": ("uniform", 0.1),
    "cross_entropy_fairseq_0": ("fairseq", 0.0),
    "cross_entropy_fairseq_0.1": ("fairseq", 0.1),
}


def cross_entropy(name, dtype_name):
    form, eps = CROSS_ENTROPY[name]
    rows, vocab, pad = 10, 7, 0
    dtype = values.DTYPES[dtype_name]
    gen = values.generator("cross_entropy")  # the same logits for every form
    logits = _leaf(values.uniform(gen, (rows, vocab), -3, 3), dtype)
    labels = torch.randint(1, vocab, (rows,), generator=gen)
    labels[[2, 7]] = pad
    loss = losses.cross_entropy(logits, labels, pad, eps, form)
    lse = torch.logsumexp(logits.detach(), dim=-1)
    (dlogits,) = _grads(loss, {"logits": logits}, None)
    by_hand = ["lse = torch.logsumexp"] + (["the fairseq form of the loss"] if form == "fairseq" else [])
    return _op_case(name, dtype_name, "cross_entropy",
                    f"cross_entropy_forward/backward ({form} form, eps {eps}, pad rows ignored): loss, lse, dlogits (dloss = 1)",
                    [losses.FORMS[form]] if form == "uniform" else ["F.log_softmax"], by_hand,
                    {"form": form, "eps": eps, "pad_id": pad, "count": int((labels != pad).sum())}, rows + vocab,
                    {"logits": logits, "labels": labels}, {"loss": loss, "lse": lse, "grad.logits": dlogits})


# ---- embedding ----------------------------------------------------------------------------

EMBEDDING = {  # name: (positional, offset)
    "embedding_sinusoidal": ("sinusoidal", 0),
    "embedding_sinusoidal_offset": ("sinusoidal", 7),
    "embedding_learned": ("learned", 3),
}


def embedding(name, dtype_name):
    positional, offset = EMBEDDING[name]
    batch, steps, vocab, d, max_len = 2, 5, 11, 16, 12
    scale = math.sqrt(d)
    dtype = values.DTYPES[dtype_name]
    gen = values.generator(name)
    ids = torch.randint(0, vocab, (batch, steps), generator=gen)
    ids[1, 3] = ids[0, 1]  # a repeated id: its table row accumulates two gradients
    table = nn.Embedding(vocab, d, dtype=dtype)
    inputs = {"ids": ids, "table": table.weight}
    with torch.no_grad():
        table.weight.copy_(values.uniform(gen, (vocab, d)))
    out = table(ids) * scale
    if positional == "sinusoidal":
        out = out + values.sinusoidal(range(offset, offset + steps), d).to(dtype)
        by_hand = ["sinusoidal positions"]
    else:
        positions = nn.Embedding(max_len, d, dtype=dtype)
        with torch.no_grad():
            positions.weight.copy_(values.uniform(gen, (max_len, d)))
        out = out + positions(torch.arange(offset, offset + steps))
        inputs["pos_table"] = positions.weight
        by_hand = []
    cotangent = values.uniform(gen, out.shape).to(dtype)
    leaves = {n: t for n, t in inputs.items() if n != "ids"}
    grads = dict(zip((f"grad.{n}" for n in leaves), _grads(out, leaves, cotangent)))
    return _op_case(name, dtype_name, "embedding",
                    f"embedding_forward/backward ({positional}, offset {offset}, scale sqrt(d)): out, dtable"
                    + (", dpos_table" if positional == "learned" else ""),
                    ["nn.Embedding"], by_hand, {"positional": positional, "offset": offset, "scale": scale},
                    batch * steps, inputs, {"out": out, **grads}, {"out": cotangent})


# ---- adam ---------------------------------------------------------------------------------

def adam(name, dtype_name):
    lrs, betas, eps = [1e-2, 5e-3, 2e-3], (0.9, 0.98), 1e-9
    dtype = values.DTYPES[dtype_name]
    gen = values.generator(name)
    param = values.uniform(gen, (5, 7)).to(dtype).requires_grad_(True)
    initial = param.detach().clone()
    grads = [values.uniform(gen, (5, 7)).to(dtype) for _ in lrs]
    for g in grads:
        g[0] *= 1e-10  # gradients near eps: the eps term of the denominator matters here
    optimizer = torch.optim.Adam([param], lr=lrs[0], betas=betas, eps=eps)
    expected = {}
    for step, (lr, g) in enumerate(zip(lrs, grads), start=1):
        optimizer.param_groups[0]["lr"] = lr
        param.grad = g
        optimizer.step()
        expected[f"param.{step}"] = param.detach().clone()
    state = optimizer.state[param]
    expected.update({"m": state["exp_avg"], "v": state["exp_avg_sq"]})
    return _op_case(name, dtype_name, "adam", "adam_update over 3 steps with varying lr: param after each step, m, v",
                    ["torch.optim.Adam"], [], {"lr": lrs, "beta1": betas[0], "beta2": betas[1], "eps": eps},
                    len(lrs), {"param": initial, **{f"grad.{i}": g for i, g in enumerate(grads, start=1)}}, expected)


def cases():
    builders = [(attention, list(ATTENTION)), (layer_norm, ["layer_norm", "layer_norm_wide"]),
                (activation, [f"activation_{a}" for a in ACTIVATIONS]), (swiglu, ["swiglu"]),
                (linear, ["linear_none", "linear_relu", "linear_gelu", "linear_gelu_tanh"]),
                (cross_entropy, list(CROSS_ENTROPY)), (embedding, list(EMBEDDING)), (adam, ["adam"])]
    return [build(name, dtype) for build, names in builders for name in names for dtype in values.DTYPES]
