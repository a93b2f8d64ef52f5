#include "model/schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trepro {

double learning_rate(const Config& config, std::int64_t step) {
  if (step < 1) {
    throw std::invalid_argument("learning_rate: step is counted from 1, got " + std::to_string(step));
  }
  const ScheduleConfig& schedule = config.train.schedule;
  const auto s = static_cast<double>(step);
  const auto warmup = static_cast<double>(schedule.warmup);
  switch (schedule.kind) {
    case ScheduleKind::noam:
      return schedule.factor / std::sqrt(static_cast<double>(config.model.d_model)) *
             std::min(1.0 / std::sqrt(s), s * std::pow(warmup, -1.5));
    case ScheduleKind::inverse_sqrt:
      return config.train.optimizer.lr * std::min(s / warmup, std::sqrt(warmup / s));
    case ScheduleKind::constant:  // warmup 0: the rate from step 1
      return config.train.optimizer.lr * (schedule.warmup > 0 ? std::min(1.0, s / warmup) : 1.0);
  }
  throw std::invalid_argument("learning_rate: unknown schedule kind");
}

}  // namespace trepro
