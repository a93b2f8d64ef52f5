"""Layer cases: one nn.TransformerEncoderLayer / nn.TransformerDecoderLayer, Post-LN and Pre-LN,
ReLU and GELU; the output and the gradient of every input and parameter. The *_head_dim cases
replace the attention modules by head_dim_attention.HeadDimAttention: 3 heads of width 4, so
q, k, v are 12 wide and d_model 16 is not a multiple of the head count.

Tensors: param.<project name> (as layer 0 of the project's encoder or decoder),
input.x (encoder) or input.tgt and input.memory (decoder), input.src_key_padding and
input.tgt_key_padding (int64, 1 = pad), cotangent.y, expected.y, expected.grad.<input or
parameter name>.
"""
import itertools

import torch
import torch.nn as nn

from . import naming, values
from .case import Case
from .head_dim_attention import HeadDimAttention
from .tolerance import tolerance

D_MODEL, HEADS, D_FF = 16, 4, 32
HEAD_DIM_HEADS, HEAD_DIM = 3, 4  # the *_head_dim cases (model.head_dim)
BATCH, SRC_LEN, TGT_LEN = 2, 7, 5
SRC_LENGTHS, TGT_LENGTHS = [7, 5], [5, 4]


def _padding(lengths, width):
    mask = torch.zeros(len(lengths), width, dtype=torch.bool)
    for row, length in enumerate(lengths):
        mask[row, length:] = True
    return mask


def layer(stack, norm, act, dtype_name, head_dim=False):
    name = f"{stack}_layer_{norm}_{act}" + ("_head_dim" if head_dim else "")
    dtype = values.DTYPES[dtype_name]
    gen = values.generator(name)
    module_type = nn.TransformerEncoderLayer if stack == "encoder" else nn.TransformerDecoderLayer
    module = module_type(D_MODEL, HEADS, D_FF, dropout=0.0, activation=act, batch_first=True,
                         norm_first=norm == "pre", dtype=dtype)
    heads = HEAD_DIM_HEADS if head_dim else HEADS
    if head_dim:
        # The layer stays in training mode (dropout is 0), so it never takes PyTorch's fused
        # fast path, which would read nn.MultiheadAttention's packed weights.
        module.self_attn = HeadDimAttention(D_MODEL, HEAD_DIM_HEADS, HEAD_DIM, dtype)
        if stack == "decoder":
            module.multihead_attn = HeadDimAttention(D_MODEL, HEAD_DIM_HEADS, HEAD_DIM, dtype)
    prefix = {"": f"{stack}.layers.0."}
    params = {n: values.golden_parameter(n, shape) for n, shape in naming.project_names(module, prefix).items()}
    naming.load_project_values(module, params, prefix)

    src_padding, tgt_padding = _padding(SRC_LENGTHS, SRC_LEN), _padding(TGT_LENGTHS, TGT_LEN)
    if stack == "encoder":
        inputs = {"x": values.uniform(gen, (BATCH, SRC_LEN, D_MODEL), -2, 2).to(dtype).requires_grad_(True)}
        y = module(inputs["x"], src_key_padding_mask=src_padding)
    else:
        inputs = {"tgt": values.uniform(gen, (BATCH, TGT_LEN, D_MODEL), -2, 2).to(dtype).requires_grad_(True),
                  "memory": values.uniform(gen, (BATCH, SRC_LEN, D_MODEL), -2, 2).to(dtype).requires_grad_(True)}
        causal = torch.ones(TGT_LEN, TGT_LEN, dtype=torch.bool).triu(1)
        y = module(inputs["tgt"], inputs["memory"], tgt_mask=causal, tgt_key_padding_mask=tgt_padding,
                   memory_key_padding_mask=src_padding)
    cotangent = values.uniform(gen, y.shape).to(dtype)
    y.backward(cotangent)

    tensors = {f"param.{n}": t.to(dtype) for n, t in params.items()}
    tensors.update({f"input.{n}": t.detach() for n, t in inputs.items()})
    tensors["input.src_key_padding"] = src_padding.long()
    if stack == "decoder":
        tensors["input.tgt_key_padding"] = tgt_padding.long()
    tensors["cotangent.y"] = cotangent
    tensors["expected.y"] = y.detach()
    tensors.update({f"expected.grad.{n}": t.grad for n, t in inputs.items()})
    tensors.update({f"expected.grad.{n}": g for n, g in naming.project_grads(module, prefix).items()})

    k = max(D_MODEL, D_FF, SRC_LEN, heads * HEAD_DIM)
    masks = "source key padding" if stack == "encoder" else "causal + target key padding, source key padding"
    attention = f", {HEAD_DIM_HEADS} heads of head_dim {HEAD_DIM}" if head_dim else ""
    by_hand = ["the golden parameter formula (weights)"]
    if head_dim:
        by_hand.append("the attention modules (head_dim_attention.HeadDimAttention: separate q/k/v/o "
                       "projections, heads x head_dim != d_model)")
    params_meta = {"stack": stack, "norm": norm, "activation": act, "d_model": D_MODEL, "heads": heads,
                   "d_ff": D_FF, "layer_norm_eps": 1e-5}
    if head_dim:
        params_meta["head_dim"] = HEAD_DIM
    return Case(name, "layer", dtype_name,
                f"model/ {stack.capitalize()}Layer ({norm.capitalize()}-LN, {act}, {masks}{attention}): "
                "output, input gradients and every parameter gradient",
                [f"nn.Transformer{stack.capitalize()}Layer(norm_first={norm == 'pre'}, activation='{act}', "
                 "dropout=0, batch_first=True)"],
                by_hand, params_meta,
                tolerance(dtype_name, "layer", k, f"one layer (~10 ops); longest sum {k} terms"),
                {"tensors": (f"layers/{name}_{values.SHORT[dtype_name]}.safetensors", tensors)})


def cases():
    return ([layer(stack, norm, act, dtype)
             for stack, norm, act in itertools.product(["encoder", "decoder"], ["post", "pre"], ["relu", "gelu"])
             for dtype in values.DTYPES] +
            [layer(stack, "post", "relu", dtype, head_dim=True) for stack in ["encoder", "decoder"]
             for dtype in values.DTYPES])
