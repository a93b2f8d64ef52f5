// trepro average: the element-wise mean of the last K step checkpoints of a run (the paper
// averages the last 5 for the base model, written at 10-minute intervals).
#include <iostream>
#include <memory>

#include "experiments/commands/commands.h"
#include "experiments/run_folder/run_folder.h"
#include "experiments/training/checkpoint.h"

namespace trepro::cli {

namespace {

struct AverageOptions {
  std::string run_dir, out;
  std::int64_t last = 5;
};

void run_average(const AverageOptions& o) {
  const RunFolder run(o.run_dir);
  const std::vector<StepCheckpoint> found = run.step_checkpoints();
  if (static_cast<std::int64_t>(found.size()) < o.last) {
    throw std::invalid_argument(run.checkpoints() + ": --last " + std::to_string(o.last) + " but only " +
                                std::to_string(found.size()) + " step checkpoints exist");
  }
  std::vector<std::string> paths;
  for (auto it = found.end() - o.last; it != found.end(); ++it) paths.push_back(it->path);
  average_checkpoints(paths, o.out);
  std::cout << "averaged steps";
  for (auto it = found.end() - o.last; it != found.end(); ++it) std::cout << " " << it->step;
  std::cout << " into " << o.out << std::endl;
}

}  // namespace

void add_average_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "average", "Average the parameters of a run's last K checkpoints",
      "trepro average runs/multi30k_deen --last 5 --out runs/multi30k_deen/average5.safetensors");
  auto o = std::make_shared<AverageOptions>();
  cmd->add_option("run", o->run_dir, "run folder (reads RUN/checkpoints/step_<N>.safetensors)")->required();
  cmd->add_option("--last", o->last, "how many of the newest checkpoints (default 5, the paper's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--out", o->out, "output safetensors (parameters only)")->required();
  cmd->callback([o] { run_average(*o); });
}

}  // namespace trepro::cli
