"""Deterministic values: seeded random inputs, the golden parameter formula, sinusoidal positions."""
import math
import os
import sys
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from trepro_verdict import golden as verdict_golden  # noqa: E402

DTYPES = {"float64": torch.float64, "float32": torch.float32}
SHORT = {"float64": "f64", "float32": "f32"}  # in file names


def generator(case_name):
    """A torch generator seeded from the case name, so adding a case does not change the others."""
    return torch.Generator().manual_seed(zlib.crc32(case_name.encode()))


def uniform(gen, shape, lo=-1.0, hi=1.0):
    """Inputs are drawn in float64; float32 cases round the same values."""
    return lo + (hi - lo) * torch.rand(shape, dtype=torch.float64, generator=gen)


# What MANIFEST.json says of the formula ("golden_parameter_formula"). The formula itself lives
# once, in the Python verdict package (python/trepro_verdict/golden.py), which users run too.
FORMULA = (
    "count values in [-1, 1): splitmix64 of (first 8 bytes of sha256(name)) + k * golden gamma. Integer mixing "
    "and exact floating steps only, so the C++ tests (conformance/golden) compute the same bits: that is how the "
    "paper-shaped model's weights are shared without committing 60 MB of them. The value of parameter `name` "
    "(project naming) in every layer and model case, float64. Matrices [out, in]: U(-a, a) with a = sqrt(3 / in), "
    "variance 1/in, so activations stay O(1) (and sqrt(d) times the [V, d] embedding has unit scale). Norm gains "
    "1 + U(-1/4, 1/4) and biases U(-1/8, 1/8): not 1 and 0, so a swapped or missing gain or bias is visible.")


def golden_parameter(name, shape):
    """The value of parameter `name` (project naming) in every layer and model case, float64 (FORMULA)."""
    return torch.from_numpy(verdict_golden.golden_parameter(name, shape))


def sinusoidal(positions, d):
    """PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(same): written by hand (PyTorch has none)."""
    p = torch.as_tensor(positions, dtype=torch.float64)[:, None]
    angle = p / torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(len(p), d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe


def padded_ids(gen, lengths, width, vocab, pad):
    """Rows of random non-pad ids, padded with `pad` after each row's length."""
    ids = torch.full((len(lengths), width), pad, dtype=torch.int64)
    for row, length in enumerate(lengths):
        draw = torch.randint(0, vocab - 1, (length,), generator=gen)
        ids[row, :length] = torch.where(draw >= pad, draw + 1, draw)
    return ids
