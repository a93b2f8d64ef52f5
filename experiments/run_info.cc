#include "experiments/run_info.h"

#include <sys/resource.h>

#include <array>
#include <chrono>
#include <ctime>
#include <fstream>
#include <map>

#include "build_commit.h"

namespace trepro {
namespace {

std::string trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

std::string git_commit() { return TREPRO_BUILD_COMMIT; }

std::string compiler_version() {
#if defined(__clang__)
  return std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::int64_t peak_memory_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(cpuinfo, line) && !line.empty();) {  // the first processor
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    fields[trimmed(line.substr(0, colon))] = trimmed(line.substr(colon + 1));
  }
  if (fields["model name"].empty()) return "unknown";
  return fields["model name"] + " (family " + fields["cpu family"] + ", model " + fields["model"] + ", stepping " +
         fields["stepping"] + ")";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text.data();
}

}  // namespace trepro
