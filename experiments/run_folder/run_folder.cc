#include "experiments/run_folder/run_folder.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/json_input.h"

namespace trepro {

namespace fs = std::filesystem;

namespace {

std::string seed_name(std::uint64_t seed) { return "seed_" + std::to_string(seed); }
std::string cell_file_stem(const std::string& variant, std::uint64_t seed) { return variant + "." + seed_name(seed); }

}  // namespace

std::string RunFolder::best_checkpoint() const { return (fs::path(checkpoints()) / "best.safetensors").string(); }

std::string RunFolder::step_checkpoint(std::int64_t step) const {
  return (fs::path(checkpoints()) / ("step_" + std::to_string(step) + ".safetensors")).string();
}

std::string RunFolder::average_checkpoint(std::int64_t count, std::int64_t last_step) const {
  return (fs::path(checkpoints()) /
          ("average_last_" + std::to_string(count) + "_to_" + std::to_string(last_step) + ".safetensors"))
      .string();
}

std::vector<StepCheckpoint> RunFolder::step_checkpoints() const {
  std::vector<StepCheckpoint> found;
  const fs::path dir = checkpoints();
  if (!fs::is_directory(dir)) return found;
  static const std::regex pattern("step_([0-9]+)\\.safetensors");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, match, pattern)) found.push_back({std::stoll(match[1].str()), entry.path().string()});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return found;
}

std::string RunFolder::hypotheses_name(const std::string& split, const std::string& checkpoint_stem,
                                       const std::string& search_tag, const std::string& language) {
  return split + "." + checkpoint_stem + (search_tag.empty() ? "" : "." + search_tag) + ".hyp." + language;
}

std::string RunFolder::relative(const std::string& path) const {
  const fs::path inside = fs::weakly_canonical(path).lexically_relative(fs::weakly_canonical(root_));
  return !inside.empty() && *inside.begin() != ".." ? inside.string() : path;
}

std::optional<nlohmann::json> RunFolder::read_report() const {
  const std::string path = report();
  if (!fs::exists(path)) return std::nullopt;
  nlohmann::json parsed = read_json_file(path);
  if (!parsed.is_object()) throw JsonInputError(path + ": expected a run report (a JSON object)");
  return parsed;
}

void RunFolder::write_report(const nlohmann::json& report_json) const {
  // One space an indent: the committed cells are many, and travel to GPU machines in a 64 MiB tree.
  write_file_atomically(report(), report_json.dump(1) + "\n");
}

RunFolder SweepFolder::cell(const std::string& variant, std::uint64_t seed) const {
  return RunFolder(root_ / cell_relative(variant, seed));
}

fs::path SweepFolder::cell_relative(const std::string& variant, std::uint64_t seed) {
  return fs::path(variant) / seed_name(seed);
}

std::string SweepFolder::cell_lock(const std::string& variant, std::uint64_t seed) const {
  return cell(variant, seed).root().string() + ".lock";
}

std::string SweepFolder::cell_config(const std::string& variant, std::uint64_t seed) const {
  return (root_ / "configs" / (cell_file_stem(variant, seed) + ".json")).string();
}

std::string SweepFolder::cell_log(const std::string& variant, std::uint64_t seed) const {
  return (root_ / "logs" / (cell_file_stem(variant, seed) + ".log")).string();
}

bool SweepFolder::is_cell_folder_name(const std::string& name) {
  const std::string digits = name.substr(std::min<std::size_t>(name.size(), 5));
  return name.starts_with("seed_") && !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

fs::path identity_lock_path(const fs::path& share_dir, const std::string& identity) {
  return share_dir / ".cell-locks" / (identity + ".lock");
}

}  // namespace trepro
