"""PyTorch `nn.Transformer`-style parameter names <-> the project's names (README "Parameter
names"), by renaming only. The one copy of these rules: golden/gen/naming.py (the golden
generator) imports them from here.

nn.MultiheadAttention packs q, k, v into `in_proj_weight` [3w, d] / `in_proj_bias` [3w]; the
project has `q_proj`, `k_proj`, `v_proj`. Everything else is a rename:

    self_attn.out_proj -> self_attn.o_proj     multihead_attn -> cross_attn
    linear1 -> ffn.w1    linear2 -> ffn.w2     norm1/2/3 -> norm1/2/3 (unchanged)

A prefix map rewrites the module path first: {"transformer.encoder.": "encoder."} maps a model
that holds its nn.Transformer as `self.transformer` (golden/gen/model.py does); the bare
`encoder.` / `decoder.` of nn.Transformer itself need none. Embeddings have no nn.Transformer
name, so a model's own name for them goes in the prefix map too ({"tok_emb.": "embed."}).

Only names and numpy arrays here (no torch): a state dict is any {name: array}. Mapping is
idempotent on project names (none of them holds a PyTorch-only part), so a dict that is already
in project names passes through unchanged.
"""

# (PyTorch part, project part), applied in this order after the prefix map.
RENAMES = (
    ("multihead_attn.", "cross_attn."),
    (".out_proj.", ".o_proj."),
    ("linear1.", "ffn.w1."),
    ("linear2.", "ffn.w2."),
)
PACKED = (".in_proj_weight", ".in_proj_bias")
QKV = ("q", "k", "v")

# A model holding its nn.Transformer as `self.transformer` (golden/gen/model.py's GoldenTransformer
# and python/examples/nn_transformer.py). Names outside it (`encoder.layers...` of a bare
# nn.Transformer, `embed.weight`) need no prefix, so this map serves both.
DEFAULT_PREFIXES = {"transformer.encoder.": "encoder.", "transformer.decoder.": "decoder."}


def _apply_prefix(name, prefix_map):
    for old, new in (prefix_map or {}).items():
        if name.startswith(old):
            return new + name[len(old):]
    return name


def project_name_parts(torch_name, prefix_map=None):
    """The project names of one PyTorch tensor, in row order: three (q, k, v) for a packed
    in_proj_weight / in_proj_bias, else one."""
    name = _apply_prefix(torch_name, prefix_map)
    for old, new in RENAMES:
        name = name.replace(old, new)
    for packed in PACKED:
        if name.endswith(packed):
            base, kind = name[: -len(packed)], packed.rsplit("_", 1)[1]
            return [f"{base}.{p}_proj.{kind}" for p in QKV]
    return [name]


def torch_name(project_name, prefix_map=None):
    """(PyTorch name, row block 0/1/2 of the packed in_proj, or None) of one project name: the
    inverse of project_name_parts."""
    name, part = project_name, None
    for p_index, p in enumerate(QKV):
        for kind in ("weight", "bias"):
            suffix = f".{p}_proj.{kind}"
            if name.endswith(suffix) and (".self_attn." in name or ".cross_attn." in name):
                name, part = name[: -len(suffix)] + f".in_proj_{kind}", p_index
    for old, new in reversed(RENAMES):
        name = name.replace(new, old)
    for old, new in (prefix_map or {}).items():
        if name.startswith(new):
            name = old + name[len(new):]
            break
    return name, part


def to_project(state_dict, prefix_map=None):
    """{project name: array} of a PyTorch-named {name: array}; packed q/k/v split row-wise.
    Raises ValueError when two names map onto one, or a packed tensor has no 3 equal row blocks."""
    out = {}
    for name, value in state_dict.items():
        parts = project_name_parts(name, prefix_map)
        if len(parts) == 3:
            rows = value.shape[0] if getattr(value, "ndim", 0) else 0
            if rows % 3:
                raise ValueError(f"{name}: {rows} rows, not 3 equal q/k/v blocks")
            pieces = [value[i * rows // 3:(i + 1) * rows // 3] for i in range(3)]
        else:
            pieces = [value]
        for part, piece in zip(parts, pieces):
            if part in out:
                raise ValueError(f"{name}: maps onto {part}, which another tensor maps onto too")
            out[part] = piece
    return out


def to_torch(weights, prefix_map=None):
    """{PyTorch name: array} of project-named weights: q/k/v of one attention packed into
    in_proj_weight / in_proj_bias (as nn.MultiheadAttention holds them), everything else renamed.
    A model whose q/k/v widths differ (head_dim) cannot be packed: ValueError."""
    import numpy as np

    out, packed = {}, {}
    for name, value in weights.items():
        target, part = torch_name(name, prefix_map)
        if part is None:
            out[target] = value
        else:
            packed.setdefault(target, [None, None, None])[part] = value
    for target, blocks in packed.items():
        if any(b is None for b in blocks):
            raise ValueError(f"{target}: q, k and v are not all present")
        if len({b.shape for b in blocks}) != 1:
            raise ValueError(f"{target}: q, k, v shapes differ: {[b.shape for b in blocks]}")
        out[target] = np.concatenate(blocks, axis=0)
    return out


def parameter_shapes(model):
    """{project name: shape} of every parameter of a model config's "model" section (README
    "Parameter names"), what golden/gen/model.py and decoder_only_model.py build for it."""
    d, ff, vocab = model["d_model"], model["d_ff"], model["vocab_size"]
    architecture = model.get("architecture", "encoder_decoder")
    width = model["heads"] * (model.get("head_dim") or d // model["heads"])
    layernorm = model.get("norm_kind", "layernorm") == "layernorm"
    swiglu = model.get("activation") == "swiglu"
    pre = model["norm"] == "pre"
    shapes = {}

    def attention(prefix):
        for p in QKV:
            shapes[f"{prefix}.{p}_proj.weight"] = (width, d)
            shapes[f"{prefix}.{p}_proj.bias"] = (width,)
        shapes[f"{prefix}.o_proj.weight"] = (d, width)
        shapes[f"{prefix}.o_proj.bias"] = (d,)

    def norm(prefix):
        shapes[f"{prefix}.weight"] = (d,)
        if layernorm:
            shapes[f"{prefix}.bias"] = (d,)

    def ffn(prefix):
        for w, shape in (("w1", (ff, d)), ("w2", (d, ff))) + ((("w3", (ff, d)),) if swiglu else ()):
            shapes[f"{prefix}.{w}.weight"] = shape
            shapes[f"{prefix}.{w}.bias"] = (shape[0],)

    has_encoder, has_decoder = architecture != "decoder_only", architecture != "encoder_only"
    if model.get("tie_embeddings", True):
        shapes["embed.weight"] = (vocab, d)
    else:
        if has_encoder:
            shapes["src_embed.weight"] = (vocab, d)
        if has_decoder:
            shapes["tgt_embed.weight"] = (vocab, d)
        shapes["out_proj.weight"] = (vocab, d)
    if model.get("positional", "sinusoidal") == "learned":
        shapes["pos_embed.weight"] = (model["max_len"], d)
    if has_encoder:
        for i in range(model["encoder_layers"]):
            attention(f"encoder.layers.{i}.self_attn")
            ffn(f"encoder.layers.{i}.ffn")
            norm(f"encoder.layers.{i}.norm1")
            norm(f"encoder.layers.{i}.norm2")
        if pre:
            norm("encoder.norm")
    if has_decoder:
        cross = architecture == "encoder_decoder"
        for i in range(model["decoder_layers"]):
            attention(f"decoder.layers.{i}.self_attn")
            if cross:
                attention(f"decoder.layers.{i}.cross_attn")
            ffn(f"decoder.layers.{i}.ffn")
            for n in ("norm1", "norm2", "norm3") if cross else ("norm1", "norm2"):
                norm(f"decoder.layers.{i}.{n}")
        if pre:
            norm("decoder.norm")
    return shapes
