// trepro ablate: runs every variant of an ablation spec (experiments/ablation/ablation_spec.h)
// into OUT/<variant>/ (a run folder as `trepro train` makes) and writes OUT/summary.json after
// each. Rerunning continues: finished variants are skipped, interrupted ones resumed.
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/atomic_file.h"
#include "experiments/ablation/ablation_summary.h"
#include "experiments/commands/backend_choice.h"
#include "experiments/commands/commands.h"
#include "experiments/training/train_run.h"
#include "model/optimizer.h"

namespace trepro::cli {

namespace {

namespace fs = std::filesystem;

struct AblateOptions {
  std::string spec_path, out, data_dir;
  std::int64_t steps = 0;
  CLI::Option* steps_option = nullptr;
  bool summarize_only = false;
  BackendChoice backend;
};

std::string report_status(const fs::path& run) {
  const fs::path report = run / "report.json";
  if (!fs::exists(report)) return "";
  return nlohmann::json::parse(read_file(report.string())).value("status", "");
}

void run_variant(const AblateOptions& o, const AblationVariant& variant) {
  const fs::path run = fs::path(o.out) / variant.name;
  const std::string status = report_status(run);
  if (status == "finished" || status == "non_finite") {
    std::cout << "ablate: " << variant.name << ": already " << status << ", skipped" << std::endl;
    return;
  }
  TrainRunOptions train;
  train.run_dir = run.string();
  train.data_dir = o.data_dir;
  train.resume = fs::exists(run / "checkpoints");
  if (!train.resume) {
    fs::remove_all(run);  // a run killed before its first checkpoint starts over
    train.config_path = (fs::path(o.out) / "configs" / (variant.name + ".json")).string();
    fs::create_directories(fs::path(train.config_path).parent_path());
    save_config(variant.config, train.config_path);
  }
  if (*o.steps_option) train.max_steps = o.steps;
  train.make_backend = [&o] { return o.backend.make(); };
  std::cout << "ablate: " << variant.name << (train.resume ? ": resuming" : ": training") << std::endl;
  try {
    train_run(train);
  } catch (const NonFiniteError& e) {
    // A diverging variant is a result (Post-LN without warmup may): record it and go on.
    std::cout << "ablate: " << variant.name << ": " << e.what() << std::endl;
  }
}

void run_ablation(const AblateOptions& o) {
  const AblationSpec spec = load_ablation_spec(o.spec_path);
  fs::create_directories(o.out);
  const std::string summary_path = (fs::path(o.out) / "summary.json").string();
  const auto write_summary = [&] {
    write_file_atomically(summary_path, ablation_summary(spec, o.spec_path, o.out).dump(2) + "\n");
  };
  if (!o.summarize_only) {
    for (const AblationVariant& variant : spec.variants) {
      run_variant(o, variant);
      write_summary();
    }
  }
  write_summary();
  std::cout << "ablate: summary in " << summary_path << std::endl;
}

}  // namespace

void add_ablate_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("ablate", "Run every variant of an ablation spec and summarize them");
  auto o = std::make_shared<AblateOptions>();
  cmd->add_option("spec", o->spec_path, "ablation spec JSON (experiments/ablations/*.json)")->required();
  cmd->add_option("--out", o->out, "folder for the variants' runs and summary.json")->required();
  cmd->add_option("--data-dir", o->data_dir, "folder holding multi30k/ (as for train)");
  o->steps_option = cmd->add_option("--steps", o->steps, "override train.max_steps of every variant")
                        ->check(CLI::PositiveNumber);
  cmd->add_flag("--summarize-only", o->summarize_only,
                "only rewrite summary.json from the runs' reports (e.g. after `trepro evaluate` added BLEU)");
  o->backend.add_options(*cmd);
  cmd->callback([o] { run_ablation(*o); });
}

}  // namespace trepro::cli
