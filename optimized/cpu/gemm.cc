// The packed GEMM of the optimized CPU backend (gemm.h), once per Highway target.
//
// Loop order (Goto/BLIS), per task (a block of C's rows or columns, one per thread):
//   for jc: columns of C in panels of kNc          B panel [kKc x kNc] packed, stays in L3
//     for pc: depth in blocks of kKc
//       for ic: rows of C in blocks of kMc         A block [kMc x kKc] packed, stays in L2
//         for jr: strips of kNr columns            B strip [kKc x kNr], stays in L1
//           for ir: strips of kMr rows             micro-kernel: kMr x kNr tile in registers
// The micro-kernel reads its B strip from L1 and streams the A strip (kMr floats per k) from
// L2. The other order (ir outer) streamed B strips from a 512 KiB panel, the whole L2 of a
// Zen 3 core, which the A block and C evicted on every pass: 10% slower.
// Packing turns any strides into unit-stride strips (zero-padded past the edges), so the
// micro-kernel only ever does: broadcast a(r, k), load b(k, 0..kNr), kMr x kNv FMAs.
//
// Determinism: element (i, j) is the sum over depth blocks in order, each block summed by one
// accumulator lane in k order; a tile at the edge runs the same lanes on zero padding. So the
// bits do not depend on the partition, the thread count or where a tile falls.
#include "optimized/cpu/gemm.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/gemm.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "optimized/cpu/activation-inl.h"
#include "optimized/cpu/gemm_few_rows-inl.h"
#include "optimized/cpu/gemm_transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// 6 x 2 vectors: 12 accumulators + 2 B vectors + 1 broadcast fit the 16 registers of AVX2/SSE4
// (AVX-512 has 32, but its FMA latency x throughput is covered by 12 independent chains too).
constexpr std::size_t kMr = 6;
constexpr std::size_t kNv = 2;
// B strip kKc x kNr = 16 KiB (AVX2: half of L1d); A block kMc x kKc = 144 KiB (L2, 512 KiB per
// core, with room for C's rows); B panel kKc x kNc = 2 MiB (L3, 32 MiB shared). The blocking
// changes which tiles share a cache, never the order of a sum: results are bit-identical.
constexpr std::size_t kKc = 256;
constexpr std::size_t kNc = 2048;
constexpr std::size_t kMc = 24 * kMr;
// What pack_a writes past its strips (8-float stores of kMr-float rows).
constexpr std::size_t kPackASlack = 8 - kMr;

#ifdef TREPRO_GEMM_PACK_TRANSPOSE
// Depths [0, k_end) of one full strip of kMr rows of A (k_end: the largest multiple of 8 <= kc
// for a row-major A, kc for a transposed view), 8 floats per store in ascending k: each store
// spills 8 - kMr floats into the next depth's slot, which the next store overwrites; the last
// spills past the strip (into the next strip, written later, or the buffer's kPackASlack).
// `overread`: a transposed view may load the 8 - kMr elements after the strip's rows (they
// exist: the strip is not A's last).
std::size_t pack_a_strip(const StridedMatrix& a, const float* first, std::size_t kc, bool overread, float* strip) {
  const Tag8 d;
  if (a.col_stride == 1) {  // row-major A (x, dpre): 8 x 8 transposes of the strip's rows
    const float* line[8];
    for (std::size_t i = 0; i < 8; ++i) line[i] = first + static_cast<std::int64_t>(std::min(i, kMr - 1)) * a.row_stride;
    std::size_t k0 = 0;
    for (; k0 + 8 <= kc; k0 += 8) {
      Vec8 out[8];
      transpose_8x8(line, k0, out);
      for (std::size_t k = 0; k < 8; ++k) hn::StoreU(out[k], d, strip + (k0 + k) * kMr);
    }
    return k0;
  }
  if (a.row_stride == 1 && overread) {  // A = dpre^T: each depth's kMr rows are contiguous
    for (std::size_t k = 0; k < kc; ++k) {
      hn::StoreU(hn::LoadU(d, first + static_cast<std::int64_t>(k) * a.col_stride), d, strip + k * kMr);
    }
    return kc;
  }
  return 0;
}
#endif

// dst: strips of kMr rows of A[i0 .. i0 + mc) x [p0 .. p0 + kc): strip s holds, for each k,
// kMr consecutive floats (rows past mc are zero). A has m rows; dst has kPackASlack floats
// beyond the strips.
void pack_a(const StridedMatrix& a, std::size_t m, std::size_t i0, std::size_t mc, std::size_t p0, std::size_t kc,
            float* dst) {
  for (std::size_t s = 0; s < mc; s += kMr) {
    const std::size_t rows = std::min(kMr, mc - s);
    float* strip = dst + s * kc;
    const float* first = a.data + static_cast<std::int64_t>(p0) * a.col_stride +
                         static_cast<std::int64_t>(i0 + s) * a.row_stride;
    std::size_t k0 = 0;
#ifdef TREPRO_GEMM_PACK_TRANSPOSE
    if (rows == kMr) k0 = pack_a_strip(a, first, kc, i0 + s + 8 <= m, strip);
#else
    (void)m;
#endif
    for (std::size_t k = k0; k < kc; ++k) {
      const float* src = first + static_cast<std::int64_t>(k) * a.col_stride;
      float* to = strip + k * kMr;
      for (std::size_t r = 0; r < rows; ++r) to[r] = src[static_cast<std::int64_t>(r) * a.row_stride];
      for (std::size_t r = rows; r < kMr; ++r) to[r] = 0.0f;
    }
  }
}

// Depths [k0, kc) of the strip's nr columns (unit row stride), one float at a time.
void pack_columns(const float* const* column, std::size_t k0, std::size_t kc, std::size_t nr, float* strip) {
  for (std::size_t c = 0; c < nr; ++c) {
    for (std::size_t k = k0; k < kc; ++k) strip[k * nr + c] = column[c][k];
  }
}

// dst: strips of nr columns of B[p0 .. p0 + kc) x [j0 .. j0 + nc): strip t holds, for each k,
// nr consecutive floats (columns past nc are zero). Reads along B's unit stride.
void pack_b(const StridedMatrix& b, std::size_t p0, std::size_t kc, std::size_t j0, std::size_t nc, std::size_t nr,
            float* dst) {
  for (std::size_t t = 0; t < nc; t += nr) {
    const std::size_t cols = std::min(nr, nc - t);
    float* strip = dst + t * kc;
    if (b.col_stride == 1) {
      for (std::size_t k = 0; k < kc; ++k) {
        const float* src = b.data + static_cast<std::int64_t>(p0 + k) * b.row_stride + static_cast<std::int64_t>(j0 + t);
        float* to = strip + k * nr;
        for (std::size_t c = 0; c < cols; ++c) to[c] = src[c];
        for (std::size_t c = cols; c < nr; ++c) to[c] = 0.0f;
      }
    } else if (b.row_stride == 1 && cols == nr) {
      // B = w viewed transposed (linear forward): each column is a contiguous row of w.
      constexpr std::size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
      const float* column[kNv * kMaxLanes];
      for (std::size_t c = 0; c < nr; ++c) {
        column[c] = b.data + static_cast<std::int64_t>(j0 + t + c) * b.col_stride + static_cast<std::int64_t>(p0);
      }
      std::size_t k0 = 0;
#ifdef TREPRO_GEMM_PACK_TRANSPOSE
      const Tag8 d;
      for (; k0 + 8 <= kc; k0 += 8) {
        for (std::size_t c = 0; c < nr; c += 8) {
          Vec8 out[8];
          transpose_8x8(column + c, k0, out);
          for (std::size_t k = 0; k < 8; ++k) hn::StoreU(out[k], d, strip + (k0 + k) * nr + c);
        }
      }
#endif
      pack_columns(column, k0, kc, nr, strip);
    } else {
      for (std::size_t c = 0; c < nr; ++c) {
        if (c >= cols) {
          for (std::size_t k = 0; k < kc; ++k) strip[k * nr + c] = 0.0f;
          continue;
        }
        const float* src = b.data + static_cast<std::int64_t>(j0 + t + c) * b.col_stride +
                           static_cast<std::int64_t>(p0) * b.row_stride;
        for (std::size_t k = 0; k < kc; ++k) strip[k * nr + c] = src[static_cast<std::int64_t>(k) * b.row_stride];
      }
    }
  }
}

// One kMr x kNr tile of C from an A strip and a B strip. `add` adds C's current value (a later
// depth block, or accumulate); `last` applies the epilogue. rows x cols is the valid part: an
// edge tile goes through a padded copy with the same vector arithmetic.
template <Activation kAct>
HWY_INLINE void micro_kernel(std::size_t kc, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp, float* c,
                             std::size_t ldc, std::size_t rows, std::size_t cols, bool add, bool last,
                             const float* bias, float* pre) {
  const FloatTag d;
  const std::size_t lanes = hn::Lanes(d), nr = kNv * lanes;
  FloatVec acc[kMr][kNv];
  for (std::size_t r = 0; r < kMr; ++r) {
    for (std::size_t v = 0; v < kNv; ++v) acc[r][v] = hn::Zero(d);
  }
  // Fetch the C tile while the FMAs run: it is read (add) or written once the sums are done.
  for (std::size_t r = 0; r < rows; ++r) hwy::Prefetch(c + r * ldc);
#pragma GCC unroll 4
  for (std::size_t k = 0; k < kc; ++k) {
    FloatVec bv[kNv];
    for (std::size_t v = 0; v < kNv; ++v) bv[v] = hn::LoadU(d, bp + k * nr + v * lanes);
    for (std::size_t r = 0; r < kMr; ++r) {
      const auto av = hn::Set(d, ap[k * kMr + r]);
      for (std::size_t v = 0; v < kNv; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
  }

  const bool full = rows == kMr && cols == nr;
  constexpr std::size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN float edge[kMr * kNv * kMaxLanes];
  HWY_ALIGN float edge_pre[kMr * kNv * kMaxLanes];
  HWY_ALIGN float edge_bias[kNv * kMaxLanes];
  float* out = c;
  std::size_t ld = ldc;
  float* pre_out = pre;
  const float* bias_in = bias;
  if (!full) {
    // Stage the valid part of C (and the bias) in padded buffers.
    out = edge, ld = nr, pre_out = pre != nullptr ? edge_pre : nullptr;
    for (std::size_t r = 0; r < kMr; ++r) {
      for (std::size_t j = 0; j < nr; ++j) edge[r * nr + j] = (add && r < rows && j < cols) ? c[r * ldc + j] : 0.0f;
    }
    if (bias != nullptr) {
      for (std::size_t j = 0; j < nr; ++j) edge_bias[j] = j < cols ? bias[j] : 0.0f;
      bias_in = edge_bias;
    }
  }
  for (std::size_t r = 0; r < kMr; ++r) {
    if (full || r < rows) {
      for (std::size_t v = 0; v < kNv; ++v) {
        float* dst = out + r * ld + v * lanes;
        auto value = add ? hn::Add(hn::LoadU(d, dst), acc[r][v]) : acc[r][v];
        if (last) {
          if (bias_in != nullptr) value = hn::Add(value, hn::LoadU(d, bias_in + v * lanes));
          if (pre_out != nullptr) hn::StoreU(value, d, pre_out + r * ld + v * lanes);
          value = activation_value<kAct>(d, value);
        }
        hn::StoreU(value, d, dst);
      }
    }
  }
  if (!full) {
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t j = 0; j < cols; ++j) {
        c[r * ldc + j] = edge[r * nr + j];
        if (pre != nullptr && last) pre[r * ldc + j] = edge_pre[r * nr + j];
      }
    }
  }
}

// C rows [m0, m1) x columns [n0, n1) of the problem, with this worker's packing buffers.
template <Activation kAct>
void gemm_block(const GemmProblem& g, std::size_t m0, std::size_t m1, std::size_t n0, std::size_t n1, float* a_pack,
                float* b_pack) {
  const std::size_t nr = kNv * hn::Lanes(FloatTag());
  const std::size_t depth_blocks = std::max<std::size_t>(1, (g.k + kKc - 1) / kKc);
  for (std::size_t jc = n0; jc < n1; jc += kNc) {
    const std::size_t nc = std::min(kNc, n1 - jc);
    for (std::size_t pb = 0; pb < depth_blocks; ++pb) {
      const std::size_t pc = pb * kKc, kc = std::min(kKc, g.k - pc);
      const bool add = pb > 0 || g.accumulate;
      const bool last = pb + 1 == depth_blocks && !g.accumulate;
      const float* b_panel = b_pack;
      if (g.b_packed != nullptr) {
        b_panel = g.b_packed + pc * padded_width(g.n, nr) + jc * kc;
      } else {
        pack_b(g.b, pc, kc, jc, nc, nr, b_pack);
      }
      for (std::size_t ic = m0; ic < m1; ic += kMc) {
        const std::size_t mc = std::min(kMc, m1 - ic);
        pack_a(g.a, g.m, ic, mc, pc, kc, a_pack);
        for (std::size_t jr = 0; jr < nc; jr += nr) {
          for (std::size_t ir = 0; ir < mc; ir += kMr) {
            const std::size_t row = ic + ir, col = jc + jr;
            float* pre = g.epilogue.pre != nullptr ? g.epilogue.pre + row * g.ldc + col : nullptr;
            const float* bias = g.epilogue.bias != nullptr ? g.epilogue.bias + col : nullptr;
            micro_kernel<kAct>(kc, a_pack + ir * kc, b_panel + jr * kc, g.c + row * g.ldc + col, g.ldc,
                               std::min(kMr, mc - ir), std::min(nr, nc - jr), add, last, bias, pre);
          }
        }
      }
    }
  }
}

// w [n, k] as B = w^T, every depth block packed as pack_b packs it (gemm.h: PackedWeight).
void pack_weight_kernel(const float* w, std::size_t n, std::size_t k, float* dst) {
  const std::size_t nr = kNv * hn::Lanes(FloatTag());
  const StridedMatrix b{w, 1, static_cast<std::int64_t>(k)};
  for (std::size_t pc = 0; pc < k; pc += kKc) pack_b(b, pc, std::min(kKc, k - pc), 0, n, nr, dst + pc * padded_width(n, nr));
}

std::size_t strip_width_kernel() { return kNv * hn::Lanes(FloatTag()); }

// A small product stays on one thread, where a split would cost more than it saves.
std::size_t task_count(const GemmProblem& g, const ThreadPool& pool) {
  const bool small = g.m * g.n * std::max<std::size_t>(g.k, 1) < (std::size_t{1} << 18);
  return small ? 1 : static_cast<std::size_t>(pool.threads());
}

void gemm_kernel(const GemmProblem& g, ThreadPool& pool, Workspace& workspace) {
  const std::size_t nr = kNv * hn::Lanes(FloatTag());
#ifdef TREPRO_GEMM_PACK_TRANSPOSE
  if (few_rows_problem(g)) {
    // Columns in blocks per thread (the split changes no sum).
    constexpr std::size_t kBlock = kFewRowsColumnBlock;
    const std::size_t blocks = (g.n + kBlock - 1) / kBlock;
    const std::size_t tasks = std::min(blocks, task_count(g, pool));
    pool.run(static_cast<int>(tasks), [&](int task) {
      const auto t = static_cast<std::size_t>(task);
      const std::size_t lo = std::min(g.n, blocks * t / tasks * kBlock);
      const std::size_t hi = std::min(g.n, blocks * (t + 1) / tasks * kBlock);
      if (lo >= hi) return;
      with_activation(g.epilogue.act, [&]<Activation kAct>() { gemm_few_rows<kAct>(g, lo, hi, kKc); });
    });
    return;
  }
#endif
  // Split the longer side of C into one block per thread (in whole strips).
  const std::size_t tasks = task_count(g, pool);
  const bool split_rows = g.m / kMr >= g.n / nr;
  const std::size_t unit = split_rows ? kMr : nr, extent = split_rows ? g.m : g.n;
  const std::size_t units = (extent + unit - 1) / unit;
  pool.run(static_cast<int>(tasks), [&](int task) {
    const auto t = static_cast<std::size_t>(task);
    const std::size_t lo = std::min(extent, units * t / tasks * unit);
    const std::size_t hi = std::min(extent, units * (t + 1) / tasks * unit);
    if (lo >= hi) return;
    const int worker = task % pool.threads();
    float* a_pack = workspace.floats(worker, Slot::gemm_a, kMc * kKc + kPackASlack);
    float* b_pack = workspace.floats(worker, Slot::gemm_b, kKc * kNc);
    with_activation(g.epilogue.act, [&]<Activation kAct>() {
      if (split_rows) {
        gemm_block<kAct>(g, lo, hi, 0, g.n, a_pack, b_pack);
      } else {
        gemm_block<kAct>(g, 0, g.m, lo, hi, a_pack, b_pack);
      }
    });
  });
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(gemm_kernel);
HWY_EXPORT(pack_weight_kernel);
HWY_EXPORT(strip_width_kernel);

PackedWeight pack_weight(std::int64_t target, const float* w, std::int64_t n, std::int64_t k) {
  PackedWeight packed{target, n, k, for_target(HWY_DISPATCH_TABLE(strip_width_kernel), target)(), {}};
  const auto rows = static_cast<std::size_t>(n), depth = static_cast<std::size_t>(k);
  packed.data.resize(depth * padded_width(rows, packed.strip_width));
  for_target(HWY_DISPATCH_TABLE(pack_weight_kernel), target)(w, rows, depth, packed.data.data());
  return packed;
}

void gemm(const CpuContext& ctx, std::int64_t m, std::int64_t n, std::int64_t k, StridedMatrix a, StridedMatrix b,
          float* c, std::int64_t ldc, bool accumulate, const GemmEpilogue& epilogue, const PackedWeight* packed) {
  if (m <= 0 || n <= 0) return;
  GemmProblem g{static_cast<std::size_t>(m), static_cast<std::size_t>(n), static_cast<std::size_t>(k), a, b, c,
                static_cast<std::size_t>(ldc), accumulate, epilogue};
  if (packed != nullptr && k > 0) {
    if (packed->target != ctx.target || packed->n != n || packed->k != k) {
      throw std::logic_error("gemm: the packed weight is " + std::to_string(packed->n) + " x " +
                             std::to_string(packed->k) + " for target " + target_name(packed->target) + ", not " +
                             std::to_string(n) + " x " + std::to_string(k) + " for " + target_name(ctx.target));
    }
    g.b_packed = packed->data.data();
    g.b_strip_width = packed->strip_width;
  }
  for_target(HWY_DISPATCH_TABLE(gemm_kernel), ctx.target)(g, ctx.pool, ctx.workspace);
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
