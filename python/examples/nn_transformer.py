"""PyTorch's own nn.Transformer as a trepro-verdict model callable (python/README.md).

    python -m trepro_verdict --model python/examples/nn_transformer.py:model --out report.json

The model is torch.nn.Transformer itself (held as `self.transformer`, so its parameters are
named transformer.encoder.* / transformer.decoder.*, the package's default prefix map), with
a tied nn.Embedding scaled by sqrt(d_model) plus sinusoidal positions, and F.linear onto the
embedding table for the logits. What nn.Transformer cannot express raises NotImplementedError,
which the verdict reports as "not provided":
  - rotary positions (no hook inside nn.MultiheadAttention between projection and scores),
  - head_dim != d_model / heads (nn.MultiheadAttention's projections are d_model x d_model),
  - RMSNorm, SwiGLU (nn.TransformerEncoderLayer has LayerNorm and a two-matrix feed-forward).
Post-LN: nn.Transformer's stacks always end with a LayerNorm, which the paper's Post-LN model
has none of; the model removes them (`encoder.norm = None`), as the golden generator does.
The encoder-only architecture is nn.Transformer's encoder stack alone.

torch is needed here, not by the package. `model_with(**changes)` returns a variant for the
tests: precision "bfloat16" (the whole module cast to bfloat16) and deliberate mistakes.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from trepro_verdict import naming

TORCH_DTYPES = {"float64": torch.float64, "float32": torch.float32, "bfloat16": torch.bfloat16,
                "float16": torch.float16}


def unsupported(m):
    """Why nn.Transformer cannot express a config's model, or None."""
    if m.get("positional") == "rope":
        return "rotary positions: nn.MultiheadAttention has no hook between projections and scores"
    if m.get("head_dim") and m["head_dim"] * m["heads"] != m["d_model"]:
        return "head_dim: nn.MultiheadAttention's q/k/v projections are d_model wide"
    if m.get("norm_kind", "layernorm") != "layernorm":
        return "RMSNorm: nn.Transformer's layers hold nn.LayerNorm"
    if m.get("activation") not in ("relu", "gelu", "gelu_tanh"):
        return f"activation {m.get('activation')}: nn.Transformer's feed-forward has two matrices"
    if m.get("architecture") == "decoder_only":
        return "decoder-only: nn.TransformerDecoderLayer always has cross attention"
    return None


def sinusoidal(length, d):
    p = torch.arange(length, dtype=torch.float64)[:, None]
    angle = p / torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(length, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle[:, : d // 2])
    return pe


class TorchTransformer(nn.Module):
    def __init__(self, m, dtype, embed_scale=True, layer_norm_eps=None):
        super().__init__()
        pre = m["norm"] == "pre"
        activation = m["activation"] if m["activation"] != "gelu_tanh" else (lambda x: F.gelu(x, approximate="tanh"))
        self.encoder_only = m.get("architecture") == "encoder_only"
        self.transformer = nn.Transformer(
            d_model=m["d_model"], nhead=m["heads"], num_encoder_layers=m["encoder_layers"],
            num_decoder_layers=max(m["decoder_layers"], 1), dim_feedforward=m["d_ff"], dropout=0.0,
            activation=activation, layer_norm_eps=layer_norm_eps if layer_norm_eps is not None else m["layer_norm_eps"],
            batch_first=True, norm_first=pre, dtype=dtype)
        if self.encoder_only:
            del self.transformer.decoder
        if not pre:  # the paper's Post-LN stacks end without a norm
            self.transformer.encoder.norm = None
            if not self.encoder_only:
                self.transformer.decoder.norm = None
        vocab, d = m["vocab_size"], m["d_model"]
        self.tied = m.get("tie_embeddings", True)
        if self.tied:
            self.embed = nn.Embedding(vocab, d, dtype=dtype)
        else:
            self.src_embed = nn.Embedding(vocab, d, dtype=dtype)
            if not self.encoder_only:
                self.tgt_embed = nn.Embedding(vocab, d, dtype=dtype)
            self.out_proj = nn.Linear(d, vocab, bias=False, dtype=dtype)
        self.pos_embed = nn.Embedding(m["max_len"], d, dtype=dtype) if m.get("positional") == "learned" else None
        self.d, self.pad = d, m["pad_id"]
        self.scale = math.sqrt(d) if embed_scale else 1.0

    def table(self, role):
        if self.tied:
            return self.embed.weight
        return {"source": self.src_embed, "target": getattr(self, "tgt_embed", None), "output": self.out_proj}[role].weight

    def embed_ids(self, ids, role):
        x = F.embedding(ids, self.table(role)) * self.scale
        if self.pos_embed is not None:
            return x + self.pos_embed(torch.arange(ids.shape[1]))
        return x + sinusoidal(ids.shape[1], self.d).to(x.dtype)

    def forward(self, src, tgt):
        src_padding = src == self.pad
        memory = self.transformer.encoder(self.embed_ids(src, "source"), src_key_padding_mask=src_padding)
        if self.encoder_only:
            return F.linear(memory, self.table("output"))
        causal = torch.ones(tgt.shape[1], tgt.shape[1], dtype=torch.bool).triu(1)
        out = self.transformer.decoder(self.embed_ids(tgt, "target"), memory, tgt_mask=causal,
                                       tgt_key_padding_mask=tgt == self.pad, memory_key_padding_mask=src_padding)
        return F.linear(out, self.table("output"))


def loss_of(logits, labels, pad, train):
    eps, form = train["label_smoothing"], train["label_smoothing_form"]
    z, y = logits.reshape(-1, logits.shape[-1]).float() if logits.dtype in (torch.bfloat16, torch.float16) \
        else logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)
    if form == "uniform":
        return F.cross_entropy(z, y, ignore_index=pad, label_smoothing=eps)
    logp = F.log_softmax(z, dim=-1)
    target = logp.gather(1, y[:, None])[:, 0]
    per_row = -(1 - eps) * target - eps / (z.shape[1] - 1) * (logp.sum(dim=-1) - target)
    keep = y != pad
    return per_row[keep].sum() / keep.sum()


def model_with(precision=None, grads=True, embed_scale=True, layer_norm_eps=None, transpose=None,
               prefix_map=naming.DEFAULT_PREFIXES):
    """A model callable: computing in `precision` (default: the golden case's dtype), with
    gradients or not, and optionally one deliberate mistake (no sqrt(d) embedding scale, another
    LayerNorm eps, or the parameter `transpose` (a PyTorch name) loaded transposed)."""

    def model(case):
        m = case.config["model"]
        reason = unsupported(m)
        if reason:
            raise NotImplementedError(reason)
        dtype = TORCH_DTYPES[precision or case.dtype]
        module = TorchTransformer(m, dtype, embed_scale, layer_norm_eps)
        state = {n: torch.from_numpy(np.ascontiguousarray(v)) for n, v in case.torch_weights(prefix_map).items()}
        if transpose:
            state[transpose] = state[transpose].t().contiguous()
        module.load_state_dict({n: v.to(dtype) for n, v in state.items()}, strict=True)
        module.train()  # dropout is 0; training mode keeps PyTorch off its fused inference path
        src = torch.from_numpy(case.src)
        tgt = torch.from_numpy(case.tgt) if case.tgt is not None else None
        logits = module(src, tgt)
        loss = loss_of(logits, torch.from_numpy(case.labels), m["pad_id"], case.config["train"])
        result = {"logits": logits.detach().double().numpy(), "loss": loss.detach().double().numpy(),
                  "precision": precision or case.dtype}
        if precision in ("bfloat16", "float16"):
            result["low_precision"] = "all"  # the whole module is cast: every op's output rounded
        if grads:
            loss.backward()
            result["grads"] = {n: p.grad.double().numpy() for n, p in module.named_parameters()}
            result["prefix_map"] = prefix_map
        return result

    return model


model = model_with()
# The module cast to bfloat16 (PyTorch 1.13 on the CPU has no float16 matrix product).
model_bfloat16 = model_with(precision="bfloat16")
