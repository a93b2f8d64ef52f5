// libtorch (Debian's libtorch-dev, PyTorch 1.13, CPU) as model_bench's peer: the same model as
// model/transformer.h with torch::nn::Transformer, timed in the same process on the same tokens.
//
// The peer model, for an encoder-decoder Post-LN ModelConfig (the paper base):
//   embeddings: one torch::nn::Embedding [V, d] shared by source, target and the output
//     projection (tied, no bias), times sqrt(d), plus the sinusoidal table, then dropout;
//   torch::nn::Transformer(d, heads, layers, d_ff, dropout, ReLU) with custom encoder/decoder
//     stacks that have no final LayerNorm (ours has none in Post-LN), LayerNorm eps and the
//     attention-probability dropout set to the config's (torch's layers default to 1e-5 and to
//     the residual dropout);
//   training: label-smoothed cross-entropy (ignore_index = pad), backward, torch::optim::Adam
//     with the config's betas and eps.
// Only this file's .cc includes torch: one translation unit with <torch/torch.h> takes ~18 s
// and ~1.1 GB to compile, and model_bench builds without it when CMake finds no Torch.
#pragma once

#include <string>

#include "core/config.h"
#include "model/transformer.h"

namespace trepro::bench {

// libtorch parallelizes twice: its intra-op OpenMP pool (at::set_num_threads) and OpenBLAS's
// own threads under its GEMMs. Both are set for each measurement.
struct TorchThreads {
  int intra_op = 1;
  int blas = 1;
  std::string name() const;  // "intra_op=2,blas=1"
};

struct TorchTiming {
  double seconds = 0.0;  // per call, at the fastest setting
  TorchThreads threads;  // that setting
};

// "libtorch 1.13.0 (CPU)": for the benchmark output's context.
std::string torch_version();

// The fastest of intra-op threads 1..cores, OpenBLAS on `cores` threads (its default here: the
// intra-op pool then only runs the element-wise ops, and 2 + 2 threads on 2 cores oversubscribe).
// Forward: inference (eval mode, no autograd), logits [B*T, V] as model.forward returns them.
TorchTiming torch_forward_seconds(const Config& config, const Batch& batch, int cores);
// Training step: zero grads, forward with dropout, loss, backward, one Adam update.
TorchTiming torch_train_step_seconds(const Config& config, const Batch& batch, int cores);

}  // namespace trepro::bench
