// The summary of a seeded ablation (experiments/ablation/ablation_summary.h) from cell reports
// written by hand: which way each metric counts, which cells count (a running one reports its best
// so far and counts for nothing; a diverged one decides its seed against a finished one), and the
// final training loss.
#include "experiments/ablation/ablation_summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/bleu/bleu.h"
#include "experiments/data/parallel_corpus.h"

namespace trepro {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Variants "a" (the baseline) and "b", seeds 1 and 2, a claim each way on validation perplexity,
// one on sacreBLEU (without hypotheses files, a t interval over seeds) and an equivalence claim
// on validation perplexity within 0.4.
struct Sweep {
  fs::path dir;
  AblationSpec spec;

  explicit Sweep(const std::string& name) : dir(fs::path(::testing::TempDir()) / ("ablation_summary_test_" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir / "out");
    std::ofstream(dir / "base.json") << json{{"model", {{"vocab_size", 16}, {"d_model", 32}, {"heads", 4}}}}.dump();
    const json claims = json::array(
        {{{"claim", "b has the lower perplexity"}, {"better", "b"}, {"worse", "a"}, {"metric", "validation_perplexity"}},
         {{"claim", "a has the lower perplexity"}, {"better", "a"}, {"worse", "b"}, {"metric", "validation_perplexity"}},
         {{"claim", "b has the higher BLEU"}, {"better", "b"}, {"worse", "a"}, {"metric", "bleu"}},
         {{"claim", "a and b are as good"}, {"equivalent", {"a", "b"}}, {"margin", 0.4}, {"metric", "validation_perplexity"}}});
    std::ofstream(dir / "spec.json") << json{{"name", name},
                                              {"base", "base.json"},
                                              {"seeds", {1, 2}},
                                              {"variants", {{{"name", "a"}, {"set", {{"model.dropout", 0.1}}}},
                                                            {{"name", "b"}, {"set", {{"model.dropout", 0.2}}}}}},
                                              {"baseline", "a"},
                                              {"claims", claims}}
                                            .dump();
    spec = load_ablation_spec((dir / "spec.json").string());
  }

  // Rewrites spec.json with `change` and loads it again.
  template <class Change>
  void respec(Change change) {
    json document = json::parse(std::ifstream(dir / "spec.json"));
    change(document);
    std::ofstream(dir / "spec.json") << document.dump();
    spec = load_ablation_spec((dir / "spec.json").string());
  }

  // A cell's report.json with the fields the summary reads; bleu < 0: none. `dataset` multi30k:
  // a cell ablate decodes after training.
  void cell(const std::string& variant, int seed, const std::string& status, double perplexity, double bleu,
            const std::string& dataset = "copy", const std::string& backend = "cpu-avx2") const {
    const fs::path folder = dir / "out" / variant / ("seed_" + std::to_string(seed));
    fs::create_directories(folder);
    json test = json::object();
    if (bleu >= 0) {
      test = {{"perplexity", perplexity + 0.5},
              {"bleu", bleu},
              {"split", "test_2016_flickr"},
              {"checkpoint", "checkpoints/best.safetensors"},
              {"decoding", {{"search", "beam 4, alpha 0.6, max length source + 50"}}}};
    }
    std::ofstream(folder / "report.json") << json{
        {"status", status},
        {"backend", backend},
        {"config", {{"data", {{"dataset", dataset}}}}},
        {"curve", json::array({{{"step", 100}, {"loss", 2.0}, {"steps", 100}}})},
        {"best", {{"step", 100}, {"validation_loss", std::log(perplexity)}}},
        {"test", test},
        {"timings", {{"target_tokens_per_second", 1000.0}, {"train_seconds", 10.0}}}}
                                                 .dump();
  }

  // Rewrites a cell's report with `change`.
  template <class Change>
  void edit(const std::string& variant, int seed, Change change) const {
    const fs::path path = dir / "out" / variant / ("seed_" + std::to_string(seed)) / "report.json";
    json report = json::parse(std::ifstream(path));
    change(report);
    std::ofstream(path) << report.dump();
  }

  // Rewrites a cell's report as one that ended at `step`, by patience (`stopped_early`) or at its
  // cap; `best_step` > 0 moves its best validation there.
  void ended(const std::string& variant, int seed, int step, bool stopped_early, int best_step = 0) const {
    edit(variant, seed, [&](json& report) {
      report["curve"] = json::array({{{"step", step}, {"loss", 2.0}, {"steps", step}}});
      report["stopped_early"] = stopped_early;
      if (best_step > 0) report["best"]["step"] = best_step;
    });
  }

  // Rewrites a cell's test.decoding.search and test.checkpoint, as another `trepro evaluate` would.
  void decoded_with(const std::string& variant, int seed, const std::string& search, const std::string& checkpoint) const {
    edit(variant, seed, [&](json& report) {
      report["test"]["decoding"]["search"] = search;
      report["test"]["checkpoint"] = checkpoint;
    });
  }

  json summary() const { return ablation_summary(spec, (dir / "spec.json").string(), (dir / "out").string(), ""); }
};

const json& variant_of(const json& summary, const std::string& name) {
  for (const json& v : summary.at("variants")) {
    if (v.at("name") == name) return v;
  }
  throw std::runtime_error("no variant " + name);
}

// Seeds 0.1 perplexity (1%) and 0.1 BLEU apart within each variant, 1 perplexity (10%) and 2 BLEU
// between them: every test decides, even at Holm's level over the sweep's 4 claims.
TEST(AblationSummary, EachMetricCountsItsOwnWay) {
  const Sweep sweep("directions");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 10.1, 29.1);
  sweep.cell("b", 1, "finished", 9.0, 31.0);
  sweep.cell("b", 2, "finished", 9.1, 31.1);
  const json summary = sweep.summary();
  const json& claims = summary.at("claims");
  // Perplexity: lower is better, so b's advantage is a's perplexity minus b's, measured on the
  // test perplexity (the fixture's is the validation value + 0.5).
  EXPECT_EQ(claims[0]["measured_on"], "test_perplexity");
  EXPECT_NEAR(claims[0]["per_seed"][0]["advantage"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(claims[0]["per_seed"][1]["advantage"].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(claims[0]["test"]["quantity"], "log_test_perplexity");
  EXPECT_NEAR(claims[0]["test"]["estimate"].get<double>(),
              (std::log(10.5 / 9.5) + std::log(10.6 / 9.6)) / 2, 1e-12);
  EXPECT_EQ(claims[0]["verdict"], "reproduced");
  EXPECT_EQ(claims[1]["verdict"], "contradicted");
  EXPECT_NEAR(claims[0]["p_value"].get<double>(), claims[1]["p_value"].get<double>(), 1e-15);
  EXPECT_GE(claims[0]["p_holm"].get<double>(), claims[0]["p_value"].get<double>());
  EXPECT_EQ(claims[0]["seed_agreement"], "every seed for the claim");
  // BLEU: higher is better.
  EXPECT_NEAR(claims[2]["per_seed"][1]["advantage"].get<double>(), 2.0, 1e-9);
  EXPECT_EQ(claims[2]["verdict"], "reproduced");
  // a - b in log perplexity, about -0.1, wholly beyond the margin (0.4 perplexity, 4% of b's).
  EXPECT_EQ(claims[3]["equivalent"], (json{"a", "b"}));
  EXPECT_EQ(claims[3]["margin"], 0.4);
  EXPECT_FALSE(claims[3].contains("better"));
  EXPECT_EQ(claims[3]["verdict"], "contradicted");
  const json& b = variant_of(summary, "b");
  EXPECT_EQ(b["vs_baseline"]["verdict"], "reproduced");
  EXPECT_EQ(b["statistics"]["test_bleu"]["n"], 2);
  EXPECT_NEAR(b["statistics"]["test_bleu"]["mean"].get<double>(), 31.05, 1e-9);
  EXPECT_NEAR(b["statistics"]["test_bleu"]["sd"].get<double>(), std::sqrt(0.005), 1e-9);
  // One pool (both variants): BLEU sd sqrt(0.005) with 2 df.
  EXPECT_NEAR(summary["variance_model"]["pool"]["test_bleu"]["sd"].get<double>(), std::sqrt(0.005), 1e-9);
  EXPECT_EQ(summary["variance_model"]["pool"]["test_bleu"]["df"], 2.0);
  EXPECT_EQ(summary["adjustment"]["claims"], 4);
}

// A config pools its seeds only when one budget would have trained them alike: a cell that ended
// at its cap ran exactly that budget, one that stopped early any budget past its last step.
TEST(AblationSummary, SeedsThatRanDifferentBudgetsStayOutOfThePool) {
  const Sweep sweep("budgets");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 10.2, 29.4);
  sweep.cell("b", 1, "finished", 9.0, 31.0);
  sweep.cell("b", 2, "finished", 9.1, 31.1);
  sweep.ended("b", 1, 100, false);
  sweep.ended("b", 2, 100, false);  // both at one cap: alike
  sweep.ended("a", 1, 100, false);
  sweep.ended("a", 2, 150, true);  // stopped early past a's seed 1's cap: another budget
  const json pool = sweep.summary()["variance_model"]["pool"];
  EXPECT_EQ(pool["test_bleu"]["df"], 1.0);  // b's seeds alone
  EXPECT_NEAR(pool["test_bleu"]["sd"].get<double>(), std::sqrt(0.005), 1e-9);
  ASSERT_EQ(pool["left_out"].size(), 1u);
  EXPECT_EQ(pool["left_out"][0]["configs"], (json{"out/a"}));
  EXPECT_EQ(pool["left_out"][0]["why"], "out/a/seed_2 stopped early at step 150, past step 100, where out/a/seed_1 ended at its cap");

  sweep.ended("a", 2, 90, true);  // stopped before the cap: the capped budget trains it alike
  const json alike = sweep.summary()["variance_model"]["pool"];
  EXPECT_EQ(alike["test_bleu"]["df"], 2.0);
  EXPECT_NEAR(alike["test_bleu"]["sd"].get<double>(), std::sqrt((0.08 + 0.005) / 2), 1e-9);
  EXPECT_FALSE(alike.contains("left_out"));

  sweep.ended("a", 2, 200, false);  // two caps
  const json caps = sweep.summary()["variance_model"]["pool"];
  EXPECT_EQ(caps["test_bleu"]["df"], 1.0);
  EXPECT_EQ(caps["left_out"][0]["why"], "out/a/seed_2 ended at its cap at step 200, out/a/seed_1 at step 100");
}

// A comparison holds "within the cap" when one of its cells ended at its cap before patience ran
// out, its last validation its best or not: either may still improve under a larger cap.
TEST(AblationSummary, AComparisonWithACellThatEndedAtItsCapHoldsWithinTheCap) {
  const Sweep sweep("within_cap");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 10.1, 29.1);
  sweep.cell("b", 1, "finished", 9.0, 31.0);
  sweep.cell("b", 2, "finished", 9.1, 31.1);
  const auto within_cap = [&] {
    const json summary = sweep.summary();
    std::vector<bool> flags;
    for (const json& claim : summary.at("claims")) flags.push_back(claim.at("within_cap").get<bool>());
    return flags;
  };
  // Reports without stopped_early (or with every cell stopped by patience) say nothing of a cap.
  EXPECT_EQ(within_cap(), std::vector<bool>(4, false));
  for (const char* variant : {"a", "b"}) {
    for (int seed : {1, 2}) sweep.ended(variant, seed, 300, true, 200);
  }
  EXPECT_EQ(within_cap(), std::vector<bool>(4, false));
  sweep.ended("b", 2, 300, false, 200);  // at its cap a validation past its best, before patience ran out
  EXPECT_EQ(within_cap(), std::vector<bool>(4, true));
  sweep.ended("b", 2, 300, false, 300);  // at its cap, its last validation its best
  EXPECT_EQ(within_cap(), std::vector<bool>(4, true));
}

// Seed agreement is a printed field; the pooled test alone decides (verdict_rule_test.cc).
TEST(AblationSummary, SeedAgreementIsPrinted) {
  const Sweep sweep("agreement");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 10.1, 33.0);
  sweep.cell("b", 1, "finished", 9.0, 28.0);
  sweep.cell("b", 2, "finished", 9.1, 41.0);
  const json summary = sweep.summary();
  const json& claim = summary["claims"][2];  // b's BLEU lead: -1 and +8
  EXPECT_EQ(claim["seed_agreement"], "seeds differ");
  EXPECT_EQ(claim["verdict"], "inconclusive");  // sd sqrt(((4^2 + 13^2) / 2) / 2): no test decides 3.5
}

TEST(AblationSummary, AnEquivalenceNeedsItsTestInsideTheMargin) {
  const Sweep sweep("equivalence");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 10.01, 29.1);
  sweep.cell("b", 1, "finished", 10.0, 30.0);
  sweep.cell("b", 2, "finished", 10.012, 30.1);
  // The difference about 0.0001 in log perplexity against a margin of log(1 + 0.4 / 10.5).
  const json summary = sweep.summary();
  EXPECT_NEAR(summary["claims"][3]["test"]["margin"].get<double>(), std::log1p(0.4 / 10.506), 1e-12);
  EXPECT_EQ(summary["claims"][3]["verdict"], "reproduced");
  sweep.cell("b", 2, "finished", 11.5, 31.0);  // the seed variance now dwarfs the margin
  EXPECT_EQ(sweep.summary()["claims"][3]["verdict"], "inconclusive");
  sweep.cell("b", 2, "non_finite", 11.12, -1.0);  // a divergence is no evidence of equality
  EXPECT_EQ(sweep.summary()["claims"][3]["verdict"], "inconclusive");
}

TEST(AblationSummary, ARunningCellCountsForNothing) {
  const Sweep sweep("running");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 11.0, 29.9);
  sweep.cell("b", 1, "finished", 9.0, 30.0);
  sweep.cell("b", 2, "running", 9.9, -1.0);  // its best so far
  const json summary = sweep.summary();
  const json& stats = variant_of(summary, "b")["statistics"]["best_validation_perplexity"];
  EXPECT_EQ(stats["n"], 1);
  EXPECT_TRUE(stats["sd"].is_null());  // undefined for one value, not 0
  for (const json& claim : summary.at("claims")) {
    EXPECT_EQ(claim["verdict"], "pending") << claim.dump();
    EXPECT_EQ(claim["per_seed"].size(), 1u);
  }
}

TEST(AblationSummary, ADivergedCellDecidesItsSeed) {
  const Sweep sweep("diverged");
  sweep.cell("a", 1, "non_finite", 10.0, -1.0);
  sweep.cell("a", 2, "non_finite", 11.0, -1.0);
  sweep.cell("b", 1, "finished", 9.0, 30.0);
  sweep.cell("b", 2, "finished", 9.9, 31.0);
  const json summary = sweep.summary();
  const json& claims = summary.at("claims");
  EXPECT_EQ(claims[0]["per_seed"][0], (json{{"seed", 1}, {"diverged", {"a"}}}));
  EXPECT_EQ(claims[0]["verdict"], "reproduced");
  EXPECT_FALSE(claims[0].contains("interval"));
  EXPECT_EQ(claims[1]["verdict"], "contradicted");
  EXPECT_FALSE(variant_of(summary, "a")["statistics"].contains("best_validation_perplexity"));

  // Both diverged in a seed: no side wins it.
  sweep.cell("b", 2, "non_finite", 9.9, -1.0);
  const json both = sweep.summary();
  EXPECT_EQ(both["claims"][0]["per_seed"][1], (json{{"seed", 2}, {"diverged", {"b", "a"}}}));
  EXPECT_EQ(both["claims"][0]["verdict"], "inconclusive");
}

TEST(AblationSummary, AMulti30kCellNotDecodedYetKeepsItsClaimsPending) {
  const Sweep sweep("awaiting_decoding");
  sweep.cell("a", 1, "finished", 10.0, 29.0, "multi30k");
  sweep.cell("a", 2, "finished", 11.0, 29.9, "multi30k");
  sweep.cell("b", 1, "finished", 9.0, 30.0, "multi30k");
  sweep.cell("b", 2, "finished", 9.9, -1.0, "multi30k");  // trained, its test split not decoded yet
  const json summary = sweep.summary();
  EXPECT_EQ(variant_of(summary, "b")["cells"][1]["awaiting_decoding"], true);
  EXPECT_EQ(summary["claims"][2]["verdict"], "pending");
}

TEST(AblationSummary, AFinishedCellWithoutTheMetricEndsTheClaimInconclusive) {
  const Sweep sweep("missing");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 11.0, 29.9);
  sweep.cell("b", 1, "finished", 9.0, 30.0);
  sweep.cell("b", 2, "finished", 9.9, -1.0);  // no test figures, and on the copy task none will come
  const json claim = sweep.summary()["claims"][2];
  EXPECT_EQ(claim["per_seed"][1], (json{{"seed", 2}, {"missing", "test_bleu"}}));
  EXPECT_EQ(claim["verdict"], "inconclusive");
}

TEST(AblationSummary, TheCellsBackendIsTheSummarysAndTwoAreAnError) {
  const Sweep sweep("backends");
  EXPECT_TRUE(sweep.summary().at("backend").is_null());  // no cell run yet
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("b", 2, "running", 9.0, 30.0);
  const json summary = sweep.summary();
  EXPECT_EQ(summary.at("backend"), "cpu-avx2");
  EXPECT_EQ(variant_of(summary, "b").at("cells").at(1).at("backend"), "cpu-avx2");
  sweep.cell("b", 1, "finished", 9.0, 30.0, "copy", "cuda");
  try {
    sweep.summary();
    FAIL() << "a summary over cpu-avx2 and cuda cells";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("b/seed_1/report.json: trained on cuda, but "), std::string::npos) << message;
    EXPECT_NE(message.find("a/seed_1/report.json trained on cpu-avx2"), std::string::npos) << message;
  }
}

// BLEU compares cells decoded alike: the same split, kind of checkpoint and search. A cell decoded
// otherwise (greedy among beam cells, an averaged checkpoint among best ones) is an error naming it.
TEST(AblationSummary, TheCellsDecodingIsTheSummarysAndTwoAreAnError) {
  const Sweep sweep("decodings");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("b", 1, "finished", 9.0, 30.0);
  sweep.cell("b", 2, "finished", 9.0, -1.0);  // not decoded: no decoding to compare
  const json expected = {{"split", "test_2016_flickr"},
                         {"checkpoint", "best.safetensors"},
                         {"search", "beam 4, alpha 0.6, max length source + 50"}};
  EXPECT_EQ(sweep.summary().at("decoding"), expected);
  EXPECT_EQ(variant_of(sweep.summary(), "a").at("cells").at(0).at("test_decoding"), expected);
  const auto error_of = [&sweep] {
    try {
      sweep.summary();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  sweep.decoded_with("b", 1, "greedy, max length source + 50", "checkpoints/best.safetensors");
  std::string message = error_of();
  EXPECT_NE(message.find("b/seed_1/report.json: was decoded with {"), std::string::npos) << message;
  EXPECT_NE(message.find("\"search\":\"greedy, max length source + 50\""), std::string::npos) << message;
  EXPECT_NE(message.find("a/seed_1/report.json was decoded with {"), std::string::npos) << message;
  EXPECT_NE(message.find("decode them alike"), std::string::npos) << message;
  sweep.decoded_with("b", 1, "beam 4, alpha 0.6, max length source + 50", "checkpoints/average_5.safetensors");
  message = error_of();
  EXPECT_NE(message.find("\"checkpoint\":\"average_5.safetensors\""), std::string::npos) << message;
  sweep.decoded_with("b", 1, "beam 4, alpha 0.6, max length source + 50", "checkpoints/best.safetensors");
  EXPECT_EQ(sweep.summary().at("decoding"), expected);
}

// A field out of reports/schema.json's range would move a verdict silently (a BLEU of -500 turned
// "contradicted" into "inconclusive"; an unknown status dropped the cell): each is an error naming
// the report and the field.
TEST(AblationSummary, AFieldOutOfTheSchemasRangeIsAnErrorNamingIt) {
  const Sweep sweep("ranges");
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& r) { r["test"]["bleu"] = -500; }, "a/seed_1/report.json: test.bleu: expected a number in [0.0, 100.0], got -500"},
      {[](json& r) { r["test"]["bleu"] = "abc"; }, "test.bleu: expected a number"},
      {[](json& r) { r["test"]["bleu_tok_lc"] = 101; }, "test.bleu_tok_lc: expected a number in [0.0, 100.0]"},
      {[](json& r) { r["test"]["perplexity"] = 0.5; }, "test.perplexity: expected a number in [1.0, "},
      {[](json& r) { r["best"]["validation_loss"] = -1; }, "best.validation_loss: expected a number in [0.0, "},
      {[](json& r) { r["best"]["validation_loss"] = 1e308; }, "best.validation_loss: expected a number in [0.0, "},
      {[](json& r) { r["status"] = "weird"; }, "a/seed_1/report.json: status: expected \"running\""},
      {[](json& r) { r["status"] = 5; }, "status: expected"},
      {[](json& r) { r["curve"] = json::object(); }, "curve: expected an array"},
      {[](json& r) { r["timings"]["train_seconds"] = -3; }, "timings.train_seconds: expected a number"},
  };
  for (const auto& [change, expected] : cases) {
    sweep.cell("a", 1, "finished", 10.0, 29.0);
    sweep.edit("a", 1, change);
    try {
      sweep.summary();
      ADD_FAILURE() << "accepted; expected an error with: " << expected;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(AblationSummary, FinalTrainingLossAveragesTheLastStepsOfTheCurve) {
  // Points of 1, 4 and 2 steps: the last window of 2 is the last point; of 3, the last two
  // points (6 steps), each weighted by its steps; beyond the run, all of it.
  const json curve = json::array({{{"loss", 9.0}, {"steps", 1}}, {{"loss", 3.0}, {"steps", 4}}, {{"loss", 1.0}, {"steps", 2}}});
  EXPECT_EQ(final_training_loss(curve, 2), 1.0);
  EXPECT_EQ(final_training_loss(curve, 3), (4 * 3.0 + 2 * 1.0) / 6);
  EXPECT_EQ(final_training_loss(curve, 100), (9.0 + 4 * 3.0 + 2 * 1.0) / 7);
  EXPECT_EQ(final_training_loss(json::array(), 50), 0.0);
}

// A claim given 3 seeds per arm is pending until its third seed has run, whatever the first two
// show, and stays in Holm's family meanwhile (as p = 1: the family is the claims planned).
TEST(AblationSummary, AClaimWithMoreSeedsWaitsForThemAll) {
  Sweep sweep("claim_seeds");
  sweep.respec([](json& spec) { spec["claims"][0]["seeds"] = 3; });
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 10.1, 29.1);
  sweep.cell("b", 1, "finished", 9.0, 31.0);
  sweep.cell("b", 2, "finished", 9.1, 31.1);
  json summary = sweep.summary();
  EXPECT_EQ(summary["claims"][0]["verdict"], "pending");
  EXPECT_EQ(summary["claims"][0]["seeds"], (json{1, 2, 3}));
  EXPECT_FALSE(summary["claims"][0].contains("p_holm"));
  EXPECT_EQ(summary["claims"][1]["verdict"], "contradicted");
  EXPECT_EQ(summary["adjustment"]["claims"], 4);
  EXPECT_EQ(summary["adjustment"]["pending"], 1);
  EXPECT_EQ(variant_of(summary, "a")["cells"][2]["status"], "not_run");
  sweep.cell("a", 3, "finished", 10.05, 29.05);
  sweep.cell("b", 3, "finished", 9.05, 31.05);
  summary = sweep.summary();
  EXPECT_EQ(summary["claims"][0]["verdict"], "reproduced");
  EXPECT_EQ(summary["claims"][0]["per_seed"].size(), 3u);
  EXPECT_EQ(summary["claims"][2]["per_seed"].size(), 2u);  // the spec's seeds
  EXPECT_EQ(summary["adjustment"]["pending"], 0);
}

// b beats a under the spec's recipe; under recipe r, a improves and b does not. Each arm takes the
// recipe with its lower mean validation perplexity, and the claim is judged on those: a under r
// beats b, and the seed variance is both recipes' pools together.
TEST(AblationSummary, ARecipeCheckJudgesEachArmUnderItsChosenRecipe) {
  Sweep sweep("recipe_check");
  sweep.respec([](json& spec) {
    spec["recipes"] = {{"r", {{"train.clip_norm", 1.0}}}};
    spec["claims"][0]["recipe_check"] = "r";
  });
  sweep.cell("a", 1, "finished", 10.0, 29.0);
  sweep.cell("a", 2, "finished", 10.1, 29.1);
  sweep.cell("b", 1, "finished", 9.0, 31.0);
  sweep.cell("b", 2, "finished", 9.1, 31.1);
  json summary = sweep.summary();
  json claim = summary["claims"][0];
  EXPECT_EQ(claim["verdict"], "reproduced");
  EXPECT_EQ(claim["recipe_check"]["status"], "pending: the verdict is on the spec's recipe until every candidate cell has finished");
  EXPECT_TRUE(claim["recipe_check"]["arms"]["a"]["chosen"].is_null());
  EXPECT_EQ(variant_of(summary, "a,recipe=r")["recipe"], "r");
  EXPECT_FALSE(variant_of(summary, "a,recipe=r").contains("vs_baseline"));

  sweep.cell("a,recipe=r", 1, "finished", 8.0, 33.0);
  sweep.cell("a,recipe=r", 2, "finished", 8.1, 33.1);
  sweep.cell("b,recipe=r", 1, "finished", 9.5, 30.0);
  sweep.cell("b,recipe=r", 2, "non_finite", 9.6, -1.0);  // a diverged candidate loses
  summary = sweep.summary();
  claim = summary["claims"][0];
  EXPECT_EQ(claim["recipe_check"]["status"], "done: the verdict is on the chosen recipes");
  EXPECT_EQ(claim["recipe_check"]["arms"]["a"]["chosen"], "r");
  EXPECT_NEAR(claim["recipe_check"]["arms"]["a"]["mean_validation_perplexity"]["r"].get<double>(), 8.05, 1e-9);
  EXPECT_EQ(claim["recipe_check"]["arms"]["b"]["chosen"], "spec");
  EXPECT_EQ(claim["recipe_check"]["arms"]["b"]["mean_validation_perplexity"]["r"], "diverged");
  EXPECT_EQ(claim["recipes"], (json{{"better", ""}, {"worse", "r"}}));
  EXPECT_NEAR(claim["test"]["estimate"].get<double>(), (std::log(8.5 / 9.5) + std::log(8.6 / 9.6)) / 2, 1e-12);
  EXPECT_EQ(claim["verdict"], "contradicted");
  // Perplexity pools: the spec's recipe (a and b, 1 df each) and r (a's 1 df; b's one finished seed adds none).
  EXPECT_EQ(claim["test"]["seed_df"], 3.0);
  EXPECT_EQ(summary["claims"][1]["test"]["seed_df"], 2.0);  // no check: the spec's pool alone
}

// Cells that decoded Multi30K's three test sets (the repository's data/): a BLEU claim compares on
// the sets one after another once every cell of its arms has them, and on the one split otherwise.
// b's hypotheses are the references; a's drop the last word of every `nth` sentence.
TEST(AblationSummary, ABleuClaimUsesTheThreeTestSetsOnceEveryCellHasThem) {
  Sweep sweep("three_sets");
  std::ofstream(sweep.dir / "base.json") << json{{"model", {{"vocab_size", 16}, {"d_model", 32}, {"heads", 4}}},
                                                 {"data", {{"dataset", "multi30k"}, {"vocabulary", {{"size", 16}}}}}}.dump();
  sweep.respec([](json&) {});
  const std::string data_dir = (fs::path(TREPRO_SOURCE_DIR) / "data").string();
  const CorpusSpec corpus = corpus_spec(sweep.spec.find_variant("a")->config, data_dir);
  const auto hypotheses_of = [&](const std::string& split, int nth) {
    std::vector<std::string> lines = read_split(corpus, split).target;
    for (std::size_t i = 0; nth > 0 && i < lines.size(); i += static_cast<std::size_t>(nth)) {
      lines[i] = lines[i].substr(0, lines[i].rfind(' '));
    }
    return lines;
  };
  const auto decoded = [&](const std::string& variant, int seed, int nth) {
    sweep.cell(variant, seed, "finished", 10.0 + seed, (variant == "b" ? 31.0 : 29.0) + 0.2 * seed, "multi30k");
    sweep.edit(variant, seed, [&](json& report) {
      for (const char* split : {"test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"}) {
        const std::string file = std::string("hypotheses.") + split + ".txt";
        std::ofstream out(sweep.dir / "out" / variant / ("seed_" + std::to_string(seed)) / file);
        for (const std::string& line : hypotheses_of(split, nth)) out << line << "\n";
        report["tests"][split] = {{"split", split}, {"bleu", 30.0}, {"hypotheses_file", file}};
      }
    });
  };
  decoded("a", 1, 2);
  decoded("a", 2, 3);
  decoded("b", 1, 0);
  decoded("b", 2, 0);
  const auto three_sets_bleu = [&](int nth) {
    std::vector<std::string> hypotheses;
    std::vector<std::string> references;
    for (const char* split : {"test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"}) {
      const std::vector<std::string> h = hypotheses_of(split, nth), r = read_split(corpus, split).target;
      hypotheses.insert(hypotheses.end(), h.begin(), h.end());
      references.insert(references.end(), r.begin(), r.end());
    }
    return bleu::corpus_bleu(hypotheses, {references}, bleu::BleuOptions{}).score;
  };
  json summary = ablation_summary(sweep.spec, (sweep.dir / "spec.json").string(), (sweep.dir / "out").string(), data_dir);
  const json& a = variant_of(summary, "a");
  EXPECT_NEAR(a["cells"][0]["test_bleu_three_sets"].get<double>(), three_sets_bleu(2), 1e-9);
  EXPECT_NEAR(a["cells"][1]["test_bleu_three_sets"].get<double>(), three_sets_bleu(3), 1e-9);
  EXPECT_NEAR(variant_of(summary, "b")["cells"][0]["test_bleu_three_sets"].get<double>(), 100.0, 1e-9);
  json claim = summary["claims"][2];
  EXPECT_EQ(claim["measured_on"], "test_bleu_three_sets");
  EXPECT_EQ(claim["test_sets"], (json{"test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"}));
  EXPECT_EQ(claim["evidence"]["quantity"], "test_bleu_three_sets");
  EXPECT_NEAR(claim["advantage"].get<double>(), 100.0 - (three_sets_bleu(2) + three_sets_bleu(3)) / 2, 1e-9);
  EXPECT_GT(claim["evidence"]["test_set_variance"].get<double>(), 0.0);
  EXPECT_EQ(claim["test"]["quantity"], "test_bleu_three_sets");

  sweep.edit("a", 2, [](json& report) { report.erase("tests"); });  // a cell decoded before the three sets
  summary = ablation_summary(sweep.spec, (sweep.dir / "spec.json").string(), (sweep.dir / "out").string(), data_dir);
  claim = summary["claims"][2];
  EXPECT_FALSE(variant_of(summary, "a")["cells"][1].contains("test_bleu_three_sets"));
  EXPECT_EQ(claim["measured_on"], "test_bleu");
  EXPECT_FALSE(claim.contains("test_sets"));
}

}  // namespace
}  // namespace trepro
