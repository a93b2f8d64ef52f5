#include "experiments/ablation/twin_cells.h"

#include <algorithm>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/json_input.h"
#include "experiments/ablation/stale_cells.h"
#include "experiments/data/multi30k.h"
#include "experiments/run_folder/run_folder.h"

namespace trepro {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::runtime_error not_a_cell_report(const std::string& source, const json::exception& e) {
  return std::runtime_error(source + ": not a run report with status, config.data.dataset, test and best.step (" +
                            e.what() + ")");
}

}  // namespace

std::vector<std::string> undecoded_test_sets(const json& report, const std::string& source) {
  try {
    const bool decodes = report.at("config").at("data").at("dataset").get<std::string>() == "multi30k";
    if (!decodes || report.at("best").at("step").get<std::int64_t>() == 0) return {};
    if (report.at("test").contains("bleu") && !report.contains("tests")) return {};
    const json tests = report.value("tests", json::object());
    std::vector<std::string> missing;
    for (const std::string_view set : kMulti30kTestSets) {
      const std::string split(set);
      if (!tests.contains(split) || !tests[split].contains("bleu")) missing.push_back(split);
    }
    return missing;
  } catch (const json::exception& e) {
    throw not_a_cell_report(source, e);
  }
}

bool cell_report_complete(const json& report, const std::string& source) {
  if (report.is_null()) return false;
  try {
    const std::string status = report.at("status").get<std::string>();
    if (status != "finished" && status != "non_finite") return false;
  } catch (const json::exception& e) {
    throw not_a_cell_report(source, e);
  }
  return undecoded_test_sets(report, source).empty();
}

std::string cell_identity(Config config) {
  config.model.head_dim = config.model.d_head();
  return config_hash(config);
}

namespace {

// The folders SHARE/<sweep>/<variant>/seed_<S> that hold a report, in path order.
std::vector<fs::path> cell_folders(const fs::path& share_dir) {
  std::vector<fs::path> cells;
  const auto subfolders = [](const fs::path& folder) {
    std::vector<fs::path> found;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
      if (entry.is_directory() && !entry.path().filename().string().starts_with(".")) found.push_back(entry.path());
    }
    return found;
  };
  if (!fs::is_directory(share_dir)) return cells;
  for (const fs::path& sweep : subfolders(share_dir)) {
    for (const fs::path& variant : subfolders(sweep)) {
      for (const fs::path& seed : subfolders(variant)) {
        if (SweepFolder::is_cell_folder_name(seed.filename().string()) && fs::exists(RunFolder(seed).report())) {
          cells.push_back(seed);
        }
      }
    }
  }
  std::sort(cells.begin(), cells.end());
  return cells;
}

}  // namespace

std::vector<TwinCell> complete_twins(const fs::path& share_dir, const Config& wanted, const fs::path& own) {
  std::vector<TwinCell> twins;
  const fs::path own_folder = fs::weakly_canonical(own);
  for (const fs::path& folder : cell_folders(share_dir)) {
    if (fs::weakly_canonical(folder) == own_folder) continue;
    const RunFolder cell(folder);
    const std::string report_path = cell.report();
    const json report = read_json_file(report_path);
    if (!report.is_object() || !report.contains("config")) {
      throw std::runtime_error(report_path + ": not a run report (no \"config\"), in the folder of shared cells " +
                               share_dir.string());
    }
    if (!cell_report_complete(report, report_path)) continue;
    if (!cell_config_differences(wanted, report.at("config"), report_path, cell_stage(report)).empty()) continue;
    if (!report.contains("backend") || !report["backend"].is_string()) {
      throw std::runtime_error(report_path + ": \"backend\" must name the backend the cell trained on");
    }
    twins.push_back({folder, report["backend"].get<std::string>()});
  }
  return twins;
}

void copy_twin(const fs::path& share_dir, const fs::path& twin, const fs::path& run) {
  const fs::path staging = run.string() + ".sharing";
  fs::remove_all(staging);  // left by a copy that was killed
  fs::create_directories(staging);
  const RunFolder original(twin), copy(staging);
  json report = read_json_file(original.report());
  if (!report.contains("shared_from")) report["shared_from"] = fs::relative(twin, share_dir).generic_string();
  for (const fs::directory_entry& entry : fs::directory_iterator(twin)) {
    if (!entry.is_regular_file() || entry.path() == fs::path(original.report())) continue;
    write_file_atomically((staging / entry.path().filename()).string(), read_file(entry.path().string()));
  }
  copy.write_report(report);
  fs::remove_all(run);
  rename_durably(staging.string(), run.string());
}

}  // namespace trepro
