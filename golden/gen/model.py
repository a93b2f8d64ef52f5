"""The whole model, as model/transformer.h computes it, built from PyTorch's own modules:

  nn.Transformer(custom_encoder=nn.TransformerEncoder(layer, N, norm), custom_decoder=...)
  x = nn.Embedding(src) * sqrt(d) + PE;  y = nn.Embedding(tgt) * sqrt(d) + PE  (one tied table)
  logits = F.linear(decoder output, embedding table)   (no bias)

The final norms exist only for Pre-LN (nn.Transformer's default stacks always add one, which
the paper's Post-LN model does not have: hence the custom stacks). Sinusoidal positions are
written by hand; everything else is PyTorch's, except where the config asks for what
nn.Transformer cannot express:
  head_dim   every attention module is head_dim_attention.HeadDimAttention (heads x head_dim wide)
  learned    positions from one nn.Embedding(max_len, d) table, pos_embed, for both stacks
  rope       every attention module is HeadDimAttention rotating q and k (gen/rotary.py), cross
             attention included (queries at their target positions, keys at their source ones);
             no position is added to the embeddings
  untied     (tie_embeddings false) src_embed, tgt_embed and a bias-free out_proj, each its own
             table; both embeddings are still scaled by sqrt(d)
  encoder_only  the encoder stack alone over src, its output projected to the vocabulary
             (labels [B, S], one per source position)
(the decoder-only model with RMSNorm, SwiGLU and rotary positions is gen/decoder_only_model.py).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import losses, naming, values
from .head_dim_attention import HeadDimAttention

PREFIXES = {"transformer.encoder.": "encoder.", "transformer.decoder.": "decoder."}


def config_json(model, train=None):
    """A complete config (every key explicit), as core/config.h reads it."""
    config = {
        "model": dict({"architecture": "encoder_decoder", "norm_kind": "layernorm", "positional": "sinusoidal",
                       "max_len": 64, "tie_embeddings": True, "dropout": 0.0, "attention_dropout": 0.0,
                       "layer_norm_eps": 1e-5, "pad_id": 0}, **model),
        "train": {"label_smoothing": 0.1, "label_smoothing_form": "uniform",
                  "optimizer": {"lr": 5e-4, "beta1": 0.9, "beta2": 0.98, "eps": 1e-9},
                  "schedule": {"kind": "noam", "warmup": 4000, "factor": 1.0},
                  "seed": 1, "max_tokens": 4096, "update_freq": 1, "max_steps": 1000},
    }
    for key, value in (train or {}).items():
        config["train"][key] = value
    return config


class GoldenTransformer(nn.Module):
    def __init__(self, model_config, dtype):
        super().__init__()
        c = model_config
        self.d_model, self.pad = c["d_model"], c["pad_id"]
        self.encoder_only = c["architecture"] == "encoder_only"
        self.rope = c["positional"] == "rope"
        pre = c["norm"] == "pre"
        common = dict(d_model=c["d_model"], nhead=c["heads"], dim_feedforward=c["d_ff"], dropout=0.0,
                      activation=c["activation"], layer_norm_eps=c["layer_norm_eps"], batch_first=True,
                      norm_first=pre, dtype=dtype)
        final_norm = lambda: nn.LayerNorm(c["d_model"], eps=c["layer_norm_eps"], dtype=dtype) if pre else None
        encoder_layer, decoder_layer = nn.TransformerEncoderLayer(**common), nn.TransformerDecoderLayer(**common)
        if c.get("head_dim") or self.rope:
            # The layers stay in training mode (dropout is 0), so they never take PyTorch's fused
            # fast path, which would read nn.MultiheadAttention's packed weights.
            head_dim = c.get("head_dim") or c["d_model"] // c["heads"]
            attention = lambda: HeadDimAttention(c["d_model"], c["heads"], head_dim, dtype, rotary=self.rope)
            encoder_layer.self_attn = attention()
            decoder_layer.self_attn, decoder_layer.multihead_attn = attention(), attention()
        encoder = nn.TransformerEncoder(encoder_layer, c["encoder_layers"], final_norm(), enable_nested_tensor=False)
        if self.encoder_only:
            self.encoder = encoder  # named encoder.* already
        else:
            decoder = nn.TransformerDecoder(decoder_layer, c["decoder_layers"], final_norm())
            self.transformer = nn.Transformer(d_model=c["d_model"], nhead=c["heads"], custom_encoder=encoder,
                                              custom_decoder=decoder, batch_first=True, dtype=dtype)
        table = lambda: nn.Embedding(c["vocab_size"], c["d_model"], dtype=dtype)
        self.tied = c["tie_embeddings"]
        if self.tied:
            self.embed = table()
        else:
            self.src_embed = table()
            if not self.encoder_only:
                self.tgt_embed = table()
            self.out_proj = nn.Linear(c["d_model"], c["vocab_size"], bias=False, dtype=dtype)
        self.pos_embed = nn.Embedding(c["max_len"], c["d_model"], dtype=dtype) if c["positional"] == "learned" else None

    # Methods, not attributes: a Parameter assigned to a module attribute would be registered
    # under that second name.
    def table(self, role):
        """The [V, d] table of role "source", "target" or "output"."""
        if self.tied:
            return self.embed.weight
        modules = {"source": self.src_embed, "target": getattr(self, "tgt_embed", None), "output": self.out_proj}
        return modules[role].weight

    def embed_with_positions(self, table, ids):
        tokens = F.embedding(ids, table) * math.sqrt(self.d_model)
        if self.rope:
            return tokens
        if self.pos_embed is not None:
            return tokens + self.pos_embed(torch.arange(ids.shape[1]))
        return tokens + values.sinusoidal(range(ids.shape[1]), self.d_model).to(table.dtype)

    def forward(self, src, tgt=None):
        source = self.embed_with_positions(self.table("source"), src)
        if self.encoder_only:
            out = self.encoder(source, src_key_padding_mask=src == self.pad)
        else:
            causal = torch.ones(tgt.shape[1], tgt.shape[1], dtype=torch.bool).triu(1)
            out = self.transformer(source, self.embed_with_positions(self.table("target"), tgt), tgt_mask=causal,
                                   src_key_padding_mask=src == self.pad, tgt_key_padding_mask=tgt == self.pad,
                                   memory_key_padding_mask=src == self.pad)
        return F.linear(out, self.table("output"))

    def project_names(self):
        return naming.project_names(self, PREFIXES)

    def load(self, params):
        naming.load_project_values(self, params, PREFIXES)

    def grads(self):
        return naming.project_grads(self, PREFIXES)

    def project_values(self):
        return naming.project_values(self, PREFIXES)

    def loss(self, logits, labels, train_config):
        return losses.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), self.pad,
                                    train_config["label_smoothing"], train_config["label_smoothing_form"])


def golden_weights(model):
    """The golden parameter formula for every parameter, by project name (float64)."""
    return {n: values.golden_parameter(n, shape) for n, shape in model.project_names().items()}


def sequence_batch(gen, src_lengths, tgt_lengths, vocab, pad):
    """src [B, S] (none for src_lengths None: decoder-only); tgt [B, T] the decoder input and
    labels [B, T] the next tokens, pad-aligned. tgt_lengths None (encoder-only): no tgt, and
    labels [B, S] one random token per source position, pad where src is."""
    if tgt_lengths is None:
        width = max(src_lengths)
        return {"src": values.padded_ids(gen, src_lengths, width, vocab, pad),
                "labels": values.padded_ids(gen, src_lengths, width, vocab, pad)}
    batch = {} if src_lengths is None else {"src": values.padded_ids(gen, src_lengths, max(src_lengths), vocab, pad)}
    sequence = values.padded_ids(gen, [n + 1 for n in tgt_lengths], max(tgt_lengths) + 1, vocab, pad)
    tgt, labels = sequence[:, :-1].clone(), sequence[:, 1:].clone()
    tgt[labels == pad] = pad
    return dict(batch, tgt=tgt, labels=labels)
