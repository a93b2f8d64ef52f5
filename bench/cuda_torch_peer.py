#!/usr/bin/env python3
"""The PyTorch peer of the cuda benchmarks, on the same device in the same gpu-check run.

- Attention: torch.nn.functional.scaled_dot_product_attention at the shapes of
  bench/cuda_attention_bench.cu (batch 8, 8 heads of 64, Tq = Tk = T, T = 128 .. 8192), forward
  and forward + backward, in float32 (PyTorch picks its kernel: memory-efficient attention) and
  in bf16 with the flash kernel forced (flash has no float32 kernel).
- The paper-base model of bench/cuda_model_bench.cc: nn.Transformer (6 + 6 layers, d 512, 8 heads,
  d_ff 2048, Post-LN, ReLU, dropout 0.1) with tied embeddings scaled by sqrt(d), sinusoidal
  positions, a 37,000-word output projection, label-smoothed cross-entropy and Adam; forward in
  eval mode without gradients and a full training step, at 32 x 128 and 64 x 256 tokens, float32
  without TF32 (as our cuBLAS in pedantic float32) and bf16 autocast (GEMMs in bf16, as our
  train.precision bf16).

Times are medians of CUDA-event intervals after warm-up. Writes one JSON file:
  cuda_torch_peer.py OUT.json [--quick]
"""
import argparse
import json
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F

BATCH, HEADS, HEAD_WIDTH = 8, 8, 64
ATTENTION_LENGTHS = [128, 512, 2048, 8192]
MODEL_SHAPES = [(32, 128), (64, 256)]
VOCAB, D_MODEL, D_FF, LAYERS = 37000, 512, 2048, 6


def median_ms(fn, repeats, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def attention_rows(repeats):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    rows = []
    for length in ATTENTION_LENGTHS:
        for dtype, kernel in ((torch.float32, None), (torch.bfloat16, SDPBackend.FLASH_ATTENTION)):
            gen = torch.Generator(device="cuda").manual_seed(length)
            q, k, v = (torch.rand(BATCH, HEADS, length, HEAD_WIDTH, device="cuda", dtype=dtype, generator=gen) * 2 - 1
                       for _ in range(3))
            for t in (q, k, v):
                t.requires_grad_(True)
            grad = torch.rand_like(q) * 2 - 1

            def forward():
                with torch.no_grad():
                    return F.scaled_dot_product_attention(q, k, v, scale=1 / math.sqrt(HEAD_WIDTH))

            def forward_backward():
                out = F.scaled_dot_product_attention(q, k, v, scale=1 / math.sqrt(HEAD_WIDTH))
                out.backward(grad)

            if kernel is None:
                fwd, fwd_bwd = median_ms(forward, repeats), median_ms(forward_backward, repeats)
            else:
                with sdpa_kernel([kernel]):
                    fwd, fwd_bwd = median_ms(forward, repeats), median_ms(forward_backward, repeats)
            rows.append({"length": length, "dtype": str(dtype).removeprefix("torch."),
                         "kernel": "flash" if kernel is not None else "default", "forward_ms": fwd,
                         "forward_backward_ms": fwd_bwd, "backward_ms": fwd_bwd - fwd})
            print(f"sdpa T={length} {rows[-1]['dtype']}: forward {fwd:.3f} ms, forward+backward {fwd_bwd:.3f} ms",
                  flush=True)
    return rows


class PaperBase(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(VOCAB, D_MODEL, padding_idx=0)
        self.transformer = torch.nn.Transformer(D_MODEL, 8, LAYERS, LAYERS, D_FF, dropout=0.1, batch_first=True)
        position = torch.arange(1024).unsqueeze(1)
        rate = torch.exp(torch.arange(0, D_MODEL, 2) * (-math.log(10000.0) / D_MODEL))
        table = torch.zeros(1024, D_MODEL)
        table[:, 0::2], table[:, 1::2] = torch.sin(position * rate), torch.cos(position * rate)
        self.register_buffer("positions", table)

    def embed(self, ids):
        return self.embedding(ids) * math.sqrt(D_MODEL) + self.positions[: ids.shape[1]]

    def forward(self, src, tgt):
        mask = torch.nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], device=tgt.device)
        hidden = self.transformer(self.embed(src), self.embed(tgt), tgt_mask=mask, tgt_is_causal=True)
        return hidden @ self.embedding.weight.t()


def model_rows(repeats):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    for batch, length in MODEL_SHAPES:
        for precision in ("float32", "bf16"):
            torch.manual_seed(1)
            model = PaperBase().cuda()
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
            gen = torch.Generator(device="cuda").manual_seed(batch * length)
            src, tgt, labels = (torch.randint(1, VOCAB, (batch, length), device="cuda", generator=gen) for _ in range(3))
            autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16")

            def forward():
                model.eval()
                with torch.no_grad(), autocast:
                    return model(src, tgt)

            def train_step():
                model.train()
                optimizer.zero_grad(set_to_none=True)
                with autocast:
                    logits = model(src, tgt)
                loss = F.cross_entropy(logits.float().view(-1, VOCAB), labels.view(-1), label_smoothing=0.1)
                loss.backward()
                optimizer.step()

            fwd, step = median_ms(forward, repeats), median_ms(train_step, repeats)
            rows.append({"batch": batch, "length": length, "precision": precision, "forward_ms": fwd,
                         "train_step_ms": step, "forward_tokens_per_s": batch * length / fwd * 1e3,
                         "train_tokens_per_s": batch * length / step * 1e3})
            print(f"nn.Transformer {batch}x{length} {precision}: forward {fwd:.2f} ms, train step {step:.2f} ms",
                  flush=True)
            del model, optimizer
            torch.cuda.empty_cache()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--quick", action="store_true", help="5 timed repeats instead of 20")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("cuda_torch_peer: torch sees no CUDA device")
    repeats = 5 if args.quick else 20
    result = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "repeats": repeats,
              "attention": attention_rows(repeats), "model": model_rows(repeats)}
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
