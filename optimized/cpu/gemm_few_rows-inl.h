// The GEMM of a few rows of A against a weight viewed transposed (linear's x w^T at decoding:
// batch x beam rows, e.g. 4 at batch 1), compiled once per Highway target that has the 8 x 8
// transpose. Packing B there costs more than the product: each call would copy and transpose
// the whole weight (the vocabulary projection: 8 MB) for 4 rows. Here each 8 x 8 block of w is
// transposed in registers and used at once by every row, so w is read once and nothing is written
// but C. A weight packed in advance (gemm.h: PackedWeight, kept while decoding) needs no
// transposes: gemm_rows_packed reads its strips as they lie, a whole cache line per depth.
//
// Bit-identical to the packed path of gemm.cc: each element of C is the same chain of FMAs in k
// order, restarted every `depth_block` depths and added to the running sum, then the same
// epilogue (bias, pre, activation) in the same order. Tiles are columns only, so the thread
// count changes nothing either.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_GEMM_FEW_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_GEMM_FEW_ROWS_INL_H_
#undef TREPRO_GEMM_FEW_ROWS_INL_H_
#else
#define TREPRO_GEMM_FEW_ROWS_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "optimized/cpu/activation-inl.h"
#include "optimized/cpu/gemm.h"
#include "optimized/cpu/gemm_transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

#ifdef TREPRO_GEMM_PACK_TRANSPOSE
// Rows of A up to which gemm_few_rows runs: its accumulators (one 8-float vector per row) and the
// eight transposed columns stay in registers.
constexpr std::size_t kFewRows = 8;
static_assert(kFewRows == 8, "gemm_few_rows dispatches 1 .. 8 rows");

// Whether `g` takes the few-rows path: few rows, and B's columns contiguous (w viewed transposed).
inline bool few_rows_problem(const GemmProblem& g) { return g.m <= kFewRows && g.b.row_stride == 1; }

// The epilogue of the packed micro-kernel on one row of 8 sums: + bias, pre, activation, through
// a full-width vector (the activations take the target's vectors).
template <Activation kAct>
HWY_INLINE Vec8 few_rows_epilogue(Vec8 value, const float* bias, float* pre, std::size_t cols) {
  const Tag8 d8;
  constexpr std::size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN float stage[kMaxLanes > 8 ? kMaxLanes : 8] = {};
  if (bias != nullptr) {
    for (std::size_t c = 0; c < cols; ++c) stage[c] = bias[c];
    value = hn::Add(value, hn::Load(d8, stage));
  }
  hn::Store(value, d8, stage);
  if (pre != nullptr) std::copy(stage, stage + cols, pre);
  if constexpr (kAct != Activation::none) {
    const FloatTag d;
    hn::Store(activation_value<kAct>(d, hn::Load(d, stage)), d, stage);
    value = hn::Load(d8, stage);
  }
  return value;
}

// Sums of one depth block, added as gemm_rows adds them: to the previous blocks' sums, or to C
// (accumulate), or as they are.
template <std::size_t kRows>
HWY_INLINE void add_depth_block(const GemmProblem& g, std::size_t pb, std::size_t j, std::size_t cols,
                                const Vec8* acc, Vec8* value) {
  const Tag8 d8;
  for (std::size_t i = 0; i < kRows; ++i) {
    if (pb > 0) {
      value[i] = hn::Add(value[i], acc[i]);
    } else if (g.accumulate) {
      HWY_ALIGN float old[8] = {};
      std::copy(g.c + i * g.ldc + j, g.c + i * g.ldc + j + cols, old);
      value[i] = hn::Add(hn::Load(d8, old), acc[i]);
    } else {
      value[i] = acc[i];
    }
  }
}

// C [kRows, j .. j + cols) = the epilogue of the rows' complete sums (the sums alone when
// accumulating: they already include C).
template <Activation kAct, std::size_t kRows>
HWY_INLINE void store_rows(const GemmProblem& g, std::size_t j, std::size_t cols, const Vec8* value) {
  const Tag8 d8;
  for (std::size_t i = 0; i < kRows; ++i) {
    Vec8 out = value[i];
    if (!g.accumulate) {
      out = few_rows_epilogue<kAct>(out, g.epilogue.bias != nullptr ? g.epilogue.bias + j : nullptr,
                                    g.epilogue.pre != nullptr ? g.epilogue.pre + i * g.ldc + j : nullptr, cols);
    }
    HWY_ALIGN float row[8];
    hn::Store(out, d8, row);
    std::copy(row, row + cols, g.c + i * g.ldc + j);
  }
}

// C [kRows, n0 .. n1) of `g` (few_rows_problem(g), g.m == kRows); depth_block: the packed path's
// depth block. The row count is a template argument so that the accumulators live in registers.
template <Activation kAct, std::size_t kRows>
void gemm_rows(const GemmProblem& g, std::size_t n0, std::size_t n1, std::size_t depth_block) {
  const Tag8 d8;
  constexpr std::size_t m = kRows;
  const std::size_t depth_blocks = std::max<std::size_t>(1, (g.k + depth_block - 1) / depth_block);
  const auto a_at = [&](std::size_t i, std::size_t k) {
    return g.a.data[static_cast<std::int64_t>(i) * g.a.row_stride + static_cast<std::int64_t>(k) * g.a.col_stride];
  };
  for (std::size_t j = n0; j < n1; j += 8) {
    const std::size_t cols = std::min<std::size_t>(8, n1 - j);
    // Columns past the edge repeat the last one; their sums are computed and dropped.
    const float* line[8];
    for (std::size_t c = 0; c < 8; ++c) {
      line[c] = g.b.data + static_cast<std::int64_t>(j + std::min(c, cols - 1)) * g.b.col_stride;
    }
    Vec8 value[kRows];
    for (std::size_t pb = 0; pb < depth_blocks; ++pb) {
      const std::size_t p0 = pb * depth_block, kc = std::min(depth_block, g.k - p0);
      Vec8 acc[kRows];
      for (std::size_t i = 0; i < m; ++i) acc[i] = hn::Zero(d8);
      std::size_t k = 0;
      for (; k + 8 <= kc; k += 8) {
        // The next 8 columns' weights, the same depths: the loads of w are what this loop waits
        // for (w is read once per call, and the vocabulary projection's is larger than L2).
        if (k % 16 == 0) {
          for (std::size_t c = 0; c < 8; ++c) hwy::Prefetch(line[c] + 8 * g.b.col_stride + p0 + k);
        }
        Vec8 b_rows[8];  // b_rows[t] = B(p0 + k + t, j .. j + 7)
        transpose_8x8(line, p0 + k, b_rows);
        for (std::size_t t = 0; t < 8; ++t) {
          for (std::size_t i = 0; i < m; ++i) acc[i] = hn::MulAdd(hn::Set(d8, a_at(i, p0 + k + t)), b_rows[t], acc[i]);
        }
      }
      for (; k < kc; ++k) {
        HWY_ALIGN float b_row[8];
        for (std::size_t c = 0; c < 8; ++c) b_row[c] = line[c][p0 + k];
        const Vec8 b = hn::Load(d8, b_row);
        for (std::size_t i = 0; i < m; ++i) acc[i] = hn::MulAdd(hn::Set(d8, a_at(i, p0 + k)), b, acc[i]);
      }
      add_depth_block<kRows>(g, pb, j, cols, acc, value);
    }
    store_rows<kAct, kRows>(g, j, cols, value);
  }
}

// gemm_rows on a packed weight (g.b_packed), kBlocks runs of 8 columns at a time: at kBlocks 2,
// the 16 floats of one depth of a strip, one cache line. The same FMAs in the same order as
// gemm_rows, so the same bits. n0 is a multiple of 8 kBlocks, and 8 kBlocks divides the strip
// width, so the columns read lie in one strip (zero past n).
template <Activation kAct, std::size_t kRows, std::size_t kBlocks>
void gemm_rows_packed(const GemmProblem& g, std::size_t n0, std::size_t n1, std::size_t depth_block) {
  const Tag8 d8;
  const std::size_t nr = g.b_strip_width, npad = padded_width(g.n, nr);
  const std::size_t depth_blocks = std::max<std::size_t>(1, (g.k + depth_block - 1) / depth_block);
  for (std::size_t j = n0; j < n1; j += 8 * kBlocks) {
    Vec8 value[kBlocks][kRows];
    for (std::size_t pb = 0; pb < depth_blocks; ++pb) {
      const std::size_t p0 = pb * depth_block, kc = std::min(depth_block, g.k - p0);
      const float* strip = g.b_packed + p0 * npad + j / nr * nr * kc + j % nr;
      const float* a = g.a.data + static_cast<std::int64_t>(p0) * g.a.col_stride;
      Vec8 acc[kBlocks][kRows];
      for (std::size_t v = 0; v < kBlocks; ++v) {
        for (std::size_t i = 0; i < kRows; ++i) acc[v][i] = hn::Zero(d8);
      }
      for (std::size_t k = 0; k < kc; ++k) {
        Vec8 b[kBlocks];
        for (std::size_t v = 0; v < kBlocks; ++v) b[v] = hn::LoadU(d8, strip + k * nr + 8 * v);
        for (std::size_t i = 0; i < kRows; ++i) {
          const Vec8 x = hn::Set(d8, a[static_cast<std::int64_t>(i) * g.a.row_stride + static_cast<std::int64_t>(k) * g.a.col_stride]);
          for (std::size_t v = 0; v < kBlocks; ++v) acc[v][i] = hn::MulAdd(x, b[v], acc[v][i]);
        }
      }
      for (std::size_t v = 0; v < kBlocks && j + 8 * v < n1; ++v) {
        add_depth_block<kRows>(g, pb, j + 8 * v, std::min<std::size_t>(8, n1 - j - 8 * v), acc[v], value[v]);
      }
    }
    for (std::size_t v = 0; v < kBlocks && j + 8 * v < n1; ++v) {
      store_rows<kAct, kRows>(g, j + 8 * v, std::min<std::size_t>(8, n1 - j - 8 * v), value[v]);
    }
  }
}

// Columns per task of the few-rows split: whole strip rows of a packed weight (16 or 32 columns),
// so that each task starts where gemm_rows_packed's runs of columns start.
constexpr std::size_t kFewRowsColumnBlock = 32;

// Whether kBlocks runs of 8 columns (kBlocks x kRows accumulators, kBlocks loads of B and a
// broadcast) fit the target's vector registers: 16 up to AVX2, 32 with AVX-512.
template <std::size_t kRows, std::size_t kBlocks>
constexpr bool fits_registers() {
  constexpr std::size_t registers = HWY_MAX_BYTES >= 64 ? 32 : 16;
  return (kRows + 1) * kBlocks + 1 <= registers;
}

// As many runs of 8 columns as fit the registers and the strip: the whole strip row when they
// can (AVX-512's strips are 32 wide: two cache lines of each depth, read once, where runs of 16
// read every other line and came back for the rest, 17% slower than AVX2 at batch-1 decoding).
template <Activation kAct, std::size_t kRows>
void gemm_rows_any(const GemmProblem& g, std::size_t n0, std::size_t n1, std::size_t depth_block) {
  if (g.b_packed == nullptr) return gemm_rows<kAct, kRows>(g, n0, n1, depth_block);
  if constexpr (fits_registers<kRows, 4>()) {
    if (g.b_strip_width % 32 == 0) return gemm_rows_packed<kAct, kRows, 4>(g, n0, n1, depth_block);
  }
  if constexpr (fits_registers<kRows, 2>()) {
    if (g.b_strip_width % 16 == 0) return gemm_rows_packed<kAct, kRows, 2>(g, n0, n1, depth_block);
  }
  gemm_rows_packed<kAct, kRows, 1>(g, n0, n1, depth_block);
}

template <Activation kAct>
void gemm_few_rows(const GemmProblem& g, std::size_t n0, std::size_t n1, std::size_t depth_block) {
  switch (g.m) {
    case 1: return gemm_rows_any<kAct, 1>(g, n0, n1, depth_block);
    case 2: return gemm_rows_any<kAct, 2>(g, n0, n1, depth_block);
    case 3: return gemm_rows_any<kAct, 3>(g, n0, n1, depth_block);
    case 4: return gemm_rows_any<kAct, 4>(g, n0, n1, depth_block);
    case 5: return gemm_rows_any<kAct, 5>(g, n0, n1, depth_block);
    case 6: return gemm_rows_any<kAct, 6>(g, n0, n1, depth_block);
    case 7: return gemm_rows_any<kAct, 7>(g, n0, n1, depth_block);
    default: return gemm_rows_any<kAct, kFewRows>(g, n0, n1, depth_block);
  }
}
#endif

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
