"""Multi-head attention with heads x head_dim != d_model (Table 3 row (B): d_k below
d_model / heads), which nn.MultiheadAttention cannot express: its q, k, v and output projections
are d_model x d_model. Written with torch ops, nothing of the project's: separate q_proj, k_proj,
v_proj [heads * head_dim, d_model] and o_proj [d_model, heads * head_dim] (the project's names
and shapes, so naming.py renames nothing), scaled by 1/sqrt(head_dim).

It takes nn.MultiheadAttention's call (query, key, value, attn_mask, key_padding_mask,
need_weights), batch first, boolean masks (True = not allowed), so it can stand in for
self_attn / multihead_attn of nn.TransformerEncoderLayer and nn.TransformerDecoderLayer.
With rotary=True it rotates q and k (gen/rotary.py) after the projections, before the scores:
the decoder-only model's attention (gen/decoder_only_model.py).
"""
import math

import torch
import torch.nn as nn

from .rotary import rotate


class HeadDimAttention(nn.Module):
    def __init__(self, d_model, heads, head_dim, dtype, rotary=False):
        super().__init__()
        self.heads, self.head_dim, self.rotary = heads, head_dim, rotary
        width = heads * head_dim
        self.q_proj = nn.Linear(d_model, width, dtype=dtype)
        self.k_proj = nn.Linear(d_model, width, dtype=dtype)
        self.v_proj = nn.Linear(d_model, width, dtype=dtype)
        self.o_proj = nn.Linear(width, d_model, dtype=dtype)

    def _split(self, x):
        """[B, T, heads * head_dim] -> [B, heads, T, head_dim]"""
        batch, time, _ = x.shape
        return x.view(batch, time, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, query, key, value, attn_mask=None, key_padding_mask=None, need_weights=False):
        q, k, v = self._split(self.q_proj(query)), self._split(self.k_proj(key)), self._split(self.v_proj(value))
        if self.rotary:
            q, k = rotate(q), rotate(k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # [B, heads, Tq, Tk]
        if attn_mask is not None:
            scores = scores.masked_fill(attn_mask, float("-inf"))
        if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v  # [B, heads, Tq, head_dim]
        batch, _, time, _ = out.shape
        return self.o_proj(out.transpose(1, 2).reshape(batch, time, self.heads * self.head_dim)), None
