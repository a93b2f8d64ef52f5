#include "experiments/ablation/ablation_summary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "core/json_input.h"
#include "experiments/ablation/ablation_statistics.h"
#include "experiments/ablation/twin_cells.h"
#include "experiments/ablation/verdicts.h"
#include "experiments/training/run_report.h"
#include "experiments/bleu/bleu_files.h"
#include "experiments/data/multi30k.h"
#include "experiments/data/parallel_corpus.h"
#include "experiments/run_folder/run_folder.h"
#include "experiments/run_info.h"

namespace trepro {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The largest finite double: the upper bound of a field the schema bounds only from below.
constexpr double kHuge = std::numeric_limits<double>::max();
// Steps averaged for the final training loss: enough to smooth batch-to-batch noise, and one
// window of the reports' training curve.
constexpr std::int64_t kFinalLossWindow = kCurveWindow;
// sacreBLEU on Multi30K's three test sets one after another, for a cell that decoded them all: a
// BLEU claim compares on it once every cell of its arms has it, since the test-set noise that all
// seeds share shrinks with the sentences, not with the seeds.
constexpr const char* kThreeSetsBleu = "test_bleu_three_sets";
// The metrics summarized over seeds, as the cells name them.
constexpr std::array kSeedMetrics = {"best_validation_perplexity", "test_perplexity", "test_bleu", "test_bleu_tok_lc",
                                     kThreeSetsBleu};

// The cell field a claim's metric is measured on. A validation perplexity claim is measured on the
// test perplexity of the checkpoint that validation selected: the best validation value is the
// minimum over the ~36 evaluations early stopping watches, biased low by about its noise per
// evaluation (0.4%), the size of several claimed effects.
std::string cell_key(const ClaimMetric metric) {
  switch (metric) {
    case ClaimMetric::bleu: return "test_bleu";
    case ClaimMetric::bleu_tok_lc: return "test_bleu_tok_lc";
    case ClaimMetric::test_perplexity:
    case ClaimMetric::validation_perplexity: return "test_perplexity";
  }
  return "";
}

bool is_perplexity(ClaimMetric metric) {
  return metric == ClaimMetric::test_perplexity || metric == ClaimMetric::validation_perplexity;
}

// `parent[key]` when it is a number in [low, high] (reports/schema.json's bounds), else an error
// naming the report and the field: a claim's verdict must not rest on a BLEU of -500 or a
// perplexity below 1.
double number_in(const json& parent, const char* key, double low, double high, const std::string& where) {
  const json& value = parent.at(key);
  if (!value.is_number() || !(value.get<double>() >= low && value.get<double>() <= high)) {
    throw std::runtime_error(where + "." + key + ": expected a number in [" + json(low).dump() + ", " +
                             json(high).dump() + "], got " + value.dump());
  }
  return value.get<double>();
}

// The headline numbers of a cell's report into `cell`. Throws nlohmann's exceptions where the
// report lacks a field, and runtime_error naming the field where one is out of the schema's
// range; cell_entry names the file.
void add_report_figures(json& cell, const json& report, const std::string& report_path, const fs::path& folder) {
  if (!report.is_object()) throw std::runtime_error(report_path + ": expected a run report (a JSON object)");
  const json& status = report.at("status");
  if (status != "running" && status != "finished" && status != "non_finite") {
    throw std::runtime_error(report_path + ": status: expected \"running\", \"finished\" or \"non_finite\", got " +
                             status.dump());
  }
  cell["status"] = status;
  cell["backend"] = report.at("backend").get<std::string>();
  // ablate decodes a finished Multi30K cell after training: until then its BLEU is still to come.
  if (cell["status"] == "finished" && !cell_report_complete(report, report_path)) cell["awaiting_decoding"] = true;
  if (report.contains("shared_from")) cell["shared_from"] = report["shared_from"];
  if (!report.contains("curve")) {
    throw std::runtime_error(report_path + ": no \"curve\" (a report of schema_version " +
                             report.value("schema_version", json()).dump() + "; `trepro upgrade-report " +
                             report_path + "` rewrites one of version 1)");
  }
  const json& curve = report.at("curve");
  if (!curve.is_array()) throw std::runtime_error(report_path + ": curve: expected an array, got " + curve.dump());
  cell["steps"] = curve.empty() ? json(0) : curve.back().at("step");
  if (status == "finished" && report.contains("stopped_early")) {
    // Ended by early stopping or at its cap: the variance model pools only the seeds that one
    // budget would have trained alike (verdicts.h), and a comparison with a capped cell holds
    // "within the cap" (ended_at_cap).
    cell["stopped_early"] = report.at("stopped_early").get<bool>();
  }
  if (!curve.empty()) cell["final_training_loss"] = final_training_loss(curve, kFinalLossWindow);
  const json& best = report.at("best");
  if (best.at("step").get<std::int64_t>() > 0) {
    // A perplexity exp(loss) must be finite: below about 709.
    const double loss = number_in(best, "validation_loss", 0.0, std::log(std::numeric_limits<double>::max()),
                                  report_path + ": best");
    cell["best_step"] = best.at("step");
    cell["best_validation_loss"] = loss;
    cell["best_validation_perplexity"] = std::exp(loss);
  }
  const json& test = report.at("test");
  const std::string in_test = report_path + ": test";
  if (test.contains("perplexity")) cell["test_perplexity"] = number_in(test, "perplexity", 1.0, kHuge, in_test);
  for (const char* key : {"bleu", "bleu_tok_lc"}) {
    if (test.contains(key)) cell[std::string("test_") + key] = number_in(test, key, 0.0, 100.0, in_test);
  }
  if (test.contains("bleu_signature")) cell["test_bleu_signature"] = test["bleu_signature"].get<std::string>();
  if (test.contains("hypotheses_file") && test.contains("split")) {
    cell["test_split"] = test["split"];
    cell["hypotheses"] = (folder / test["hypotheses_file"].get<std::string>()).string();
  }
  if (const auto tests = report.find("tests"); tests != report.end() && tests->is_object()) {
    json sets = json::object();
    for (std::string_view split : kMulti30kTestSets) {
      const auto one = tests->find(std::string(split));
      if (one == tests->end() || !one->is_object() || !one->contains("hypotheses_file")) break;
      sets[std::string(split)] = (folder / one->at("hypotheses_file").get<std::string>()).string();
    }
    if (sets.size() == kMulti30kTestSets.size()) cell["test_sets"] = std::move(sets);
  }
  if (test.contains("decoding") && test.contains("checkpoint")) {
    cell["test_decoding"] = {{"split", test.at("split")},
                             {"checkpoint", fs::path(test["checkpoint"].get<std::string>()).filename().string()},
                             {"search", test["decoding"].at("search")}};
  }
  const json& timings = report.at("timings");
  const std::string in_timings = report_path + ": timings";
  cell["target_tokens_per_second"] = number_in(timings, "target_tokens_per_second", 0.0, kHuge, in_timings);
  cell["train_seconds"] = number_in(timings, "train_seconds", 0.0, kHuge, in_timings);
}

// One cell's entry: its report's headline numbers, or status "not_run".
json cell_entry(const std::string& out_dir, const std::string& variant, std::uint64_t seed) {
  const fs::path folder = SweepFolder::cell_relative(variant, seed);
  const RunFolder run(fs::path(out_dir) / folder);
  const fs::path report_path = run.report();
  json cell = {{"seed", seed}, {"report", RunFolder(folder).report()}};
  if (!fs::exists(report_path)) {
    cell["status"] = "not_run";
    return cell;
  }
  const json report = read_json_file(report_path.string());
  try {
    add_report_figures(cell, report, report_path.string(), folder);
  } catch (const json::exception& e) {
    throw std::runtime_error(report_path.string() + ": not a run report of schema_version 2 (" + e.what() + ")");
  }
  return cell;
}

// The one value of a cell field that every cell having it shares (null while none has it), such as
// the backend the cells trained on or how their test split was decoded. Throws naming two cells
// whose values differ: a claim comparing them would measure that difference as well as the
// variants'. `what` reads "<cell> <what> <value>", `remedy` ends the message.
json shared_cell_value(const std::string& out_dir, const std::map<std::string, json>& cells, const std::string& field,
                       const std::string& what, const std::string& remedy) {
  const json* first = nullptr;
  for (const auto& [variant, variant_cells] : cells) {
    for (const json& cell : variant_cells) {
      if (!cell.contains(field)) continue;
      if (first == nullptr) {
        first = &cell;
      } else if (cell[field] != (*first)[field]) {
        const fs::path dir(out_dir);
        const auto shown = [](const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); };
        throw std::runtime_error((dir / cell["report"].get<std::string>()).string() + ": " + what + " " +
                                 shown(cell[field]) + ", but " + (dir / (*first)["report"].get<std::string>()).string() +
                                 " " + what + " " + shown((*first)[field]) + ": " + remedy);
      }
    }
  }
  return first == nullptr ? json() : (*first)[field];
}

// A cell's value of a metric: only a finished run has results (a running one reports its best so
// far, a diverged one stopped short).
std::optional<double> metric_of(const json& cell, const std::string& key) {
  if (cell.value("status", "") != "finished" || !cell.contains(key) || !cell[key].is_number()) return std::nullopt;
  return cell[key].get<double>();
}

bool diverged(const json& cell) { return cell.value("status", "") == "non_finite"; }
bool done(const json& cell) {
  return (cell.value("status", "") == "finished" && !cell.contains("awaiting_decoding")) || diverged(cell);
}

json spread_json(const std::vector<double>& values) {
  const SeedSpread s = seed_spread(values);
  return {{"n", s.n}, {"mean", s.mean}, {"sd", s.n > 1 ? json(s.sd) : json()}, {"values", values}};
}

json seed_statistics(const json& cells) {
  json statistics = json::object();
  for (const char* key : kSeedMetrics) {
    std::vector<double> values;
    for (const json& cell : cells) {
      if (const auto v = metric_of(cell, key)) values.push_back(*v);
    }
    if (!values.empty()) statistics[key] = spread_json(values);
  }
  return statistics;
}

// Sentence statistics of the cells' hypotheses, read once each, against the references of the
// split they decoded (read once per split).
class BleuEvidence {
 public:
  BleuEvidence(std::string out_dir, std::string data_dir) : out_dir_(std::move(out_dir)), data_dir_(std::move(data_dir)) {}

  const std::vector<bleu::BleuStats>* stats(const AblationVariant& variant, const json& cell) {
    if (!cell.contains("hypotheses")) return nullptr;
    return &split_stats(variant, cell["hypotheses"].get<std::string>(), cell["test_split"].get<std::string>());
  }

  // The three test sets' sentences one after another; nullptr unless the cell decoded them all.
  const std::vector<bleu::BleuStats>* three_sets_stats(const AblationVariant& variant, const json& cell) {
    if (!cell.contains("test_sets")) return nullptr;
    const std::string key = "three sets of " + cell["test_sets"].begin()->get<std::string>();
    auto it = stats_.find(key);
    if (it == stats_.end()) {
      std::vector<bleu::BleuStats> all;
      for (std::string_view split : kMulti30kTestSets) {
        const std::vector<bleu::BleuStats>& one =
            split_stats(variant, cell["test_sets"].at(std::string(split)).get<std::string>(), std::string(split));
        all.insert(all.end(), one.begin(), one.end());
      }
      it = stats_.emplace(key, std::move(all)).first;
    }
    return &it->second;
  }

 private:
  const std::vector<bleu::BleuStats>& split_stats(const AblationVariant& variant, const std::string& hypotheses_file,
                                                  const std::string& split) {
    const std::string path = (fs::path(out_dir_) / hypotheses_file).string();
    auto it = stats_.find(path);
    if (it == stats_.end()) {
      const std::vector<std::string>& refs = references(variant, split);
      const std::vector<std::string> hypotheses = bleu::read_text_lines(path);
      if (hypotheses.size() != refs.size()) {
        throw std::runtime_error(path + ": " + std::to_string(hypotheses.size()) + " lines, but the references of " +
                                 split + " have " + std::to_string(refs.size()));
      }
      it = stats_.emplace(path, sentence_bleu_stats(hypotheses, refs)).first;
    }
    return it->second;
  }

  const std::vector<std::string>& references(const AblationVariant& variant, const std::string& split) {
    const DataConfig& data = variant.config.data;
    const std::string key = split + "." + data.source_language + "-" + data.target_language;
    auto it = references_.find(key);
    if (it == references_.end()) {
      it = references_.emplace(key, read_split(corpus_spec(variant.config, data_dir_), split).target).first;
    }
    return it->second;
  }

  std::string out_dir_, data_dir_;
  std::map<std::string, std::vector<std::string>> references_;
  std::map<std::string, std::vector<bleu::BleuStats>> stats_;
};

const json* cell_of_seed(const json& cells, std::uint64_t seed) {
  for (const json& cell : cells) {
    if (cell.at("seed").get<std::uint64_t>() == seed) return &cell;
  }
  return nullptr;
}

// One seed's comparison of `better` with `worse`: the advantage (positive: `better` is better on
// the metric), +-infinity where one side's training diverged, NaN where no side wins (both
// diverged, or a finished cell lacks the metric); nullopt while a cell has not finished.
struct SeedAdvantage {
  json entry;  // {seed, advantage} or {seed, diverged: [names]} or {seed, missing: metric}
  double advantage = 0.0;
  double better_value = 0.0, worse_value = 0.0;  // the metric, where both finished with it
};
std::optional<SeedAdvantage> seed_advantage(std::uint64_t seed, const std::string& better_name, const json& b,
                                            const std::string& worse_name, const json& w, const std::string& key,
                                            double sign) {
  if (!done(b) || !done(w)) return std::nullopt;
  if (diverged(b) || diverged(w)) {
    json names = json::array();
    if (diverged(b)) names.push_back(better_name);
    if (diverged(w)) names.push_back(worse_name);
    const double advantage = names.size() == 2 ? std::nan("") : diverged(w) ? INFINITY : -INFINITY;
    return SeedAdvantage{{{"seed", seed}, {"diverged", names}}, advantage};
  }
  const auto bv = metric_of(b, key), wv = metric_of(w, key);
  if (!bv || !wv) return SeedAdvantage{{{"seed", seed}, {"missing", key}}, std::nan("")};
  const double advantage = sign * (*bv - *wv);
  return SeedAdvantage{{{"seed", seed}, {"advantage", advantage}}, advantage, *bv, *wv};
}

// Finished at the step or epoch cap before patience ran out: not converged by the run's own
// criterion, whether or not its last validation was its best (a cell the cap stopped a validation
// or two past its best may still find a new one under a larger cap), so a comparison with it holds
// "within the cap", not at convergence.
bool ended_at_cap(const json& cell) { return cell.contains("stopped_early") && !cell.at("stopped_early").get<bool>(); }

// The advantage of `better` over `worse` per seed and pooled, and the evidence the verdict step
// (verdicts.h) tests with the pooled seed variance: for sacreBLEU the mean over seeds of the
// difference on the whole test set with the paired bootstrap's variance of it (the test set's
// part, which seeds do not average out); for a perplexity the mean log test perplexity
// difference. The verdict waits for every seed's cells to finish or diverge; `margin` > 0 makes
// it an equivalence claim's.
json compare(const AblationVariant& better, const json& better_cells, const AblationVariant& worse,
             const json& worse_cells, ClaimMetric metric, BleuEvidence& evidence, const std::vector<std::uint64_t>& seeds,
             double margin = 0.0) {
  bool three_sets = metric == ClaimMetric::bleu;
  for (std::uint64_t seed : seeds) {
    three_sets = three_sets && cell_of_seed(better_cells, seed)->contains(kThreeSetsBleu) &&
                 cell_of_seed(worse_cells, seed)->contains(kThreeSetsBleu);
  }
  const std::string key = three_sets ? kThreeSetsBleu : cell_key(metric);
  const double sign = higher_is_better(metric) ? 1.0 : -1.0;
  json per_seed = json::array();
  std::vector<double> advantages, finite, log_advantages, worse_values;
  std::vector<SystemPair> pairs;
  bool every_pair_has_hypotheses = true, within_cap = false;
  for (std::uint64_t seed : seeds) {
    const json& b = *cell_of_seed(better_cells, seed);
    const json& w = *cell_of_seed(worse_cells, seed);
    const std::optional<SeedAdvantage> a = seed_advantage(seed, better.name, b, worse.name, w, key, sign);
    if (!a) continue;
    per_seed.push_back(a->entry);
    advantages.push_back(a->advantage);
    within_cap = within_cap || ended_at_cap(b) || ended_at_cap(w);
    if (!std::isfinite(a->advantage)) continue;
    finite.push_back(a->advantage);
    if (is_perplexity(metric)) {
      log_advantages.push_back(std::log(a->worse_value) - std::log(a->better_value));
      worse_values.push_back(a->worse_value);
    }
    const auto* bs = three_sets ? evidence.three_sets_stats(better, b) : evidence.stats(better, b);
    const auto* ws = three_sets ? evidence.three_sets_stats(worse, w) : evidence.stats(worse, w);
    if (bs && ws) {
      pairs.emplace_back(*bs, *ws);
    } else {
      every_pair_has_hypotheses = false;
    }
  }
  json result = {{"metric", to_string(metric)}, {"measured_on", key}, {"per_seed", per_seed}, {"within_cap", within_cap}};
  if (three_sets) {
    result["test_sets"] = json::array();
    for (std::string_view split : kMulti30kTestSets) result["test_sets"].push_back(std::string(split));
  }
  if (const std::optional<MeanDifference> over_seeds = t_interval(finite)) {
    result["seed_interval"] = {over_seeds->interval.low, over_seeds->interval.high};
  }
  if (!finite.empty()) {
    const bool all_for = std::all_of(finite.begin(), finite.end(), [](double a) { return a > 0; });
    const bool all_against = std::all_of(finite.begin(), finite.end(), [](double a) { return a < 0; });
    result["seed_agreement"] = all_for ? "every seed for the claim" : all_against ? "every seed against it" : "seeds differ";
    result["advantage"] = seed_spread(finite).mean;
  }
  json claim_evidence = {{"n_better", finite.size()}, {"n_worse", finite.size()}, {"test_set_variance", 0.0}};
  if (metric == ClaimMetric::bleu && !pairs.empty() && every_pair_has_hypotheses) {
    const BootstrapResult r = paired_bootstrap(pairs, kBootstrapResamples, kBootstrapSeed);
    result["advantage"] = r.difference;
    result["test_set"] = {{"method", "paired bootstrap over test sentences, pooled over seeds"},
                          {"interval", {r.interval.low, r.interval.high}},
                          {"variance", r.variance},
                          {"p_value", r.p_value},
                          {"p_value_sacrebleu", r.p_value_sacrebleu}};
    claim_evidence.update({{"quantity", key}, {"estimate", r.difference}, {"test_set_variance", r.variance}});
  } else if (is_perplexity(metric)) {
    claim_evidence.update({{"quantity", "log_test_perplexity"}, {"estimate", seed_spread(log_advantages).mean}});
  } else {
    claim_evidence.update({{"quantity", key}, {"estimate", seed_spread(finite).mean}});
  }
  // A perplexity margin is the spec's, in perplexity; the test is on logs, around the worse arm.
  if (margin > 0.0) {
    claim_evidence["margin"] = is_perplexity(metric) && !worse_values.empty()
                                   ? std::log1p(margin / seed_spread(worse_values).mean) : margin;
  }
  if (advantages.size() < seeds.size()) {
    result["verdict"] = "pending";
  } else if (const std::optional<std::string> decided = margin > 0.0 ? std::nullopt : divergence_verdict(advantages)) {
    result["verdict"] = *decided;
    result["method"] = "a divergence in every seed: no test";
  } else if (finite.size() < advantages.size() || finite.empty()) {
    result["verdict"] = "inconclusive";
    result["method"] = "a training diverged or lacks the metric in some seed: no test";
  } else {
    result["evidence"] = claim_evidence;
    result["verdict"] = "inconclusive";  // until verdicts.h tests the evidence
  }
  return result;
}

// Per config with 2 seeds or more that decoded the test split: each pair of its seeds' BLEU
// difference with the paired bootstrap's variance of it, the A/A comparisons that calibrate the
// bootstrap against the spread between seeds (verdicts.h).
json aa_bootstrap(const AblationVariant& variant, const json& cells, BleuEvidence& evidence) {
  std::vector<std::pair<std::uint64_t, const std::vector<bleu::BleuStats>*>> systems;
  for (const json& cell : cells) {
    if (!metric_of(cell, "test_bleu") || cell.contains("awaiting_decoding")) continue;
    if (const auto* stats = evidence.stats(variant, cell)) systems.emplace_back(cell.at("seed").get<std::uint64_t>(), stats);
  }
  if (systems.size() < 2) return nullptr;
  json pairs = json::array();
  double sum = 0.0;
  for (std::size_t i = 0; i < systems.size(); ++i) {
    for (std::size_t j = i + 1; j < systems.size(); ++j) {
      const BootstrapResult r = paired_bootstrap({{*systems[i].second, *systems[j].second}}, kBootstrapResamples, kBootstrapSeed);
      pairs.push_back({{"seeds", {systems[i].first, systems[j].first}}, {"difference", r.difference}, {"bootstrap_variance", r.variance}});
      sum += r.variance;
    }
  }
  // Var(B_i - B_j) = 2 v for two systems of one config: v is one system's share.
  return {{"pairs", pairs}, {"n", systems.size()}, {"per_system_variance", sum / static_cast<double>(pairs.size()) / 2.0}};
}

// One arm of a recipe check: the variant whose recipe (the spec's or the check's) has the lower
// mean best validation perplexity over the claim's seeds, a cell that diverged or never validated
// counting as infinite; undecided while a candidate cell has not finished.
struct RecipeChoice {
  const AblationVariant* variant = nullptr;
  json record;
  bool decided = false;
};
RecipeChoice choose_recipe(const AblationSpec& spec, const AblationClaim& claim, const std::string& arm,
                           const std::map<std::string, json>& cells) {
  const AblationVariant* candidates[] = {spec.find_variant(arm), spec.find_variant(recipe_variant_name(arm, claim.recipe_check))};
  json means = json::object();
  std::optional<double> mean[2];
  for (int i = 0; i < 2; ++i) {
    double sum = 0.0;
    bool every_seed_done = true;
    for (std::uint64_t seed : claim.seeds) {
      const json& cell = *cell_of_seed(cells.at(candidates[i]->name), seed);
      const std::optional<double> value = metric_of(cell, "best_validation_perplexity");
      every_seed_done = every_seed_done && done(cell);
      sum += value ? *value : INFINITY;
    }
    if (every_seed_done) mean[i] = sum / static_cast<double>(claim.seeds.size());
    const std::string recipe = i == 0 ? "spec" : claim.recipe_check;
    means[recipe] = !mean[i] ? json() : std::isfinite(*mean[i]) ? json(*mean[i]) : json("diverged");
  }
  RecipeChoice choice{candidates[0], {{"mean_validation_perplexity", means}}, mean[0] && mean[1]};
  if (choice.decided && *mean[1] < *mean[0]) choice.variant = candidates[1];
  choice.record["chosen"] = !choice.decided ? json() : json(choice.variant->recipe.empty() ? "spec" : choice.variant->recipe);
  return choice;
}

// A claim's comparison; with a recipe check, of the arms under their chosen recipes once every
// candidate cell has finished (until then, under the spec's, and saying so).
json compare_claim(const AblationSpec& spec, const AblationClaim& claim, const std::map<std::string, json>& cells,
                   BleuEvidence& evidence) {
  const AblationVariant* better = spec.find_variant(claim.better);
  const AblationVariant* worse = spec.find_variant(claim.worse);
  json check;
  if (!claim.recipe_check.empty()) {
    const RecipeChoice b = choose_recipe(spec, claim, claim.better, cells), w = choose_recipe(spec, claim, claim.worse, cells);
    check = {{"recipe", claim.recipe_check},
             {"overrides", spec.recipes.at(claim.recipe_check)},
             {"chosen_on", "the lower mean best validation perplexity over the claim's seeds"},
             {"arms", {{claim.better, b.record}, {claim.worse, w.record}}}};
    if (b.decided && w.decided) {
      better = b.variant;
      worse = w.variant;
      check["status"] = "done: the verdict is on the chosen recipes";
    } else {
      check["status"] = "pending: the verdict is on the spec's recipe until every candidate cell has finished";
    }
  }
  json entry = compare(*better, cells.at(better->name), *worse, cells.at(worse->name), claim.metric, evidence, claim.seeds,
                       claim.margin);
  entry["seeds"] = claim.seeds;
  if (!check.is_null()) {
    entry["recipe_check"] = std::move(check);
    entry["recipes"] = {{"better", better->recipe}, {"worse", worse->recipe}};
  }
  return entry;
}

}  // namespace

double final_training_loss(const json& curve, std::int64_t window) {
  double sum = 0.0;
  std::int64_t covered = 0;
  for (auto point = curve.rbegin(); point != curve.rend() && covered < window; ++point) {
    const std::int64_t steps = point->at("steps").get<std::int64_t>();
    sum += point->at("loss").get<double>() * static_cast<double>(steps);
    covered += steps;
  }
  return covered == 0 ? 0.0 : sum / static_cast<double>(covered);
}

json ablation_summary(const AblationSpec& spec, const std::string& spec_path, const std::string& out_dir,
                      const std::string& data_dir) {
  std::map<std::string, json> cells;
  json variants = json::array();
  BleuEvidence evidence(out_dir, data_dir);
  for (const AblationVariant& variant : spec.variants) {
    json& variant_cells = cells[variant.name] = json::array();
    for (std::uint64_t seed : variant.seeds) {
      json cell = cell_entry(out_dir, variant.name, seed);
      if (done(cell) && !diverged(cell) && cell.contains("test_sets")) {
        cell[kThreeSetsBleu] = corpus_bleu_of(*evidence.three_sets_stats(variant, cell));
      }
      variant_cells.push_back(std::move(cell));
    }
    json entry = {{"name", variant.name},
                  {"set", variant.set},
                  {"config_hash", config_hash(variant.config)},
                  {"cells", variant_cells},
                  {"statistics", seed_statistics(variant_cells)}};
    if (!variant.recipe.empty()) entry["recipe"] = variant.recipe;
    variants.push_back(std::move(entry));
  }
  json backend = shared_cell_value(out_dir, cells, "backend", "trained on",
                                   "a spec's cells stay on one backend, so that no comparison mixes two; move one "
                                   "backend's cells to a folder of their own (as reports/ablations/norm_warmup_cpu/ "
                                   "holds norm_warmup's cpu-avx2 cells)");
  json decoding = shared_cell_value(out_dir, cells, "test_decoding", "was decoded with",
                                    "the cells' BLEU is compared only when every cell decoded the same split from the "
                                    "same kind of checkpoint with the same search; decode them alike (`trepro evaluate "
                                    "CELL` with the same options)");
  for (json& entry : variants) {
    const std::string name = entry["name"];
    json aa = aa_bootstrap(*spec.find_variant(name), cells[name], evidence);
    if (!aa.is_null()) entry["aa_bootstrap"] = std::move(aa);
  }
  if (!spec.baseline.empty()) {
    const AblationVariant& baseline = *spec.find_variant(spec.baseline);
    for (json& entry : variants) {
      const std::string name = entry["name"];
      if (name == spec.baseline || entry.contains("recipe")) continue;
      entry["vs_baseline"] = compare(*spec.find_variant(name), cells[name], baseline, cells[spec.baseline],
                                     ClaimMetric::bleu, evidence, spec.seeds);
    }
  }
  json claims = json::array();
  for (const AblationClaim& claim : spec.claims) {
    json entry = compare_claim(spec, claim, cells, evidence);
    entry["claim"] = claim.claim;
    if (claim.paper) entry["paper"] = {{"better", claim.paper->better}, {"worse", claim.paper->worse}};
    if (claim.equivalence()) {
      entry["equivalent"] = {claim.better, claim.worse};
      entry["margin"] = claim.margin;
    } else {
      entry["better"] = claim.better;
      entry["worse"] = claim.worse;
    }
    claims.push_back(std::move(entry));
  }
  json summary = {{"schema_version", 2},
          {"kind", "ablation"},
          {"created", utc_now()},
          {"git_commit", git_commit()},
          {"name", spec.name},
          {"description", spec.description},
          {"spec", spec_path},
          {"base", spec.base_path},
          {"overrides", spec.overrides},
          {"seeds", spec.seeds},
          {"recipes", spec.recipes},
          {"backend", std::move(backend)},
          {"decoding", std::move(decoding)},
          {"baseline", spec.baseline.empty() ? json() : json(spec.baseline)},
          {"bootstrap", {{"resamples", kBootstrapResamples}, {"seed", kBootstrapSeed}, {"confidence", 0.95}}},
          {"final_training_loss_window", kFinalLossWindow},
          {"variants", std::move(variants)},
          {"claims", std::move(claims)}};
  // Alone, a sweep's verdicts pool its own configs and adjust over its own claims; `trepro
  // verdicts` redoes both over every sweep of the folder.
  fs::path folder = fs::path(out_dir);
  if (folder.filename().empty()) folder = folder.parent_path();
  std::vector<SweepSummary> alone = {{folder.filename().string(), std::move(summary)}};
  apply_verdicts(alone, "this sweep alone (`trepro verdicts` adjusts over every sweep of its folder)");
  return std::move(alone.front().summary);
}

}  // namespace trepro
