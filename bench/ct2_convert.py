#!/usr/bin/python3
"""Converts a trepro run (config.json + a safetensors checkpoint) into a CTranslate2 Transformer
model through CTranslate2's Python API, for bench/decode_bench.py.

  /usr/bin/python3 bench/ct2_convert.py RUN OUT_DIR [--checkpoint F] [--quantization int8]

What it maps, and what it has to spell out because CTranslate2's defaults differ from ours:
- tokens are our ids written as decimal strings ("0" .. "V-1"); BOS "1", EOS "2", unk "3", as
  experiments/data/vocabulary.h numbers them. Sources are given with their EOS, as we train them;
- positions: CTranslate2 builds its own sinusoid with sines and cosines in two halves, ours
  interleaves them (reference/embedding.h), so the table of positions 0 .. max_len-1 is written
  out, computed as ours is (float64, rounded to float32);
- q/k/v projections are fused as CTranslate2 stores them (self: [q; k; v], cross: q and [k; v]);
- Post-LN: each sublayer's norm is the spec's layer_norm of that sublayer; tied embeddings give
  the source and target embeddings and the output projection (no bias) the same table.
Only what our multi30k models use is supported (encoder_decoder, post-LN LayerNorm, ReLU,
sinusoidal positions, tied embeddings); anything else is an error naming config.json.
"""
import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np


def fail(message):
    sys.exit(f"ct2_convert: {message}")


def read_safetensors(path):
    with open(path, "rb") as f:
        (header_size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_size))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or name.startswith("adam."):
            continue
        if info["dtype"] != "F32":
            fail(f"{path}: {name}: expected F32, got {info['dtype']}")
        begin, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], dtype=np.float32).reshape(info["shape"]).copy()
    return tensors


def check_supported(model, config_path):
    expected = {"architecture": "encoder_decoder", "norm": "post", "norm_kind": "layernorm", "activation": "relu",
                "positional": "sinusoidal", "tie_embeddings": True}
    for key, value in expected.items():
        if model.get(key, value) != value:
            fail(f"{config_path}: model.{key}: this converter supports {value!r}, got {model[key]!r}")
    if model.get("head_dim", 0) not in (0, model["d_model"] // model["heads"]):
        fail(f"{config_path}: model.head_dim: this converter supports d_model / heads only")


def sinusoid(max_len, d):
    """Our table: pe[p, 2i] = sin(p / 10000^(2i/d)), pe[p, 2i+1] = cos(same)."""
    positions = np.arange(max_len, dtype=np.float64)[:, None]
    angles = positions / np.power(10000.0, (2 * np.arange((d + 1) // 2, dtype=np.float64)) / d)[None, :]
    table = np.zeros((max_len, d), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)[:, : (d + 1) // 2]
    table[:, 1::2] = np.cos(angles)[:, : d // 2]
    return table.astype(np.float32)


def linear(spec, weights, prefix):
    spec.weight = weights[prefix + ".weight"]
    spec.bias = weights[prefix + ".bias"]


def fused(spec, weights, prefixes):
    spec.weight = np.concatenate([weights[p + ".weight"] for p in prefixes])
    spec.bias = np.concatenate([weights[p + ".bias"] for p in prefixes])


def norm(spec, weights, prefix):
    spec.gamma = weights[prefix + ".weight"]
    spec.beta = weights[prefix + ".bias"]


def ffn(spec, weights, prefix, norm_name):
    linear(spec.linear_0, weights, prefix + ".ffn.w1")
    linear(spec.linear_1, weights, prefix + ".ffn.w2")
    norm(spec.layer_norm, weights, prefix + "." + norm_name)


def build_spec(model, weights):
    import ctranslate2

    spec = ctranslate2.specs.TransformerSpec.from_config(
        (model["encoder_layers"], model["decoder_layers"]), model["heads"], pre_norm=False,
        activation=ctranslate2.specs.Activation.RELU)
    spec.config.layer_norm_epsilon = model.get("layer_norm_eps", 1e-5)
    positions = sinusoid(model.get("max_len", 256), model["d_model"])
    embed = weights["embed.weight"]
    for stack in (spec.encoder, spec.decoder):
        stack.scale_embeddings = True  # ours multiplies every embedding by sqrt(d_model)
        stack.position_encodings.encodings = positions
    spec.encoder.embeddings[0].weight = embed
    spec.decoder.embeddings.weight = embed
    spec.decoder.projection.weight = embed
    spec.decoder.projection.bias = np.zeros(embed.shape[0], dtype=np.float32)
    for i, layer in enumerate(spec.encoder.layer):
        prefix = f"encoder.layers.{i}"
        attn = prefix + ".self_attn"
        fused(layer.self_attention.linear[0], weights, [attn + ".q_proj", attn + ".k_proj", attn + ".v_proj"])
        linear(layer.self_attention.linear[1], weights, attn + ".o_proj")
        norm(layer.self_attention.layer_norm, weights, prefix + ".norm1")
        ffn(layer.ffn, weights, prefix, "norm2")
    for i, layer in enumerate(spec.decoder.layer):
        prefix = f"decoder.layers.{i}"
        attn, cross = prefix + ".self_attn", prefix + ".cross_attn"
        fused(layer.self_attention.linear[0], weights, [attn + ".q_proj", attn + ".k_proj", attn + ".v_proj"])
        linear(layer.self_attention.linear[1], weights, attn + ".o_proj")
        norm(layer.self_attention.layer_norm, weights, prefix + ".norm1")
        linear(layer.attention.linear[0], weights, cross + ".q_proj")
        fused(layer.attention.linear[1], weights, [cross + ".k_proj", cross + ".v_proj"])
        linear(layer.attention.linear[2], weights, cross + ".o_proj")
        norm(layer.attention.layer_norm, weights, prefix + ".norm2")
        ffn(layer.ffn, weights, prefix, "norm3")
    vocabulary = [str(i) for i in range(model["vocab_size"])]
    spec.register_source_vocabulary(vocabulary)
    spec.register_target_vocabulary(vocabulary)
    spec.config.bos_token, spec.config.eos_token, spec.config.unk_token = "1", "2", "3"
    spec.config.decoder_start_token = "1"
    return spec


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("out_dir")
    parser.add_argument("--checkpoint", help="default: RUN/checkpoints/best.safetensors")
    parser.add_argument("--quantization", help="e.g. int8 (default: float32)")
    args = parser.parse_args()
    config_path = os.path.join(args.run, "config.json")
    with open(config_path) as f:
        model = json.load(f)["model"]
    check_supported(model, config_path)
    checkpoint = args.checkpoint or os.path.join(args.run, "checkpoints", "best.safetensors")
    weights = read_safetensors(checkpoint)
    missing = [n for n in ("embed.weight",) if n not in weights]
    if missing:
        fail(f"{checkpoint}: missing {', '.join(missing)}")
    try:
        spec = build_spec(model, weights)
    except KeyError as e:
        fail(f"{checkpoint}: missing tensor {e.args[0]}")
    spec.validate()
    spec.optimize(quantization=args.quantization)
    # Written beside the destination and renamed into place, so a failed conversion leaves no
    # half-written model where decode_bench.py would take it for a finished one.
    partial = args.out_dir.rstrip("/") + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    spec.save(partial)
    shutil.rmtree(args.out_dir, ignore_errors=True)
    os.rename(partial, args.out_dir)


if __name__ == "__main__":
    main()
