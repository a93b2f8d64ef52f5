#include "experiments/training/progress.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace trepro {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  char text[32];
  const auto whole = static_cast<long long>(seconds);
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.1fs", seconds);
  } else if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", whole / 60, whole % 60);
  } else if (seconds < 86400) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", whole / 3600, whole / 60 % 60);
  } else {
    std::snprintf(text, sizeof text, "%lldd%02lldh", whole / 86400, whole / 3600 % 24);
  }
  return text;
}

std::string format_step_line(const ProgressLine& p) {
  std::ostringstream line;
  line << "step " << p.result.step << "/" << p.total_steps << "  epoch " << p.epoch << "  loss " << std::fixed
       << std::setprecision(4) << p.result.loss << "  lr " << std::scientific << std::setprecision(2)
       << p.result.learning_rate << "  |g| " << std::fixed << std::setprecision(3) << p.result.grad_norm
       << "  tok/s " << std::setprecision(0) << p.tokens_per_second << "  elapsed " << format_duration(p.elapsed_seconds)
       << "  eta " << format_duration(p.eta_seconds);
  return line.str();
}

namespace {

// The reason is read at once: errno is overwritten by the next system call (isatty sets ENOTTY).
std::ofstream open_for_appending(const std::string& path) {
  std::ofstream log(path, std::ios::app);
  if (!log) throw std::runtime_error(path + ": cannot open for appending: " + std::strerror(errno));
  return log;
}

}  // namespace

Progress::Progress(const std::string& log_path, std::int64_t log_every)
    : log_(open_for_appending(log_path)), log_every_(log_every), terminal_(isatty(STDOUT_FILENO) != 0) {}

void Progress::step(const ProgressLine& line) {
  const std::string text = format_step_line(line);
  const bool plain = line.result.step % log_every_ == 0;
  if (plain) log_ << text << std::endl;
  if (terminal_) {
    std::cout << "\r\033[K" << text << std::flush;
    line_open_ = true;
  } else if (plain) {
    std::cout << text << std::endl;
  }
}

void Progress::note(const std::string& text) {
  if (line_open_) std::cout << "\n";
  line_open_ = false;
  std::cout << text << std::endl;
  log_ << text << std::endl;
}

}  // namespace trepro
