#include "experiments/ablation/stale_cells.h"

#include <map>
#include <set>

namespace trepro {

namespace {

// Leaf values by dotted key.
void flatten(const nlohmann::json& value, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (!value.is_object()) {
    out[prefix] = value;
    return;
  }
  for (const auto& [key, child] : value.items()) flatten(child, prefix.empty() ? key : prefix + "." + key, out);
}

std::map<std::string, nlohmann::json> comparable(Config config, CellStage stage) {
  config.model.head_dim = config.model.d_head();
  if (stage == CellStage::running) {
    const TrainConfig defaults;
    config.train.max_steps = defaults.max_steps;
    config.train.validate_every = defaults.validate_every;
    config.train.checkpoint_every = defaults.checkpoint_every;
  }
  std::map<std::string, nlohmann::json> flat;
  flatten(config_to_json(config), "", flat);
  return flat;
}

std::string shown(const std::map<std::string, nlohmann::json>& values, const std::string& key) {
  const auto it = values.find(key);
  return it == values.end() ? "(absent)" : it->second.dump();
}

}  // namespace

std::vector<std::string> cell_config_differences(const Config& wanted, const nlohmann::json& recorded,
                                                 const std::string& source, CellStage stage) {
  const auto want = comparable(wanted, stage);
  const auto had = comparable(config_from_json(recorded, source + ": config"), stage);
  std::set<std::string> keys;
  for (const auto& [key, value] : want) keys.insert(key);
  for (const auto& [key, value] : had) keys.insert(key);
  std::vector<std::string> differences;
  for (const std::string& key : keys) {
    if (shown(want, key) != shown(had, key)) differences.push_back(key + ": " + shown(had, key) + " -> " + shown(want, key));
  }
  return differences;
}

std::string warmup_budget_warning(const Config& config, std::int64_t steps) {
  const ScheduleConfig& schedule = config.train.schedule;
  if (schedule.kind == ScheduleKind::constant || steps > schedule.warmup) return "";
  return "a budget of " + std::to_string(steps) + " steps ends inside the warmup (train.schedule.warmup " +
         std::to_string(schedule.warmup) + "): the learning rate is still rising, so the cells compare nothing the "
         "recipe says";
}

}  // namespace trepro
