// The chunked dropout map of dropout.cc, shared with add_dropout.cc (the Pre-LN residual).
#pragma once

#include <cstdint>

#include "core/backend.h"
#include "optimized/cpu/cpu_context.h"

namespace trepro::cpu {

// Elements per chunk: the chunk's factors (16 KiB) stay in L1 while they are applied.
inline constexpr std::int64_t kDropoutChunk = 4096;

// out[i] = x[i] f_i (+ residual[i] when not null), f_i the inverted-dropout factor of element i
// (1 when dropout is off), over n elements split in chunks over the pool; out may alias x or
// residual.
void dropout_chunks(const CpuContext& ctx, const DropoutSpec& dropout, const float* x, const float* residual,
                    float* out, std::int64_t n);

}  // namespace trepro::cpu
