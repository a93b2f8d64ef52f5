"""Rotary positions (RoFormer, Su et al. 2021) in the rotate-half layout (GPT-NeoX, LLaMA), the
layout docs/conformance.md "Model facts that are choices" names: within a head of width D, element i is
rotated together with element i + D/2 (not with its neighbour) by theta = p / 10000^(2i/D),
position p = 0, 1, ... along the sequence. Written by hand: PyTorch 1.13 has no rotary op.
"""
import torch


def rotate(x):
    """x [B, heads, T, D], D even -> the same shape with every (i, i + D/2) pair rotated by theta(t, i)."""
    time, width = x.shape[-2], x.shape[-1]
    half = width // 2
    # The angles in float64, rounded once to x's dtype (they reach max_len radians).
    angle = (torch.arange(time, dtype=torch.float64)[:, None]
             / torch.pow(10000.0, torch.arange(0, width, 2, dtype=torch.float64) / width))  # [T, D/2]
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    first, second = x[..., :half], x[..., half:]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)
