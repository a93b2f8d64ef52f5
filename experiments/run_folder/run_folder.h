// The layout of a run folder and of a sweep's folder, written once. Every command that reads or
// writes a run (train, evaluate, translate, average, ablate, the twin cells, the ablation
// summary) asks these classes for a path, so a file of a run is named in this file only.
//
//   RUN/config.json                       the config the run trains (written before the first step)
//   RUN/vocab.model                       its sentencepiece vocabulary (corpus runs)
//   RUN/train.log                         what a person reads: steps, validations, notes
//   RUN/history.jsonl                     every step and validation, one JSON object a line
//   RUN/report.json                       the run report (reports/schema.json), RunFolder's alone
//   RUN/checkpoints/step_<N>.safetensors  the newest train.keep_checkpoints step checkpoints
//   RUN/checkpoints/best.safetensors      the best validation so far
//   RUN/checkpoints/average_last_<K>_to_<N>.safetensors   an average that decoding made
//   RUN/<split>.<checkpoint>[.<search>].hyp.<language>     a decoding's detokenized output
//
//   SWEEP/<variant>/seed_<S>/             a cell: a run folder
//   SWEEP/<variant>/seed_<S>.lock         held while a process runs the cell
//   SWEEP/configs/<variant>.seed_<S>.json the cell's config, as the spec made it
//   SWEEP/logs/<variant>.seed_<S>.log     a child process's output (ablate --jobs)
//   SWEEP/summary.json                    the sweep's verdicts (experiments/ablation/ablation_summary.h)
//   SHARE/.cell-locks/<identity>.lock     held while a process trains a cell of that identity
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trepro {

struct StepCheckpoint {
  std::int64_t step;
  std::string path;
};

class RunFolder {
 public:
  explicit RunFolder(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::string config() const { return file("config.json"); }
  std::string vocabulary() const { return file("vocab.model"); }
  std::string train_log() const { return file("train.log"); }
  std::string history() const { return file("history.jsonl"); }
  std::string report() const { return file("report.json"); }
  std::string checkpoints() const { return file("checkpoints"); }
  std::string best_checkpoint() const;
  std::string step_checkpoint(std::int64_t step) const;
  std::string average_checkpoint(std::int64_t count, std::int64_t last_step) const;
  // The step checkpoints present, by increasing step.
  std::vector<StepCheckpoint> step_checkpoints() const;
  // The name (in the folder) of a decoding's hypotheses; `search_tag` is empty for the paper's search.
  static std::string hypotheses_name(const std::string& split, const std::string& checkpoint_stem,
                                     const std::string& search_tag, const std::string& language);
  std::string file(const std::string& name) const { return (root_ / name).string(); }
  // `path` relative to the folder when it lies inside it (how a report names its files), else as given.
  std::string relative(const std::string& path) const;

  // The run report: nullopt when the folder has none yet; throws naming the file when it cannot be
  // read (std::runtime_error) or is not a JSON object (JsonInputError, core/json_input.h).
  std::optional<nlohmann::json> read_report() const;
  // Replaces the report, atomically.
  void write_report(const nlohmann::json& report) const;

 private:
  std::filesystem::path root_;
};

// A sweep's output folder (trepro ablate --out).
class SweepFolder {
 public:
  explicit SweepFolder(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  RunFolder cell(const std::string& variant, std::uint64_t seed) const;
  // The cell's folder relative to the sweep's: <variant>/seed_<S>.
  static std::filesystem::path cell_relative(const std::string& variant, std::uint64_t seed);
  std::string cell_lock(const std::string& variant, std::uint64_t seed) const;
  std::string cell_config(const std::string& variant, std::uint64_t seed) const;
  std::string cell_log(const std::string& variant, std::uint64_t seed) const;
  std::string summary() const { return (root_ / "summary.json").string(); }
  // "seed_<digits>": the name of a cell's folder, not of a copy under way ("seed_<S>.sharing").
  static bool is_cell_folder_name(const std::string& name);

 private:
  std::filesystem::path root_;
};

// SHARE/.cell-locks/<identity>.lock (experiments/ablation/twin_cells.h).
std::filesystem::path identity_lock_path(const std::filesystem::path& share_dir, const std::string& identity);

}  // namespace trepro
