// trepro train: trains a config and writes report.json. For now the data is the synthetic copy
// task; real data (Multi30K) comes with the experiment runner.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/config.h"
#include "experiments/commands/backend_choice.h"
#include "experiments/commands/commands.h"
#include "experiments/copy_task.h"
#include "experiments/run_info.h"
#include "model/optimizer.h"

namespace trepro::cli {

namespace {

struct TrainOptions {
  std::string config, out, task_name = "copy";
  std::int64_t steps = -1;  // -1: train.max_steps
  std::int64_t validate_every = 50;
  CopyTask task;
  BackendChoice backend;
};

// Validation loss on fixed held-out batches (a different seed stream from training).
double validation_loss(Transformer& model, const Config& config, const CopyTask& task) {
  double weighted = 0.0;
  std::int64_t tokens = 0;
  for (std::uint64_t i = 0; i < 4; ++i) {
    Batch batch = copy_task_batch(config.model, task, config.train.seed + 0x5EED, i);
    model.forward(batch);
    weighted += model.loss(batch.labels, 0.0, config.train.label_smoothing_form) * static_cast<double>(model.loss_tokens());
    tokens += model.loss_tokens();
  }
  return weighted / static_cast<double>(tokens);
}

std::string progress_line(const StepResult& r, std::int64_t total, double elapsed, double tokens_per_second) {
  std::ostringstream line;
  const double eta = elapsed / static_cast<double>(r.step) * static_cast<double>(total - r.step);
  line << "step " << r.step << "/" << total << "  loss " << std::fixed << std::setprecision(4) << r.loss << "  lr "
       << std::scientific << std::setprecision(3) << r.learning_rate << "  |g| " << std::fixed << std::setprecision(3)
       << r.grad_norm << "  tok/s " << std::setprecision(0) << tokens_per_second << "  elapsed "
       << std::setprecision(1) << elapsed << "s  eta " << eta << "s";
  return line.str();
}

void run_train(const TrainOptions& o) {
  Config config = load_config(o.config);
  if (o.steps >= 0) config.train.max_steps = o.steps;
  std::unique_ptr<Backend> backend = o.backend.make();
  CopyTask task = o.task;
  task.reverse = o.task_name == "reverse";
  if (task.min_length > task.max_length) {
    throw std::invalid_argument("--min-length " + std::to_string(task.min_length) + " exceeds --max-length " +
                                std::to_string(task.max_length));
  }

  Transformer model(config.model, *backend);
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json validation = nlohmann::json::array();
  const auto start = std::chrono::steady_clock::now();
  std::int64_t tokens = 0;
  for (std::int64_t s = 1; s <= config.train.max_steps; ++s) {
    StepResult r = trainer.step(copy_task_batch(config.model, task, config.train.seed, static_cast<std::uint64_t>(s)));
    tokens += r.tokens;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    steps.push_back({{"step", r.step}, {"loss", r.loss}, {"learning_rate", r.learning_rate},
                     {"grad_norm", r.grad_norm}, {"tokens", r.tokens}});
    if (s % o.validate_every == 0 || s == config.train.max_steps) {
      const double loss = validation_loss(model, config, task);
      validation.push_back({{"step", s}, {"loss", loss}, {"perplexity", std::exp(loss)}});
      std::cout << progress_line(r, config.train.max_steps, elapsed, static_cast<double>(tokens) / elapsed)
                << "  val_loss " << std::setprecision(4) << loss << std::endl;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json report = {
      {"schema_version", 1},
      {"kind", "train"},
      {"created", utc_now()},
      {"task",
       {{"name", o.task_name}, {"batch_size", task.batch_size}, {"min_length", task.min_length},
        {"max_length", task.max_length}}},
      {"config", config_to_json(config)},
      {"config_hash", config_hash(config)},
      {"git_commit", git_commit()},
      {"backend", backend->name()},
      {"simd_target", "none"},
      {"threads", 1},
      {"compiler", compiler_version()},
      {"seed", config.train.seed},
      {"label_smoothing_form", to_string(config.train.label_smoothing_form)},
      {"steps", steps},
      {"validation", validation},
      {"timings", {{"train_seconds", seconds}, {"target_tokens_per_second", static_cast<double>(tokens) / seconds}}},
      {"peak_memory_bytes", peak_memory_bytes()},
  };
  std::filesystem::create_directories(o.out);
  save_config(config, (std::filesystem::path(o.out) / "config.json").string());
  write_file_atomically((std::filesystem::path(o.out) / "report.json").string(), report.dump(2) + "\n");
  std::cout << "wrote " << (std::filesystem::path(o.out) / "report.json").string() << std::endl;
}

}  // namespace

void add_train_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("train", "Train a config on the synthetic copy task and write report.json");
  auto o = std::make_shared<TrainOptions>();
  cmd->add_option("config", o->config, "config JSON")->required();
  cmd->add_option("--out", o->out, "run folder (report.json and config.json are written there)")->required();
  cmd->add_option("--steps", o->steps, "optimizer steps (default: train.max_steps)");
  cmd->add_option("--task", o->task_name, "copy or reverse")->check(CLI::IsMember({"copy", "reverse"}));
  cmd->add_option("--batch-size", o->task.batch_size, "sentences per batch")->check(CLI::PositiveNumber);
  cmd->add_option("--min-length", o->task.min_length, "shortest sequence (tokens, before EOS)")->check(CLI::PositiveNumber);
  cmd->add_option("--max-length", o->task.max_length, "longest sequence (tokens, before EOS)")->check(CLI::PositiveNumber);
  cmd->add_option("--validate-every", o->validate_every, "steps between validation losses")->check(CLI::PositiveNumber);
  o->backend.add_options(*cmd);
  cmd->callback([o] { run_train(*o); });
}

}  // namespace trepro::cli
