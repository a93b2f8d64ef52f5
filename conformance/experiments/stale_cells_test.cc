// Which finished cells a sweep may reuse (experiments/ablation/stale_cells.h): one at its cap only
// under the same budget; one that early stopping ended under any budget at least as large, since
// the extra steps were never taken; none whose model or recipe differs.
#include "experiments/ablation/stale_cells.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config.h"

namespace trepro {
namespace {

using nlohmann::json;

// The Multi30K config (8 heads) with the given budget.
Config with_budget(std::int64_t epochs, std::int64_t max_steps = 100000) {
  Config config = load_config(std::string(TREPRO_SOURCE_DIR) + "/experiments/configs/multi30k_deen.json");
  config.data.epochs = epochs;
  config.train.max_steps = max_steps;
  return config;
}

std::vector<std::string> differences(const Config& wanted, const Config& recorded, CellStage stage) {
  return cell_config_differences(wanted, config_to_json(recorded), "report.json", stage);
}

TEST(StaleCells, ACellAtItsCapCountsUnderItsOwnBudgetAlone) {
  EXPECT_TRUE(differences(with_budget(40), with_budget(40), CellStage::finished).empty());
  EXPECT_EQ(differences(with_budget(80), with_budget(40), CellStage::finished),
            std::vector<std::string>{"data.epochs: 40 -> 80"});
}

TEST(StaleCells, ACellEarlyStoppingEndedCountsUnderAnyLargerBudget) {
  EXPECT_TRUE(differences(with_budget(80), with_budget(40), CellStage::stopped_early).empty());
  EXPECT_TRUE(differences(with_budget(0), with_budget(40), CellStage::stopped_early).empty());  // 0: no epoch limit
  EXPECT_TRUE(differences(with_budget(40, 200000), with_budget(40), CellStage::stopped_early).empty());
  const std::string smaller = " (a smaller budget than the one this cell stopped early within)";
  EXPECT_EQ(differences(with_budget(20), with_budget(40), CellStage::stopped_early),
            std::vector<std::string>{"data.epochs: 40 -> 20" + smaller});
  EXPECT_EQ(differences(with_budget(40), with_budget(0), CellStage::stopped_early),
            std::vector<std::string>{"data.epochs: 0 -> 40" + smaller});
  EXPECT_EQ(differences(with_budget(40, 5000), with_budget(40), CellStage::stopped_early),
            std::vector<std::string>{"train.max_steps: 100000 -> 5000" + smaller});
  Config other_model = with_budget(80);
  other_model.model.d_ff = 1024;
  EXPECT_EQ(differences(other_model, with_budget(40), CellStage::stopped_early),
            std::vector<std::string>{"model.d_ff: 512 -> 1024"});
}

TEST(StaleCells, TheStageComesFromTheReport) {
  EXPECT_EQ(cell_stage(json{{"status", "running"}}), CellStage::running);
  EXPECT_EQ(cell_stage(json{{"status", "finished"}, {"stopped_early", true}}), CellStage::stopped_early);
  EXPECT_EQ(cell_stage(json{{"status", "finished"}, {"stopped_early", false}}), CellStage::finished);
  EXPECT_EQ(cell_stage(json{{"status", "finished"}}), CellStage::finished);
  EXPECT_EQ(cell_stage(json{{"status", "non_finite"}, {"stopped_early", true}}), CellStage::finished);
}

}  // namespace
}  // namespace trepro
