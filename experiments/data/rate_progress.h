// Progress of the long data steps (sampling, binarizing a corpus): a line with the count, the
// rate and the ETA every few seconds, e.g.
//   "binarizing train: 1200000 pairs, 41000 pairs/s, 27%, ETA 1m47s".
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace trepro {

class RateProgress {
 public:
  using Note = std::function<void(const std::string&)>;
  RateProgress(std::string what, std::string unit, Note note, double every_seconds = 5.0);
  // `fraction_done` in [0, 1] (bytes read, say) gives the ETA.
  void update(std::int64_t count, double fraction_done);
  // The closing line: the count, the rate and the time taken.
  void finish(std::int64_t count);

 private:
  double elapsed() const;

  std::string what_, unit_;
  Note note_;
  double every_seconds_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_note_ = 0.0;
};

}  // namespace trepro
