#include "experiments/data/rate_progress.h"

#include <cstdio>
#include <utility>

#include "experiments/training/progress.h"

namespace trepro {

RateProgress::RateProgress(std::string what, std::string unit, Note note, double every_seconds)
    : what_(std::move(what)), unit_(std::move(unit)), note_(std::move(note)), every_seconds_(every_seconds) {}

double RateProgress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void RateProgress::update(std::int64_t count, double fraction_done) {
  const double seconds = elapsed();
  if (seconds - last_note_ < every_seconds_) return;
  last_note_ = seconds;
  char line[160];
  const double rate = static_cast<double>(count) / seconds;
  const double eta = fraction_done > 0 ? seconds * (1.0 - fraction_done) / fraction_done : 0.0;
  std::snprintf(line, sizeof line, ": %lld %s, %.0f %s/s, %.0f%%, ETA ", static_cast<long long>(count),
                unit_.c_str(), rate, unit_.c_str(), 100.0 * fraction_done);
  note_(what_ + line + (fraction_done > 0 ? format_duration(eta) : std::string("?")));
}

void RateProgress::finish(std::int64_t count) {
  const double seconds = elapsed();
  char line[160];
  std::snprintf(line, sizeof line, ": %lld %s in ", static_cast<long long>(count), unit_.c_str());
  char rate[64];
  std::snprintf(rate, sizeof rate, " (%.0f %s/s)", seconds > 0 ? static_cast<double>(count) / seconds : 0.0,
                unit_.c_str());
  note_(what_ + line + format_duration(seconds) + rate);
}

}  // namespace trepro
