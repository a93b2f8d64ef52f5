// float <-> bfloat16 conversion of the bf16 precision mode (train.precision "bf16"),
// __host__ __device__ (a core type, like core/dtype.h) so that the cuda conversion kernel, the host tests
// (conformance/cuda/bf16_math_test.cc) and the host emulation in `trepro compare-kernels` all run
// this one definition.
//
// bfloat16 is the top half of a float32: sign, the same 8-bit exponent, 7 stored mantissa bits
// (8 significant bits, unit roundoff 2^-8). Rounding keeps the top 16 bits rounded to nearest,
// ties to even, which is integer arithmetic on the bit pattern: adding 0x7FFF plus the lowest
// kept bit carries into the kept half exactly when the dropped half is above the halfway point,
// or at it with an odd kept half. The carry handles every case: subnormals round within the
// subnormals (or up to the smallest normal), the largest finite values round up to Inf, and
// Inf stays Inf. Only NaN needs care: its payload may live in the dropped bits alone (a
// signaling NaN like 0x7F800001 would truncate to Inf), so a NaN keeps its sign and becomes
// quiet by setting the top mantissa bit.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.h"

namespace trepro {

using Bf16Bits = std::uint16_t;

TR_HOST_DEVICE inline std::uint32_t float_bits(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

TR_HOST_DEVICE inline Bf16Bits float_to_bf16(float x) {
  const std::uint32_t bits = float_bits(x);
  const bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  if (nan) return static_cast<Bf16Bits>((bits >> 16) | 0x0040u);
  const std::uint32_t lowest_kept_bit = (bits >> 16) & 1u;
  return static_cast<Bf16Bits>((bits + 0x7FFFu + lowest_kept_bit) >> 16);
}

// Exact: every bfloat16 is a float32.
TR_HOST_DEVICE inline float bf16_to_float(Bf16Bits b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// The value a bf16 GEMM operand takes: x rounded to bfloat16, as a float.
TR_HOST_DEVICE inline float round_to_bf16(float x) { return bf16_to_float(float_to_bf16(x)); }

}  // namespace trepro
