#include "experiments/data/multi30k.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace trepro {

std::string resolve_data_dir(const std::string& explicit_dir) {
  struct Candidate {
    std::string origin, dir;
    bool chosen_by_user;  // a wrong --data-dir or $TREPRO_DATA_DIR must not fall through silently
  };
  std::vector<Candidate> candidates;
  if (!explicit_dir.empty()) candidates.push_back({"--data-dir / data.dir", explicit_dir, true});
  if (const char* env = std::getenv("TREPRO_DATA_DIR"); env != nullptr && *env != '\0') {
    candidates.push_back({"$TREPRO_DATA_DIR", env, true});
  }
  // The default: the repository's own data/, which ships Multi30K (data/multi30k/README.md).
  candidates.push_back({"default, <source dir>/data", std::string(TREPRO_SOURCE_DIR) + "/data", false});
  std::string tried;
  for (const Candidate& c : candidates) {
    if (std::filesystem::is_directory(std::filesystem::path(c.dir) / "multi30k")) return c.dir;
    tried += "\n  " + c.origin + ": " + c.dir + " (no multi30k/ folder)";
    if (c.chosen_by_user) break;
  }
  throw std::runtime_error("data folder not found; tried:" + tried);
}

}  // namespace trepro
