// Whether the process was stopped (SIGSTOP, SIGTSTP) and continued while a step ran. The wall
// time of such a step holds the whole pause, so the run's timings leave it out
// (run_timings): pausing a training to free the cores no longer inflates its train_seconds.
#pragma once

#include <cstdint>

namespace trepro {

class StopCounter {
 public:
  // Counts SIGCONT from here on. The handler is installed once per process, and only where the
  // program left SIGCONT to its default: a program with a handler of its own keeps it, and
  // counting() says that no stop will be seen.
  StopCounter();
  bool counting() const { return counting_; }
  // Continues since the process started counting; a step was stopped when this changed.
  std::uint64_t continues() const;

 private:
  bool counting_ = false;
};

}  // namespace trepro
