"""Whole-model cases through the `trepro forward` contract (docs/conformance.md, "The forward contract").

Files per case: config.json, src/tgt/labels.safetensors (one int64 tensor each; no src for the
decoder-only model and no tgt for the encoder-only one, whose `trepro forward` takes none), and
per dtype weights_<dtype>.safetensors and expected_<dtype>.safetensors holding what `trepro
forward --grads` writes: logits [B, T, V] ([B, S, V] encoder-only), loss, grad.<parameter>.

The paper-shaped case has 15M parameters (60 MB in float32 for the weights, as much again for
the gradients), so its weights are not committed: both sides compute them with the golden
parameter formula (gen/values.py; the manifest records the sha256 of their bytes), and a
gradient with more than GRAD_FULL_LIMIT elements is committed as its L2 norm
(grad_norm.<name>) and its values at GRAD_SAMPLES random distinct indices (grad_index.<name>,
grad_sample.<name>): a wrong term anywhere moves the norm, a wrong element pattern shows in the
sample.
"""
import hashlib

import torch

from . import decoder_only_model
from . import model as golden_model
from . import values
from .case import Case
from .tolerance import tolerance

GRAD_FULL_LIMIT, GRAD_SAMPLES = 4096, 512

MODELS = {
    "model_small_post_relu": dict(
        model={"vocab_size": 11, "d_model": 16, "heads": 2, "encoder_layers": 1, "decoder_layers": 1, "d_ff": 24,
               "norm": "post", "activation": "relu"},
        train={"label_smoothing": 0.1, "label_smoothing_form": "uniform"},
        src_lengths=[6, 4, 5], tgt_lengths=[5, 5, 2], commit_weights=True),
    "model_small_pre_gelu": dict(
        model={"vocab_size": 13, "d_model": 32, "heads": 4, "encoder_layers": 2, "decoder_layers": 2, "d_ff": 64,
               "norm": "pre", "activation": "gelu"},
        train={"label_smoothing": 0.1, "label_smoothing_form": "fairseq"},
        src_lengths=[7, 3], tgt_lengths=[4, 6], commit_weights=True),
    "model_paper_post_relu": dict(
        model={"vocab_size": 64, "d_model": 512, "heads": 8, "encoder_layers": 2, "decoder_layers": 2, "d_ff": 2048,
               "norm": "post", "activation": "relu"},
        train={"label_smoothing": 0.1, "label_smoothing_form": "uniform"},
        src_lengths=[6, 4], tgt_lengths=[5, 3], commit_weights=False),
    # The modern variants nn.Transformer has no module for (gen/decoder_only_model.py): a rotary
    # decoder-only language model, head width 8 so each head rotates 4 pairs.
    "model_decoder_only_rope_rmsnorm_swiglu": dict(
        model={"architecture": "decoder_only", "vocab_size": 11, "d_model": 16, "heads": 2, "encoder_layers": 0,
               "decoder_layers": 2, "d_ff": 24, "norm": "pre", "norm_kind": "rmsnorm", "activation": "swiglu",
               "positional": "rope"},
        train={"label_smoothing": 0.1, "label_smoothing_form": "uniform"},
        src_lengths=None, tgt_lengths=[7, 4, 6], commit_weights=True),
    # Table 3 row (B)'s head_dim (q, k, v 2 x 4 = 8 wide against d_model 16) and row (E)'s
    # learned positions, through nn.Transformer with head_dim_attention.HeadDimAttention.
    "model_head_dim_learned": dict(
        model={"vocab_size": 11, "d_model": 16, "heads": 2, "head_dim": 4, "encoder_layers": 2, "decoder_layers": 1,
               "d_ff": 24, "norm": "post", "activation": "relu", "positional": "learned"},
        train={"label_smoothing": 0.1, "label_smoothing_form": "uniform"},
        src_lengths=[6, 4, 5], tgt_lengths=[5, 5, 2], commit_weights=True),
    # Row (E)'s modern row in the paper's own architecture: rotary positions in every attention,
    # cross attention included, with untied source, target and output tables.
    "model_rope_untied": dict(
        model={"vocab_size": 11, "d_model": 16, "heads": 2, "encoder_layers": 1, "decoder_layers": 2, "d_ff": 24,
               "norm": "post", "activation": "relu", "positional": "rope", "tie_embeddings": False},
        train={"label_smoothing": 0.1, "label_smoothing_form": "uniform"},
        src_lengths=[5, 6, 3], tgt_lengths=[4, 6, 6], commit_weights=True),
    # The encoder alone (a tagger: one label per source position), bidirectional attention.
    "model_encoder_only_pre_gelu": dict(
        model={"architecture": "encoder_only", "vocab_size": 13, "d_model": 16, "heads": 4, "encoder_layers": 2,
               "decoder_layers": 0, "d_ff": 32, "norm": "pre", "activation": "gelu"},
        train={"label_smoothing": 0.1, "label_smoothing_form": "fairseq"},
        src_lengths=[7, 2, 5], tgt_lengths=None, commit_weights=True),
}


def data_sha256(tensors):
    """sha256 of the lines "<name> <sha256 of its raw little-endian bytes>\n" in sorted name order."""
    lines = "".join(f"{name} {hashlib.sha256(tensors[name].contiguous().numpy().tobytes()).hexdigest()}\n"
                    for name in sorted(tensors))
    return hashlib.sha256(lines.encode()).hexdigest()


def sampled_grads(name, grad, case_name):
    if grad.numel() <= GRAD_FULL_LIMIT:
        return {f"grad.{name}": grad}
    gen = values.generator(f"{case_name}/{name}")
    index = torch.randperm(grad.numel(), generator=gen)[:GRAD_SAMPLES].sort().values
    return {f"grad_index.{name}": index, f"grad_sample.{name}": grad.reshape(-1)[index],
            f"grad_norm.{name}": torch.linalg.vector_norm(grad)}


def describe(m):
    """The model's features for the manifest's `checks`, and what PyTorch and the generator computed."""
    features = [f"{m['norm'].capitalize()}-LN", m["activation"]]
    pytorch = ["nn.Transformer(custom_encoder=nn.TransformerEncoder, custom_decoder=nn.TransformerDecoder)",
               "nn.TransformerEncoderLayer", "nn.TransformerDecoderLayer", "nn.Embedding (tied)", "F.linear"]
    by_hand = ["sinusoidal positions", "the golden parameter formula (weights)"]
    if m["architecture"] == "decoder_only":
        features = ["decoder_only", "Pre-LN", "RMSNorm", "SwiGLU", "rope"]
        pytorch = ["nn.Linear", "nn.Embedding (tied)", "F.silu", "torch.softmax", "F.linear"]
        by_hand = ["the decoder-only Pre-LN layer (gen/decoder_only_model.py)", "RMSNorm",
                   "the SwiGLU gate product", "rotary positions, rotate-half (gen/rotary.py)",
                   "the attention modules (head_dim_attention.HeadDimAttention)",
                   "the golden parameter formula (weights)"]
    if m.get("head_dim"):
        features.append(f"head_dim {m['head_dim']}")
        by_hand.append("the attention modules (head_dim_attention.HeadDimAttention: separate q/k/v/o "
                       "projections, heads x head_dim != d_model)")
    if m["positional"] == "learned":
        features.append("learned positions")
        pytorch.append("nn.Embedding (learned positions)")
        by_hand.remove("sinusoidal positions")
    if m["architecture"] == "encoder_decoder" and m["positional"] == "rope":
        features.append("rope in every attention")
        by_hand.remove("sinusoidal positions")
        by_hand += ["rotary positions, rotate-half (gen/rotary.py)",
                    "the attention modules (head_dim_attention.HeadDimAttention, rotary)"]
    if not m["tie_embeddings"]:
        features.append("untied embeddings")
        pytorch = [p.replace("nn.Embedding (tied)", "nn.Embedding x 2 (untied), nn.Linear (out_proj, no bias)")
                   for p in pytorch]
    if m["architecture"] == "encoder_only":
        features.insert(0, "encoder_only")
        pytorch = [p for p in pytorch if "Decoder" not in p and not p.startswith("nn.Transformer(")]
        pytorch.insert(0, "nn.TransformerEncoder")
    return features, pytorch, by_hand


def model_case(name, dtype_name):
    spec = MODELS[name]
    config = golden_model.config_json(spec["model"], spec["train"])
    dtype = values.DTYPES[dtype_name]
    decoder_only = config["model"]["architecture"] == "decoder_only"
    model = (decoder_only_model.DecoderOnlyTransformer if decoder_only
             else golden_model.GoldenTransformer)(config["model"], dtype)
    weights = {n: t.to(dtype) for n, t in golden_model.golden_weights(model).items()}
    model.load(weights)
    gen = values.generator(name)
    batch = golden_model.sequence_batch(gen, spec["src_lengths"], spec["tgt_lengths"],
                                        config["model"]["vocab_size"], config["model"]["pad_id"])
    logits = model(batch["tgt"]) if decoder_only else model(batch["src"], batch.get("tgt"))
    loss = model.loss(logits, batch["labels"], config["train"])
    loss.backward()
    expected = {"logits": logits.detach(), "loss": loss.detach()}
    for param_name, grad in model.grads().items():
        expected.update(sampled_grads(param_name, grad, name))

    m = config["model"]
    short = values.SHORT[dtype_name]
    files = {"config": (f"models/{name}/config.json", config),
             **{role: (f"models/{name}/{role}.safetensors", {role: ids}) for role, ids in batch.items()},
             "expected": (f"models/{name}/expected_{short}.safetensors", expected)}
    if spec["commit_weights"]:
        files["weights"] = (f"models/{name}/weights_{short}.safetensors", weights)
    tokens = max(ids.numel() for ids in batch.values())
    k = max(m["d_model"], m["d_ff"], m["vocab_size"], tokens)
    features, pytorch, by_hand = describe(m)
    if config["train"]["label_smoothing_form"] == "fairseq":
        by_hand.append("the fairseq form of the loss")
    return Case(name, "model", dtype_name,
                f"trepro forward --grads ({', '.join(features)}, d_model {m['d_model']}, "
                f"{m['heads']} heads, d_ff {m['d_ff']}, {m['encoder_layers']}+{m['decoder_layers']} layers, "
                f"{config['train']['label_smoothing_form']} label smoothing 0.1): logits, loss and every gradient"
                + ("" if spec["commit_weights"] else " (large gradients as norm + 512 sampled elements)"),
                pytorch
                + (["F.cross_entropy(label_smoothing=0.1, ignore_index=0)"]
                   if config["train"]["label_smoothing_form"] == "uniform" else ["F.log_softmax"]),
                by_hand, {"weights_data_sha256": data_sha256(weights)},
                tolerance(dtype_name, "model", k, f"{m['encoder_layers']}+{m['decoder_layers']} layers; "
                          f"longest sum {k} terms"),
                files)


def cases():
    return [model_case(name, dtype) for name in MODELS for dtype in values.DTYPES]
