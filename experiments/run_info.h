// Facts about this build and process that every report records.
#pragma once

#include <cstdint>
#include <string>

namespace trepro {

// The commit this binary was built from (`git rev-parse HEAD` at build time, with "-dirty" when
// tracked files had uncommitted changes), or "unknown" when the tree was not a git checkout.
std::string git_commit();
// "GCC 12.2.0" etc.
std::string compiler_version();
// Peak resident memory of this process so far (getrusage), in bytes.
std::int64_t peak_memory_bytes();
// "<model name> (family F, model M, stepping S)" of the first processor in /proc/cpuinfo, or
// "unknown": a cloud VM's model name can be a bare "AMD EPYC" for Zen 1 to Zen 4 alike, whose
// training speeds differ more than 3x, and the numbers tell them apart.
std::string cpu_model();
// UTC, ISO 8601.
std::string utc_now();

}  // namespace trepro
