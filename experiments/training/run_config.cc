#include "experiments/training/run_config.h"

#include <filesystem>
#include <stdexcept>
#include <string>

#include "experiments/run_folder/run_folder.h"

namespace trepro {

namespace fs = std::filesystem;

RunConfig run_config(const TrainRunOptions& o) {
  const RunFolder run(o.run_dir);
  const std::string saved = run.config();
  const bool starts_fresh = o.resume && !fs::exists(saved) && !o.config_path.empty() && run.step_checkpoints().empty();
  Config config;
  if (o.resume && !starts_fresh) {
    if (!fs::exists(saved)) throw std::runtime_error(saved + ": missing: nothing to resume");
    config = load_config(saved);
    if (!o.config_path.empty()) {
      if (recipe_hash(load_config(o.config_path)) != recipe_hash(config)) {
        throw std::runtime_error(o.config_path + ": differs from " + saved + " (resume continues the saved config)");
      }
    }
  } else {
    if (o.config_path.empty()) throw std::invalid_argument("train: a CONFIG is required unless --resume");
    if (!o.resume && fs::exists(saved)) {
      throw std::runtime_error(saved + ": the run folder is in use (--resume continues it; or choose another --out)");
    }
    config = load_config(o.config_path);
  }
  const std::int64_t planned_steps = config.train.max_steps;
  if (o.max_steps) config.train.max_steps = *o.max_steps;
  if (o.validate_every) config.train.validate_every = *o.validate_every;
  if (o.checkpoint_every) config.train.checkpoint_every = *o.checkpoint_every;
  return {config, planned_steps};
}

std::string recipe_hash(Config config) {
  const TrainConfig defaults;
  config.train.max_steps = defaults.max_steps;
  config.train.validate_every = defaults.validate_every;
  config.train.checkpoint_every = defaults.checkpoint_every;
  return config_hash(config);
}

}  // namespace trepro
