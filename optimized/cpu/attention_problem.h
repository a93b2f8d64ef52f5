// What the per-target attention kernels of attention.cc receive besides the problem
// (core/attention_problem.h, shared with the cuda backend): backward's inputs and outputs.
#pragma once

#include <cstdint>

#include "core/attention_problem.h"

namespace trepro::cpu {

// What backward reads besides the problem, and writes.
struct AttentionGradients {
  const float* out;
  const float* lse;
  const float* dout;
  float* dq;
  float* dk;
  float* dv;
};

}  // namespace trepro::cpu
