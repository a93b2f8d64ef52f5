// The GEMM under linear (forward, dx and dw), packed and cache-blocked with a register-tiled
// micro-kernel per Highway target (Goto/BLIS loop order):
//
//   C [M, N]  = A [M, K] B [K, N]      (or += when accumulate)
//
// A and B are strided views, element (i, j) at data[i * row_stride + j * col_stride], so the
// three products of linear need no transposed copies: x w^T (B = w viewed transposed),
// dpre w, and dpre^T x (A = dpre viewed transposed). Packing absorbs the layout.
//
// Each element of C is the sum over k in a fixed order (blocks of kGemmKc, each summed in
// order), independent of the thread count and of the partition: results are bit-identical for
// any number of threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/backend.h"
#include "optimized/cpu/cpu_context.h"

namespace trepro::cpu {

struct StridedMatrix {
  const float* data;
  std::int64_t row_stride;
  std::int64_t col_stride;
};

// Applied to C once its sums are complete (when not accumulating):
//   pre[i, j] = C[i, j] + bias[j]   (bias may be null; pre written only when not null)
//   C[i, j]   = act(C[i, j] + bias[j])
struct GemmEpilogue {
  const float* bias = nullptr;
  Activation act = Activation::none;
  float* pre = nullptr;  // row stride ldc, like C
};

// One product as the per-target kernels of gemm.cc receive it.
struct GemmProblem {
  std::size_t m, n, k;
  StridedMatrix a, b;
  float* c;
  std::size_t ldc;
  bool accumulate;
  GemmEpilogue epilogue;
};

// C = A B (+ epilogue), or C += A B when accumulate (then the epilogue is not applied). k may be
// 0 (C = epilogue of 0).
void gemm(const CpuContext& ctx, std::int64_t m, std::int64_t n, std::int64_t k, StridedMatrix a, StridedMatrix b,
          float* c, std::int64_t ldc, bool accumulate, const GemmEpilogue& epilogue);

}  // namespace trepro::cpu
