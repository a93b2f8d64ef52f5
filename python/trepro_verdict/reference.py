"""A plain numpy Transformer (forward and loss only), as model/transformer.h computes it: every
config of README "The config" that the golden cases use (encoder-decoder, encoder-only and
decoder-only; Post-/Pre-LN; LayerNorm or RMSNorm; relu, gelu, gelu_tanh or SwiGLU; sinusoidal,
learned or rotary positions; head_dim; tied or untied embeddings).

It is the plain implementation of the FlashAttention rule (compare.py): for an output in
bfloat16 or float16, the error allowed is k times the error of this model computed with
`gemm_operands` "bfloat16" / "float16": every linear layer's operands (input and weight, the
output projection's included) rounded to that format, then multiplied, summed and everything
else computed in float32. That is the host emulation of the cuda backend's bf16 mode
(experiments/kernel_accuracy/bf16_emulation.h: the same rounding, round to nearest even, on the
same operands); float16 is the same with float16 rounding, for which the project has no device
mode. In float64 without rounding it meets every golden model case's logits and loss within the
manifest's float64 tolerance (python/tests/test_verdict.py checks it): it computes what the
goldens hold.
"""
import math

import numpy as np

GEMM_FORMATS = ("bfloat16", "float16")


def round_to_bfloat16(x):
    """float32 values rounded to bfloat16 (nearest, ties to even; NaN kept quiet), as float32:
    optimized/cuda/bf16_math.h's float_to_bf16 on every element."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    lowest_kept = (bits >> np.uint32(16)) & np.uint32(1)
    with np.errstate(over="ignore"):
        rounded = ((bits + np.uint32(0x7FFF) + lowest_kept) >> np.uint32(16)) << np.uint32(16)
    rounded = np.where(nan, ((bits >> np.uint32(16)) | np.uint32(0x40)) << np.uint32(16), rounded)
    return rounded.astype(np.uint32).view(np.float32)


def round_to_float16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


ROUNDING = {"bfloat16": round_to_bfloat16, "float16": round_to_float16}
_erf = np.vectorize(math.erf, otypes=[np.float64])


def sinusoidal(length, d):
    """PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(same), in float64."""
    p = np.arange(length, dtype=np.float64)[:, None]
    angle = p / np.power(10000.0, np.arange(0, d, 2, dtype=np.float64) / d)
    pe = np.zeros((length, d))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d // 2])
    return pe


class Model:
    """Forward of one config on project-named weights, in `dtype` (float64 or float32), with
    linear-layer operands rounded to `gemm_operands` (None, "bfloat16" or "float16"; float32 only)."""

    def __init__(self, config, weights, dtype=np.float64, gemm_operands=None, storage=None):
        for what, fmt in (("gemm_operands", gemm_operands), ("storage", storage)):
            if fmt is not None and fmt not in ROUNDING:
                raise ValueError(f"{what}: {fmt!r}, not one of {GEMM_FORMATS}")
            if fmt is not None and dtype != np.float32:
                raise ValueError(f"{what} rounding computes in float32")
        self.c = dict(config["model"])
        self.train = config.get("train", {})
        self.dtype = dtype
        self.round = ROUNDING.get(gemm_operands)
        # storage: every op's output (and every weight) rounded to that format, each op computed
        # in float32 in between: what a module cast to bfloat16 / float16 stores.
        self.s = ROUNDING.get(storage, lambda x: x)
        self.w = {n: self.s(np.asarray(v, dtype=dtype)) for n, v in weights.items()}
        c = self.c
        self.d = c["d_model"]
        self.heads = c["heads"]
        self.head_dim = c.get("head_dim") or self.d // self.heads
        self.architecture = c.get("architecture", "encoder_decoder")
        self.pre = c["norm"] == "pre"
        self.positional = c.get("positional", "sinusoidal")
        self.pad = c.get("pad_id", 0)
        self.eps = c.get("layer_norm_eps", 1e-5)

    # ---- ops ------------------------------------------------------------------------------------
    def linear(self, x, prefix, bias=True):
        w = self.w[f"{prefix}.weight"]
        if self.round is not None:
            x, w = self.round(x), self.round(w)
        y = x @ w.T
        return self.s(y + self.w[f"{prefix}.bias"] if bias else y)

    def norm(self, x, prefix):
        if self.c.get("norm_kind", "layernorm") == "rmsnorm":
            return self.s(x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.dtype(self.eps))
                          * self.w[f"{prefix}.weight"])
        mean = np.mean(x, axis=-1, keepdims=True)
        var = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return self.s((x - mean) / np.sqrt(var + self.dtype(self.eps)) * self.w[f"{prefix}.weight"]
                      + self.w[f"{prefix}.bias"])

    def activation(self, x):
        kind, x64 = self.c["activation"], x.astype(np.float64)
        if kind == "relu":
            return np.maximum(x, 0)
        if kind == "gelu":
            return self.s((0.5 * x64 * (1.0 + _erf(x64 / math.sqrt(2.0)))).astype(self.dtype))
        if kind == "gelu_tanh":
            inner = math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64 ** 3)
            return self.s((0.5 * x64 * (1.0 + np.tanh(inner))).astype(self.dtype))
        raise ValueError(f"activation {kind!r}")

    def ffn(self, x, prefix):
        if self.c["activation"] == "swiglu":
            gate = self.linear(x, f"{prefix}.w1")
            silu = self.s((gate.astype(np.float64) / (1.0 + np.exp(-gate.astype(np.float64)))).astype(self.dtype))
            return self.linear(self.s(silu * self.linear(x, f"{prefix}.w3")), f"{prefix}.w2")
        return self.linear(self.activation(self.linear(x, f"{prefix}.w1")), f"{prefix}.w2")

    def rotate(self, x):
        """x [B, H, T, D]: every (i, i + D/2) pair rotated by p / 10000^(2i/D) (rotate-half)."""
        time, width = x.shape[-2], x.shape[-1]
        half = width // 2
        angle = np.arange(time, dtype=np.float64)[:, None] / np.power(10000.0, np.arange(0, width, 2) / width)
        cos, sin = np.cos(angle).astype(self.dtype), np.sin(angle).astype(self.dtype)
        first, second = x[..., :half], x[..., half:]
        return self.s(np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1))

    def attention(self, query, key, prefix, key_padding, causal):
        """query [B, Tq, d], key/value [B, Tk, d]; key_padding [B, Tk] True = not allowed."""
        def split(x):
            batch, time, _ = x.shape
            return x.reshape(batch, time, self.heads, self.head_dim).transpose(0, 2, 1, 3)

        q = split(self.linear(query, f"{prefix}.q_proj"))
        k = split(self.linear(key, f"{prefix}.k_proj"))
        v = split(self.linear(key, f"{prefix}.v_proj"))
        if self.positional == "rope":
            q, k = self.rotate(q), self.rotate(k)
        scores = self.s(self.s(q @ k.transpose(0, 1, 3, 2)) / self.dtype(math.sqrt(self.head_dim)))
        masked = key_padding[:, None, None, :]
        if causal:
            tq, tk = scores.shape[-2], scores.shape[-1]
            masked = masked | np.triu(np.ones((tq, tk), dtype=bool), 1)[None, None]
        scores = np.where(masked, -np.inf, scores)
        top = np.max(scores, axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0)
        e = np.exp(scores - top)
        total = np.sum(e, axis=-1, keepdims=True)
        p = self.s(e / np.where(total > 0, total, 1))  # a row with no allowed key: 0, as the project
        out = self.s(p.astype(self.dtype) @ v).transpose(0, 2, 1, 3)
        batch, time = out.shape[:2]
        return self.linear(out.reshape(batch, time, self.heads * self.head_dim), f"{prefix}.o_proj")

    # ---- the model ------------------------------------------------------------------------------
    def table(self, role):
        if self.c.get("tie_embeddings", True):
            return self.w["embed.weight"]
        return self.w[{"source": "src_embed.weight", "target": "tgt_embed.weight", "output": "out_proj.weight"}[role]]

    def embed(self, ids, role):
        x = self.s(self.table(role)[ids] * self.dtype(math.sqrt(self.d)))
        if self.positional == "learned":
            return self.s(x + self.w["pos_embed.weight"][: ids.shape[1]])
        if self.positional == "sinusoidal":
            return self.s(x + self.s(sinusoidal(ids.shape[1], self.d).astype(self.dtype)))
        return x

    def sublayer(self, x, prefix, norm, f):
        if self.pre:
            return self.s(x + f(self.norm(x, f"{prefix}.{norm}")))
        return self.norm(self.s(x + f(x)), f"{prefix}.{norm}")

    def encode(self, src):
        x, padding = self.embed(src, "source"), src == self.pad
        for i in range(self.c["encoder_layers"]):
            p = f"encoder.layers.{i}"
            x = self.sublayer(x, p, "norm1", lambda h: self.attention(h, h, f"{p}.self_attn", padding, False))
            x = self.sublayer(x, p, "norm2", lambda h: self.ffn(h, f"{p}.ffn"))
        return self.norm(x, "encoder.norm") if self.pre else x

    def decode(self, tgt, memory, src_padding):
        y, padding = self.embed(tgt, "target"), tgt == self.pad
        for i in range(self.c["decoder_layers"]):
            p = f"decoder.layers.{i}"
            y = self.sublayer(y, p, "norm1", lambda h: self.attention(h, h, f"{p}.self_attn", padding, True))
            ffn_norm = "norm2"
            if memory is not None:
                y = self.sublayer(y, p, "norm2",
                                  lambda h: self.attention(h, memory, f"{p}.cross_attn", src_padding, False))
                ffn_norm = "norm3"
            y = self.sublayer(y, p, ffn_norm, lambda h: self.ffn(h, f"{p}.ffn"))
        return self.norm(y, "decoder.norm") if self.pre else y

    def logits(self, src=None, tgt=None):
        """[B, T, V] (encoder-only: [B, S, V]) in the model's dtype."""
        if self.architecture == "encoder_only":
            out = self.encode(src)
        elif self.architecture == "decoder_only":
            out = self.decode(tgt, None, None)
        else:
            out = self.decode(tgt, self.encode(src), src == self.pad)
        w = self.table("output")
        if self.round is not None:
            out, w = self.round(out), self.round(w)
        return self.s(out @ w.T)

    def loss(self, logits, labels):
        """Label-smoothed cross-entropy, mean over non-pad labels (train.label_smoothing{,_form})."""
        return cross_entropy(logits, labels, self.pad, self.train.get("label_smoothing", 0.1),
                             self.train.get("label_smoothing_form", "uniform"))


def cross_entropy(logits, labels, pad, eps, form):
    """uniform: q = (1 - eps) onehot + eps / V (PyTorch's); fairseq: eps / (V - 1) off the label."""
    v = logits.shape[-1]
    z = logits.reshape(-1, v)
    labels = labels.reshape(-1)
    top = z.max(axis=-1, keepdims=True)
    logp = z - top - np.log(np.sum(np.exp(z - top), axis=-1, keepdims=True))
    target = logp[np.arange(len(labels)), labels]
    if form == "uniform":
        per_row = -(1 - eps) * target - eps / v * logp.sum(axis=-1)
    else:
        per_row = -(1 - eps) * target - eps / (v - 1) * (logp.sum(axis=-1) - target)
    keep = labels != pad
    return per_row[keep].sum() / keep.sum()


def run(config, weights, src, tgt, labels, dtype=np.float64, gemm_operands=None, storage=None):
    """{"logits", "loss"} of the plain model (the loss computed in `dtype` from the logits)."""
    model = Model(config, weights, dtype, gemm_operands, storage)
    logits = model.logits(src, tgt)
    return {"logits": logits, "loss": np.asarray(model.loss(logits, labels), dtype=dtype)}
