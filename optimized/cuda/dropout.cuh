// The dropout kernel, shared by dropout.cu and add_dropout.cu:
//   out_i = keep_i in_i / (1 - p) (+ residual_i when residual is not null)
#pragma once

#include "core/backend.h"

namespace trepro::cuda {

void launch_dropout(const float* in, const float* residual, const DropoutSpec& dropout, float* out, std::int64_t n,
                    cudaStream_t stream, const char* op);

}  // namespace trepro::cuda
