// The host emulation of the cuda backend's bf16 precision, for `trepro compare-kernels`: what
// bf16 costs in accuracy, measurable on a machine without a GPU.
//
// A float32 CPU backend whose linear layers first round their GEMM operands to bfloat16 with
// the cuda kernels' own conversion (core/bf16.h) and then multiply in float32,
// as cuBLAS does in that mode (bf16 A and B, float32 accumulation and output). Everything the
// cuda backend keeps in float32 in bf16 mode stays float32 here: bias and activation epilogues,
// the bias gradient, attention, norms, softmax and loss, Adam. The one difference left is the
// order of the float32 sums, whose error is the float32 rows' (2^-24 per addition, far below the
// 2^-8 of the operand rounding).
#pragma once

#include <memory>

#include "core/backend.h"

namespace trepro::kernel_accuracy {

// `float32` is the backend that does the float32 arithmetic (the best CPU target).
std::unique_ptr<Backend> make_bf16_emulation(std::unique_ptr<Backend> float32);

}  // namespace trepro::kernel_accuracy
