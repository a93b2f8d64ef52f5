"""Training case: 20 Adam steps (beta 0.9/0.98, eps 1e-9) with the Noam schedule and label
smoothing 0.1 on four fixed batches used in turn, from the golden parameter formula's weights.

Files: config.json, batches.safetensors (src.<i>, tgt.<i>, labels.<i>, int64), and per dtype
weights_<dtype>.safetensors (the initial weights) and expected_<dtype>.safetensors: loss [20]
(before each update), lr [20] (the rate each update used) and final.<parameter>.
"""
import torch

from . import model as golden_model
from . import values
from .case import Case
from .tolerance import UNIT_ROUNDOFF, tolerance

NAME = "training_noam"
STEPS = 20
MODEL = {"vocab_size": 12, "d_model": 32, "heads": 4, "encoder_layers": 2, "decoder_layers": 2, "d_ff": 64,
         "norm": "post", "activation": "relu"}
TRAIN = {"label_smoothing": 0.1, "label_smoothing_form": "uniform",
         "optimizer": {"lr": 5e-4, "beta1": 0.9, "beta2": 0.98, "eps": 1e-9},
         "schedule": {"kind": "noam", "warmup": 10, "factor": 1.0}, "max_steps": STEPS}
LENGTHS = [([7, 5, 6, 3], [6, 4, 6, 2]), ([4, 6, 7, 7], [3, 6, 5, 6]),
           ([5, 5, 2, 6], [5, 4, 2, 6]), ([6, 3, 7, 4], [6, 2, 5, 4])]


def noam(config, step):
    """The schedule of docs/config.md, step counted from 1."""
    d, schedule = config["model"]["d_model"], config["train"]["schedule"]
    return schedule["factor"] * d**-0.5 * min(step**-0.5, step * schedule["warmup"] ** -1.5)


def training_case(dtype_name):
    config = golden_model.config_json(MODEL, TRAIN)
    dtype = values.DTYPES[dtype_name]
    model = golden_model.GoldenTransformer(config["model"], dtype)
    weights = {n: t.to(dtype) for n, t in golden_model.golden_weights(model).items()}
    model.load(weights)
    gen = values.generator(NAME)
    batches = [golden_model.sequence_batch(gen, src, tgt, MODEL["vocab_size"], config["model"]["pad_id"])
               for src, tgt in LENGTHS]

    opt = config["train"]["optimizer"]
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"])
    # LambdaLR counts its epochs from 0; the project's steps count from 1.
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: noam(config, epoch + 1))
    losses, rates = [], []
    for step in range(STEPS):
        batch = batches[step % len(batches)]
        optimizer.zero_grad()
        loss = model.loss(model(batch["src"], batch["tgt"]), batch["labels"], config["train"])
        loss.backward()
        losses.append(loss.item())
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()

    final = {f"final.{n}": t for n, t in model.project_values().items()}
    expected = {"loss": torch.tensor(losses, dtype=dtype), "lr": torch.tensor(rates, dtype=torch.float64), **final}
    short = values.SHORT[dtype_name]
    k = max(MODEL["d_model"], MODEL["d_ff"], MODEL["vocab_size"], 4 * 7)
    # The key biases get no gradient in exact arithmetic (softmax is invariant to the constant
    # <q_i, b_k> added to every score of query i), so Adam sees only rounding noise g ~ K u |g|
    # and moves them by lr * g / (|g| + eps): by ~lr * K u / eps in float64 (noise << eps = 1e-9,
    # gradients here are < 1), by up to lr per step in float32 (noise ~ eps). Their final values
    # are held to that bound summed over the steps, not to the golden's noise.
    zero_grad = sorted(n for n in weights if n.endswith("attn.k_proj.bias"))
    return Case(NAME, "training", dtype_name,
                f"model/ Trainer: {STEPS} steps of Adam + Noam (warmup 10) + uniform label smoothing 0.1 on 4 fixed "
                "batches in turn: the loss and learning rate of every step and the final weights",
                ["torch.optim.Adam(betas=(0.9, 0.98), eps=1e-9)", "torch.optim.lr_scheduler.LambdaLR",
                 "F.cross_entropy(label_smoothing=0.1, ignore_index=0)", "the model of gen/model.py"],
                ["the Noam rate function given to LambdaLR", "sinusoidal positions",
                 "the golden parameter formula (initial weights)"],
                {"steps": STEPS, "batches": len(batches),
                 "lr_tolerance": "lr is computed in double on both sides: the float64 tolerance on every backend",
                 "zero_gradient_parameters": zero_grad,
                 "zero_gradient_atol": {"float64": sum(rates) * k * UNIT_ROUNDOFF["float64"] / opt["eps"],
                                        "float32": sum(rates)},
                 "zero_gradient_reason": "gradient identically 0 (softmax shift invariance): Adam turns rounding "
                                         "noise g into steps lr * g / (|g| + eps), at most lr (|update| <= lr when "
                                         "1 - beta1 < sqrt(1 - beta2), Kingma & Ba 2015 sec. 2.1); float64 noise "
                                         "K u (gradients < 1) is far below eps. Absolute, summed over the steps."},
                tolerance(dtype_name, "model", k,
                          f"a 2+2-layer model (factor 64) for {STEPS} steps: Adam's m / sqrt(v) is invariant to the "
                          "gradient's scale, so a relative gradient error d moves a weight by at most "
                          "sum(lr) d ~ 0.8 d; the loss sees that and its own error: factor 2 x 64",
                          factor=128),
                {"config": (f"training/{NAME}/config.json", config),
                 "batches": (f"training/{NAME}/batches.safetensors",
                             {f"{role}.{i}": b[role] for i, b in enumerate(batches) for role in b}),
                 "weights": (f"training/{NAME}/weights_{short}.safetensors", weights),
                 "expected": (f"training/{NAME}/expected_{short}.safetensors", expected)})


def cases():
    return [training_case(dtype) for dtype in values.DTYPES]
