// A sweep reuses a cell only when the cell trained what the spec asks for now: a rerun with
// another --steps, or a spec edited since, must not take a cell trained on the old budget or
// recipe as its result ("already finished, skipped").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"

namespace trepro {

enum class CellStage {
  finished,       // complete at its cap: everything in its config, the length of the run included,
                  // must match
  stopped_early,  // complete, ended by early stopping before its cap: a larger budget
                  // (train.max_steps, data.epochs) would have trained it alike, a smaller one not
  running,        // to be resumed: a resume may change the session's lengths (train.max_steps,
                  // validate_every, checkpoint_every), as `train --resume --steps` may
};
// The stage of a cell from its report (its status and stopped_early).
CellStage cell_stage(const nlohmann::json& report);

// The config keys (dotted, "model.heads: 8 -> 4" with the recorded value first) in which the config
// a cell's report records differs from `wanted`, as twin cells compare them (head_dim 0 is
// d_model / heads). Empty when the cell trained `wanted`. Throws naming `source` when the
// recorded config cannot be read.
std::vector<std::string> cell_config_differences(const Config& wanted, const nlohmann::json& recorded,
                                                 const std::string& source, CellStage stage);

// A warning when `steps` ends a noam or inverse_sqrt run inside its warmup, where the rate is
// still rising and no comparison says anything about the recipe; empty otherwise.
std::string warmup_budget_warning(const Config& config, std::int64_t steps);

}  // namespace trepro
