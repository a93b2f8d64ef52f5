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
#include <vector>

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

// A weight w [n, k] packed once as B = w^T [k, n] (linear forward's x w^T), in the strips that
// the packed path would make of it at every call: depth block pc (kc deep) at data + pc * npad,
// the strip of `strip_width` columns from column j at + j * kc, zero past column n (npad: n
// rounded up to strip_width). Made by pack_weight for one target (the strip width is its).
struct PackedWeight {
  std::int64_t target = 0;
  std::int64_t n = 0, k = 0;
  std::size_t strip_width = 0;
  std::vector<float> data;
};

PackedWeight pack_weight(std::int64_t target, const float* w, std::int64_t n, std::int64_t k);

// n rounded up to a multiple of strip_width: the columns of a packed depth block.
inline std::size_t padded_width(std::size_t n, std::size_t strip_width) {
  return (n + strip_width - 1) / strip_width * strip_width;
}

// One product as the per-target kernels of gemm.cc receive it.
struct GemmProblem {
  std::size_t m, n, k;
  StridedMatrix a, b;
  float* c;
  std::size_t ldc;
  bool accumulate;
  GemmEpilogue epilogue;
  // B packed in advance (PackedWeight::data, strips of b_strip_width columns), or null.
  const float* b_packed = nullptr;
  std::size_t b_strip_width = 0;
};

// C = A B (+ epilogue), or C += A B when accumulate (then the epilogue is not applied). k may be
// 0 (C = epilogue of 0). `packed`, when given, is B packed by pack_weight for ctx.target (B must
// then be that weight viewed transposed): the same bits, without packing or transposing B.
void gemm(const CpuContext& ctx, std::int64_t m, std::int64_t n, std::int64_t k, StridedMatrix a, StridedMatrix b,
          float* c, std::int64_t ldc, bool accumulate, const GemmEpilogue& epilogue,
          const PackedWeight* packed = nullptr);

}  // namespace trepro::cpu
