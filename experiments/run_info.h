// Facts about this build and process that every report records.
#pragma once

#include <cstdint>
#include <string>

namespace trepro {

// `git rev-parse HEAD` of the source tree (with "-dirty" when it has uncommitted changes), or
// "unknown" when git or the tree is unavailable.
std::string git_commit();
// "GCC 12.2.0" etc.
std::string compiler_version();
// Peak resident memory of this process so far (getrusage), in bytes.
std::int64_t peak_memory_bytes();
// UTC, ISO 8601.
std::string utc_now();

}  // namespace trepro
