// Training progress for people: on a terminal one line rewritten in place every step and kept
// at every validation; otherwise (nohup, CI) and in RUN/train.log, plain lines every
// `log_every` steps and at every validation, checkpoint and note.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "model/trainer.h"

namespace trepro {

struct ProgressLine {
  StepResult result;
  std::int64_t epoch = 1;
  std::int64_t total_steps = 0;   // the estimated last step
  double elapsed_seconds = 0.0;   // this session
  double tokens_per_second = 0.0; // target tokens, this session
  double eta_seconds = 0.0;
};

class Progress {
 public:
  // Appends to `log_path` (a resumed run continues the same log).
  Progress(const std::string& log_path, std::int64_t log_every);
  void step(const ProgressLine& line);
  // A line that always appears on the terminal and in the log (validation, checkpoints, notes).
  void note(const std::string& text);

 private:
  std::ofstream log_;
  std::int64_t log_every_;
  bool terminal_;
  bool line_open_ = false;  // the terminal's current line is a step line to rewrite
};

// "12.3s", "3m05s", "1h02m", "4d07h".
std::string format_duration(double seconds);
std::string format_step_line(const ProgressLine& line);

}  // namespace trepro
