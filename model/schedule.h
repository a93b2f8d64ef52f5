// The learning-rate schedules of train.schedule (core/config.h): the rate of each optimizer step.
#pragma once

#include <cstdint>

#include "core/config.h"

namespace trepro {

// The learning rate at `step` (counted from 1; step 0 throws std::invalid_argument):
//   noam:         factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
//   inverse_sqrt: lr * min(step / warmup, sqrt(warmup / step))      (fairseq)
//   constant:     lr * min(1, step / warmup), or lr from step 1 when warmup is 0
double learning_rate(const Config& config, std::int64_t step);

}  // namespace trepro
