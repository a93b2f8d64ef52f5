// The one layout of a run folder and a sweep folder (experiments/run_folder/run_folder.h), the
// report's shared sections (report_sections.h), and what makes a sweep's cell stale
// (experiments/ablation/stale_cells.h).
#include "experiments/run_folder/run_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <cmath>
#include <fstream>

#include "core/config.h"
#include "conformance/support/scratch_dir.h"
#include "experiments/ablation/stale_cells.h"
#include "experiments/ablation/twin_cells.h"
#include "experiments/run_folder/report_sections.h"

namespace trepro::testing {
namespace {

namespace fs = std::filesystem;

TEST(RunFolder, NamesEveryFileOfARun) {
  const RunFolder run("runs/x");
  EXPECT_EQ(run.config(), "runs/x/config.json");
  EXPECT_EQ(run.vocabulary(), "runs/x/vocab.model");
  EXPECT_EQ(run.train_log(), "runs/x/train.log");
  EXPECT_EQ(run.history(), "runs/x/history.jsonl");
  EXPECT_EQ(run.report(), "runs/x/report.json");
  EXPECT_EQ(run.best_checkpoint(), "runs/x/checkpoints/best.safetensors");
  EXPECT_EQ(run.step_checkpoint(250), "runs/x/checkpoints/step_250.safetensors");
  EXPECT_EQ(run.average_checkpoint(5, 9000), "runs/x/checkpoints/average_last_5_to_9000.safetensors");
  EXPECT_EQ(RunFolder::hypotheses_name("test_2016_flickr", "best", "", "en"), "test_2016_flickr.best.hyp.en");
  EXPECT_EQ(RunFolder::hypotheses_name("val", "step_10", "greedy", "de"), "val.step_10.greedy.hyp.de");
}

TEST(RunFolder, NamesEveryFileOfASweep) {
  const SweepFolder sweep("out");
  EXPECT_EQ(sweep.cell("norm=pre", 3).root().string(), "out/norm=pre/seed_3");
  EXPECT_EQ(sweep.cell_lock("norm=pre", 3), "out/norm=pre/seed_3.lock");
  EXPECT_EQ(sweep.cell_config("norm=pre", 3), "out/configs/norm=pre.seed_3.json");
  EXPECT_EQ(sweep.cell_log("norm=pre", 3), "out/logs/norm=pre.seed_3.log");
  EXPECT_EQ(sweep.summary(), "out/summary.json");
  EXPECT_EQ(identity_lock_path("share", "abc").string(), "share/.cell-locks/abc.lock");
  EXPECT_TRUE(SweepFolder::is_cell_folder_name("seed_12"));
  for (const char* name : {"seed_", "seed_1.sharing", "seed_x", "seeds_1", "base"}) {
    EXPECT_FALSE(SweepFolder::is_cell_folder_name(name)) << name;
  }
}

TEST(RunFolder, NamesAFileInsideItRelativeToItAndOneOutsideAsGiven) {
  const fs::path root = fresh_dir("run_folder", "relative");
  const RunFolder run(root / "run");
  EXPECT_EQ(run.relative(run.best_checkpoint()), "checkpoints/best.safetensors");
  const std::string outside = (root / "elsewhere.safetensors").string();
  EXPECT_EQ(run.relative(outside), outside);
}

TEST(RunFolder, ReadsAndWritesItsReport) {
  const fs::path root = fresh_dir("run_folder", "report");
  const RunFolder run(root);
  EXPECT_FALSE(run.read_report().has_value()) << "a folder without a report has none";
  run.write_report({{"status", "running"}});
  ASSERT_TRUE(run.read_report().has_value());
  EXPECT_EQ((*run.read_report())["status"], "running");
  std::ofstream(run.report()) << "[1, 2]";
  try {
    run.read_report();
    FAIL() << "an array was read as a report";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(run.report() + ": expected a run report"), std::string::npos) << e.what();
  }
}

TEST(ReportSections, ADecodingReplacesTheTestAndKeepsTheRest) {
  const fs::path root = fresh_dir("run_folder", "decoded");
  const RunFolder run(root);
  run.write_report({{"status", "finished"},
                    {"best", {{"step", 40}}},
                    {"test", {{"split", "test"}, {"loss", 9.0}, {"bleu_paper_wmt14", 20.0}, {"extra", 1}}}});
  TestDecoding decoded;
  decoded.bleu = 30.5;
  decoded.bleu_signature = "sig";
  decoded.bleu_tok_lc = 31.0;
  decoded.hypotheses_file = "test_2016_flickr.best.hyp.en";
  decoded.decoding = {{"beam", 4}};
  record_decoded_test(run, {"test_2016_flickr", "checkpoints/best.safetensors", 40, 1.5}, decoded);
  const nlohmann::json report = *run.read_report();
  EXPECT_EQ(report["status"], "finished");
  EXPECT_EQ(report["best"]["step"], 40);
  const nlohmann::json& test = report["test"];
  EXPECT_EQ(test["split"], "test_2016_flickr");
  EXPECT_EQ(test["checkpoint_step"], 40);
  EXPECT_DOUBLE_EQ(test["loss"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(test["perplexity"].get<double>(), std::exp(1.5));
  EXPECT_DOUBLE_EQ(test["bleu"].get<double>(), 30.5);
  EXPECT_EQ(test["decoding"]["beam"], 4);
  EXPECT_FALSE(test.contains("bleu_paper_wmt14")) << "a paper's BLEU of an earlier decoding survived";
  EXPECT_EQ(test["extra"], 1);

  const RunFolder empty(fresh_dir("run_folder", "no_report"));
  EXPECT_THROW(record_decoded_test(empty, {}, decoded), std::runtime_error);
}

TEST(StaleCells, ACellIsStaleWhenItTrainedAnotherConfig) {
  Config wanted = load_config(std::string(TREPRO_SOURCE_DIR) + "/experiments/configs/copy_tiny.json");
  wanted.model.heads = 4;
  wanted.train.max_steps = 300;
  EXPECT_TRUE(cell_config_differences(wanted, config_to_json(wanted), "r", CellStage::finished).empty());

  Config trained = wanted;
  trained.train.max_steps = 9480;
  const auto finished = cell_config_differences(wanted, config_to_json(trained), "r", CellStage::finished);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0], "train.max_steps: 9480 -> 300");
  EXPECT_TRUE(cell_config_differences(wanted, config_to_json(trained), "r", CellStage::running).empty())
      << "a resume may change the session's lengths";

  trained.train.seed = wanted.train.seed + 4;
  EXPECT_EQ(cell_config_differences(wanted, config_to_json(trained), "r", CellStage::running).size(), 1u);

  Config explicit_head_dim = wanted;
  explicit_head_dim.model.head_dim = wanted.model.d_head();
  EXPECT_TRUE(cell_config_differences(wanted, config_to_json(explicit_head_dim), "r", CellStage::finished).empty())
      << "head_dim 0 is d_model / heads, as twin cells compare it";
}

// A sweep decodes Multi30K's three test sets; cells decoded before it did keep their one.
TEST(UndecodedTestSets, ANewCellNeedsAllThreeAnOldOneItsOne) {
  nlohmann::json report = {{"status", "finished"},
                           {"config", {{"data", {{"dataset", "multi30k"}}}}},
                           {"best", {{"step", 40}}},
                           {"test", nlohmann::json::object()}};
  EXPECT_EQ(undecoded_test_sets(report, "r"),
            (std::vector<std::string>{"test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"}));
  EXPECT_FALSE(cell_report_complete(report, "r"));
  report["test"]["bleu"] = 30.0;
  EXPECT_TRUE(undecoded_test_sets(report, "r").empty()) << "a cell decoded before the three test sets is done";
  report["tests"]["test_2016_flickr"]["bleu"] = 30.0;
  EXPECT_EQ(undecoded_test_sets(report, "r"), (std::vector<std::string>{"test_2017_flickr", "test_2017_mscoco"}));
  report["tests"]["test_2017_flickr"]["bleu"] = 31.0;
  report["tests"]["test_2017_mscoco"] = {{"loss", 2.0}};  // its loss written, its decoding not
  EXPECT_EQ(undecoded_test_sets(report, "r"), (std::vector<std::string>{"test_2017_mscoco"}));
  report["tests"]["test_2017_mscoco"]["bleu"] = 25.0;
  EXPECT_TRUE(cell_report_complete(report, "r"));

  report["best"]["step"] = 0;
  report.erase("tests");
  report["test"].erase("bleu");
  EXPECT_TRUE(undecoded_test_sets(report, "r").empty()) << "no best checkpoint: nothing to decode";
  report["best"]["step"] = 40;
  report["config"]["data"]["dataset"] = "copy";
  EXPECT_TRUE(undecoded_test_sets(report, "r").empty()) << "the copy task has no test set to decode";
  EXPECT_THROW(undecoded_test_sets(nlohmann::json{{"status", "finished"}}, "r"), std::runtime_error);
}

TEST(StaleCells, ABudgetInsideTheWarmupIsWarnedAbout) {
  Config config = load_config(std::string(TREPRO_SOURCE_DIR) + "/experiments/configs/copy_tiny.json");
  config.train.schedule.kind = ScheduleKind::noam;
  config.train.schedule.warmup = 300;
  EXPECT_NE(warmup_budget_warning(config, 300), "");
  EXPECT_EQ(warmup_budget_warning(config, 301), "");
  config.train.schedule.kind = ScheduleKind::constant;
  EXPECT_EQ(warmup_budget_warning(config, 10), "");
}

}  // namespace
}  // namespace trepro::testing
