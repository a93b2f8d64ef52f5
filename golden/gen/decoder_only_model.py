"""The decoder-only model (architecture "decoder_only": a language model over tgt), Pre-LN, with
RMSNorm, a SwiGLU feed-forward and rotary positions, as docs/conformance.md "Model facts that are choices"
and "Parameter names" specify it; nn.Transformer has none of these, so the layer is written here
from nn.Linear, F.silu and torch ops:

  y = sqrt(d) embed(tgt)                                  (rope: no position is added)
  per layer:  h = y + self_attn(norm1(y))                 (causal + target key padding; q and k
              y = h + ffn(norm2(h))                        rotated, gen/rotary.py)
  logits = F.linear(norm(y), embed.weight)                 (decoder.norm: Pre-LN's final norm)

  RMSNorm(x) = x / sqrt(mean(x^2) + eps) * weight          (Zhang & Sennrich 2019; no bias)
  ffn(x)     = w2(silu(w1 x) * w3 x)                       (Shazeer 2020: w1 is the gate)

The modules carry the project's names (decoder.layers.{i}.{self_attn,ffn,norm1,norm2}, embed,
decoder.norm), so gen/naming.py renames nothing.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import losses, naming
from .head_dim_attention import HeadDimAttention

SUPPORTED = {"architecture": "decoder_only", "norm": "pre", "norm_kind": "rmsnorm", "activation": "swiglu",
             "positional": "rope", "tie_embeddings": True}


class RMSNorm(nn.Module):
    def __init__(self, d_model, eps, dtype):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model, dtype=dtype))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    def __init__(self, d_model, d_ff, dtype):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, dtype=dtype)
        self.w2 = nn.Linear(d_ff, d_model, dtype=dtype)
        self.w3 = nn.Linear(d_model, d_ff, dtype=dtype)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Layer(nn.Module):
    def __init__(self, c, dtype):
        super().__init__()
        d = c["d_model"]
        self.self_attn = HeadDimAttention(d, c["heads"], d // c["heads"], dtype, rotary=True)
        self.ffn = SwiGLU(d, c["d_ff"], dtype)
        self.norm1 = RMSNorm(d, c["layer_norm_eps"], dtype)
        self.norm2 = RMSNorm(d, c["layer_norm_eps"], dtype)

    def forward(self, y, causal, padding):
        x = self.norm1(y)
        h = y + self.self_attn(x, x, x, attn_mask=causal, key_padding_mask=padding)[0]
        return h + self.ffn(self.norm2(h))


class Decoder(nn.Module):
    def __init__(self, c, dtype):
        super().__init__()
        self.layers = nn.ModuleList([Layer(c, dtype) for _ in range(c["decoder_layers"])])
        self.norm = RMSNorm(c["d_model"], c["layer_norm_eps"], dtype)


class DecoderOnlyTransformer(nn.Module):
    def __init__(self, model_config, dtype):
        super().__init__()
        c = model_config
        unsupported = {k: c[k] for k, v in SUPPORTED.items() if c[k] != v}
        if unsupported:
            raise ValueError(f"DecoderOnlyTransformer implements {SUPPORTED} only, got {unsupported}")
        self.d_model, self.pad = c["d_model"], c["pad_id"]
        self.embed = nn.Embedding(c["vocab_size"], c["d_model"], dtype=dtype)
        self.decoder = Decoder(c, dtype)

    def forward(self, tgt):
        causal = torch.ones(tgt.shape[1], tgt.shape[1], dtype=torch.bool).triu(1)
        y = self.embed(tgt) * math.sqrt(self.d_model)
        for layer in self.decoder.layers:
            y = layer(y, causal, tgt == self.pad)
        return F.linear(self.decoder.norm(y), self.embed.weight)

    def project_names(self):
        return naming.project_names(self, {})

    def load(self, params):
        naming.load_project_values(self, params, {})

    def grads(self):
        return naming.project_grads(self, {})

    def loss(self, logits, labels, train_config):
        return losses.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), self.pad,
                                    train_config["label_smoothing"], train_config["label_smoothing_form"])
