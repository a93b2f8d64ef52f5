// The config a `train` invocation runs: CONFIG, or the run folder's config.json on --resume,
// with the command line's overrides.
#pragma once

#include <cstdint>
#include <string>

#include "core/config.h"
#include "experiments/training/train_run.h"

namespace trepro {

// The config of the run: CONFIG, or RUN/config.json on resume (CONFIG, when also given, must be
// the same run apart from the overridable lengths). A scheduler restarts a job with one fixed
// command, so --resume with CONFIG also starts a run whose folder has no config.json yet (killed
// before writing it, or never started), unless it has checkpoints.
struct RunConfig {
  Config config;
  // train.max_steps before the --steps override, for the time estimate of a short trial run.
  std::int64_t planned_steps = 0;
};
RunConfig run_config(const TrainRunOptions& o);

// config_hash of `config` with the lengths a session may override on --resume (train.max_steps,
// validate_every, checkpoint_every) at their defaults: what every checkpoint of one run shares,
// and what --resume requires of a CONFIG given again.
std::string recipe_hash(Config config);

}  // namespace trepro
