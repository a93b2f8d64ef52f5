// The 8 x 8 float transpose of the GEMM's packing (gemm.cc) and of its few-rows path
// (gemm_few_rows-inl.h), compiled once per Highway target; defines TREPRO_GEMM_PACK_TRANSPOSE
// on the targets that have it.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(TREPRO_GEMM_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TREPRO_GEMM_TRANSPOSE_INL_H_
#undef TREPRO_GEMM_TRANSPOSE_INL_H_
#else
#define TREPRO_GEMM_TRANSPOSE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include <hwy/highway.h>

#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

#undef TREPRO_GEMM_PACK_TRANSPOSE
// The packing transposes run on 8-float (256-bit) vectors on every x86 target from AVX2 up: with
// AVX-512 the vectors of the micro-kernel are 16 floats, but an 8 x 8 transpose in 256-bit
// registers is what packing needs (the scalar copy it replaces made avx3 pack 3x slower).
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define TREPRO_GEMM_PACK_TRANSPOSE 1
using Tag8 = hn::FixedTag<float, 8>;
using Vec8 = hn::Vec<Tag8>;

// out[k][i] = line i[k0 + k] for k, i < 8: eight 8-float runs of eight lines (rows of A, columns
// of B) become eight 8-float slices across the lines, through the 8 x 8 transpose of 32-bit
// lanes (unpack within 128-bit halves, 64-bit unpack, swap of halves).
HWY_INLINE void transpose_8x8(const float* const* line, std::size_t k0, Vec8 out[8]) {
  const Tag8 d;
  const hn::Repartition<std::uint64_t, Tag8> d64;
  Vec8 r[8], t[8];
  for (std::size_t i = 0; i < 8; ++i) r[i] = hn::LoadU(d, line[i] + k0);
  for (std::size_t i = 0; i < 8; i += 2) {
    t[i] = hn::InterleaveLower(d, r[i], r[i + 1]);      // r_i,k r_i+1,k for k = 0, 1 | 4, 5
    t[i + 1] = hn::InterleaveUpper(d, r[i], r[i + 1]);  // k = 2, 3 | 6, 7
  }
  for (std::size_t g = 0; g < 8; g += 4) {  // rows g .. g + 3 of k = 0 | 4, 1 | 5, 2 | 6, 3 | 7
    r[g] = hn::BitCast(d, hn::InterleaveLower(d64, hn::BitCast(d64, t[g]), hn::BitCast(d64, t[g + 2])));
    r[g + 1] = hn::BitCast(d, hn::InterleaveUpper(d64, hn::BitCast(d64, t[g]), hn::BitCast(d64, t[g + 2])));
    r[g + 2] = hn::BitCast(d, hn::InterleaveLower(d64, hn::BitCast(d64, t[g + 1]), hn::BitCast(d64, t[g + 3])));
    r[g + 3] = hn::BitCast(d, hn::InterleaveUpper(d64, hn::BitCast(d64, t[g + 1]), hn::BitCast(d64, t[g + 3])));
  }
  for (std::size_t k = 0; k < 4; ++k) {
    out[k] = hn::ConcatLowerLower(d, r[4 + k], r[k]);
    out[k + 4] = hn::ConcatUpperUpper(d, r[4 + k], r[k]);
  }
}
#endif

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
