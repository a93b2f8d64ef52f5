#include "optimized/cpu/dispatch.h"

#include <cctype>

namespace trepro::cpu {

std::vector<std::int64_t> compiled_targets() {
  // Bits are ordered best first (lower bit = better target), and SupportedAndGeneratedTargets
  // lists them from the lowest bit up. HWY_TARGETS here is the optimized library's (this file
  // is compiled with its flags).
  return hwy::SupportedAndGeneratedTargets();
}

std::string target_name(std::int64_t target) {
  std::string name = hwy::TargetName(target);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::int64_t target_from_name(const std::string& name) {
  std::string names;
  for (std::int64_t target : compiled_targets()) {
    if (target_name(target) == name) return target;
    names += (names.empty() ? "" : ", ") + target_name(target);
  }
  throw std::invalid_argument("unknown CPU target \"" + name + "\": compiled and supported here are " + names);
}

}  // namespace trepro::cpu
