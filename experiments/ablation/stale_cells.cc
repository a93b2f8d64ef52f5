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
  if (stage == CellStage::stopped_early) {  // cell_config_differences compares the budgets apart
    config.train.max_steps = TrainConfig{}.max_steps;
    config.data.epochs = DataConfig{}.epochs;
  }
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
  const Config recorded_config = config_from_json(recorded, source + ": config");
  const auto want = comparable(wanted, stage);
  const auto had = comparable(recorded_config, stage);
  std::set<std::string> keys;
  for (const auto& [key, value] : want) keys.insert(key);
  for (const auto& [key, value] : had) keys.insert(key);
  std::vector<std::string> differences;
  for (const std::string& key : keys) {
    if (shown(want, key) != shown(had, key)) differences.push_back(key + ": " + shown(had, key) + " -> " + shown(want, key));
  }
  if (stage == CellStage::stopped_early) {
    // 0 epochs is no limit: the largest budget.
    const auto at_least = [](std::int64_t wanted_budget, std::int64_t had_budget, bool zero_is_unlimited) {
      if (zero_is_unlimited && wanted_budget == 0) return true;
      if (zero_is_unlimited && had_budget == 0) return false;
      return wanted_budget >= had_budget;
    };
    const std::string smaller = " (a smaller budget than the one this cell stopped early within)";
    if (!at_least(wanted.train.max_steps, recorded_config.train.max_steps, false)) {
      differences.push_back("train.max_steps: " + std::to_string(recorded_config.train.max_steps) + " -> " +
                            std::to_string(wanted.train.max_steps) + smaller);
    }
    if (!at_least(wanted.data.epochs, recorded_config.data.epochs, true)) {
      differences.push_back("data.epochs: " + std::to_string(recorded_config.data.epochs) + " -> " +
                            std::to_string(wanted.data.epochs) + smaller);
    }
  }
  return differences;
}

CellStage cell_stage(const nlohmann::json& report) {
  if (report.value("status", "") == "running") return CellStage::running;
  return report.value("status", "") == "finished" && report.value("stopped_early", false) ? CellStage::stopped_early
                                                                                          : CellStage::finished;
}

std::string warmup_budget_warning(const Config& config, std::int64_t steps) {
  const ScheduleConfig& schedule = config.train.schedule;
  if (schedule.kind == ScheduleKind::constant || steps > schedule.warmup) return "";
  return "a budget of " + std::to_string(steps) + " steps ends inside the warmup (train.schedule.warmup " +
         std::to_string(schedule.warmup) + "): the learning rate is still rising, so the cells compare nothing the "
         "recipe says";
}

}  // namespace trepro
