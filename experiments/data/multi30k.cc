#include "experiments/data/multi30k.h"

#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

namespace trepro {

std::vector<std::string> read_gzip_lines(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  std::vector<std::string> lines;
  std::string line;
  char buffer[4096];
  int read = 0;
  while ((read = gzread(file.get(), buffer, sizeof buffer)) > 0) {
    for (int i = 0; i < read; ++i) {
      if (buffer[i] == '\n') {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        line.clear();
      } else {
        line.push_back(buffer[i]);
      }
    }
  }
  if (read < 0) {
    int code = 0;
    throw std::runtime_error(path + ": corrupt gzip data: " + gzerror(file.get(), &code));
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

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
  candidates.push_back({"<source dir>/../shared/data", std::string(TREPRO_SOURCE_DIR) + "/../shared/data", false});
  candidates.push_back({"default", "/work/shared/data", false});
  std::string tried;
  for (const Candidate& c : candidates) {
    if (std::filesystem::is_directory(std::filesystem::path(c.dir) / "multi30k")) return c.dir;
    tried += "\n  " + c.origin + ": " + c.dir + " (no multi30k/ folder)";
    if (c.chosen_by_user) break;
  }
  throw std::runtime_error("data folder not found; tried:" + tried);
}

ParallelText read_multi30k(const std::string& data_dir, const std::string& split, const std::string& source_language,
                           const std::string& target_language) {
  const auto path = [&](const std::string& language) {
    return (std::filesystem::path(data_dir) / "multi30k" / (split + "." + language + ".gz")).string();
  };
  ParallelText text{read_gzip_lines(path(source_language)), read_gzip_lines(path(target_language))};
  if (text.source.size() != text.target.size()) {
    throw std::runtime_error(path(source_language) + " has " + std::to_string(text.source.size()) + " lines but " +
                             path(target_language) + " has " + std::to_string(text.target.size()));
  }
  if (text.source.empty()) throw std::runtime_error(path(source_language) + ": no sentences");
  return text;
}

}  // namespace trepro
