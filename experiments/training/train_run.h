// One training run into a run folder:
//   RUN/config.json        the config as run (resume reads it)
//   RUN/vocab.model        the sentencepiece vocabulary (Multi30K)
//   RUN/train.log          plain progress lines
//   RUN/history.jsonl      every step and validation (what report.json is built from)
//   RUN/checkpoints/step_<N>.safetensors, RUN/checkpoints/best.safetensors
//   RUN/report.json        rewritten at every validation and at the end
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/backend.h"
#include "distributed/communicator.h"
#include "model/trainer.h"  // NonFiniteError, which train_run throws

namespace trepro {

struct TrainRunOptions {
  std::string config_path;  // may be empty with resume (RUN/config.json is used)
  std::string run_dir;
  bool resume = false;      // continue from the newest RUN/checkpoints/step_<N>.safetensors; with
                            // none yet, start over (train_run.cc, run_config and resume)
  std::string data_dir;     // --data-dir (empty: data.dir, then the default chain)
  std::string prepared_dir; // --data: a folder `trepro prepare` wrote, memory-mapped
  std::optional<std::int64_t> max_steps, validate_every, checkpoint_every;  // config overrides
  std::int64_t log_every = 10;
  std::function<std::unique_ptr<Backend>()> make_backend;
  // The ranks of a data-parallel job (null: this process alone). Every rank runs train_run with
  // the same options; rank 0 alone writes the run folder, and the others read it on --resume.
  Communicator* comm = nullptr;
};

// Trains; throws on bad input. A NaN/Inf stops the run with NonFiniteError naming the step and
// the last good checkpoint (report.json then has status "non_finite").
void train_run(const TrainRunOptions& options);

}  // namespace trepro
