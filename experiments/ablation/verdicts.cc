#include "experiments/ablation/verdicts.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/json_input.h"
#include "experiments/ablation/ablation_spec.h"
#include "experiments/ablation/ablation_statistics.h"
#include "experiments/ablation/verdict_rule.h"
#include "experiments/run_folder/run_folder.h"

namespace trepro {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::array kQuantities = {"test_bleu", "test_bleu_tok_lc", "test_bleu_three_sets", "log_test_perplexity"};

// Configs pool their seed variance with those of the same backend and recipe: the spec's base
// and common overrides, and the variant's second recipe where it runs one (a recipe check's).
std::string recipe_key(const json& summary, const std::string& recipe = "") {
  std::string key = summary.value("backend", json()).dump() + "|" + summary.value("base", json()).dump() + "|" +
                    summary.value("overrides", json::object()).dump();
  if (!recipe.empty()) key += "|" + summary.at("recipes").at(recipe).dump();
  return key;
}

// A cell's value of a pooled quantity: only a finished, decoded run counts.
std::optional<double> quantity_of(const json& cell, const std::string& quantity) {
  if (cell.value("status", "") != "finished" || cell.contains("awaiting_decoding")) return std::nullopt;
  const std::string key = quantity == "log_test_perplexity" ? "test_perplexity" : quantity;
  if (!cell.contains(key) || !cell[key].is_number()) return std::nullopt;
  const double value = cell[key].get<double>();
  return quantity == "log_test_perplexity" ? std::log(value) : value;
}

double sample_variance(const std::vector<double>& values) {
  const SeedSpread s = seed_spread(values);
  return s.sd * s.sd;
}

std::string cell_path(const std::string& folder, const json& variant, const json& cell) {
  return folder + "/" + variant.at("name").get<std::string>() + "/seed_" + std::to_string(cell.at("seed").get<std::uint64_t>());
}

// Which sweeps count, the cells' origins and the configs they pool.
class SweepSet {
 public:
  explicit SweepSet(std::vector<SweepSummary>& sweeps) : sweeps_(sweeps) {
    for (std::size_t i = 0; i < sweeps.size(); ++i) {
      const std::string& folder = sweeps[i].folder;
      json& s = sweeps[i].summary;
      s.erase("superseded_by");
      if (folder.size() > 4 && folder.ends_with("_cpu")) {
        for (const SweepSummary& other : sweeps) {
          if (!other.folder.ends_with("_cpu") && other.summary.value("spec", json()) == s.value("spec", json())) {
            s["superseded_by"] = other.folder;
          }
        }
      }
      for (const json& variant : s.at("variants")) {
        for (const json& cell : variant.at("cells")) cells_[cell_path(folder, variant, cell)] = &cell;
      }
    }
  }

  bool counts(std::size_t sweep) const { return !sweeps_[sweep].summary.contains("superseded_by"); }

  // The cell a copy was made from, followed through copies of copies.
  std::string origin(const std::string& path) const {
    std::string at = path;
    for (std::size_t hops = 0; hops < cells_.size(); ++hops) {
      const auto it = cells_.find(at);
      if (it == cells_.end() || !it->second->contains("shared_from")) return at;
      at = (*it->second)["shared_from"].get<std::string>();
    }
    return at;
  }

  // The origins of a variant's cells of the given seeds (all when empty).
  std::set<std::string> origins(std::size_t sweep, const std::string& variant_name) const {
    std::set<std::string> out;
    for (const json& variant : sweeps_[sweep].summary.at("variants")) {
      if (variant.at("name") != variant_name) continue;
      for (const json& cell : variant.at("cells")) {
        if (cell.value("status", "") != "not_run") out.insert(origin(cell_path(sweeps_[sweep].folder, variant, cell)));
      }
    }
    return out;
  }

 private:
  std::vector<SweepSummary>& sweeps_;
  std::map<std::string, const json*> cells_;
};

struct Pool {
  json description;
  json left_out = json::array();  // the configs whose seeds ran different budgets, and why
  std::map<std::string, std::vector<SeedSample>> samples;
  std::map<std::string, PooledVariance> pooled;
};

struct VarianceModel {
  std::map<std::string, Pool> pools;  // by recipe_key
  std::optional<Calibration> calibration;
};

// Why a config's cells (by origin) differ by more than their seed, or empty when they do not: one
// budget (train.max_steps, data.epochs) must have trained them all alike. A cell that ended at its
// cap ran exactly its budget, and one that stopped early any budget past its last step; so the
// capped ones must share their last step, and none that stopped early may have gone past it.
std::string budgets_differ(const std::map<std::string, const json*>& cells) {
  std::string capped, went_furthest;
  std::int64_t cap = 0, furthest = 0;
  for (const auto& [origin, cell] : cells) {
    if (cell->value("status", "") != "finished" || !cell->contains("stopped_early")) continue;
    const std::int64_t steps = cell->at("steps").get<std::int64_t>();
    if (cell->at("stopped_early").get<bool>()) {
      if (went_furthest.empty() || steps > furthest) {
        went_furthest = origin;
        furthest = steps;
      }
    } else if (capped.empty()) {
      capped = origin;
      cap = steps;
    } else if (steps != cap) {
      return origin + " ended at its cap at step " + std::to_string(steps) + ", " + capped + " at step " + std::to_string(cap);
    }
  }
  if (!capped.empty() && !went_furthest.empty() && furthest > cap) {
    return went_furthest + " stopped early at step " + std::to_string(furthest) + ", past step " + std::to_string(cap) +
           ", where " + capped + " ended at its cap";
  }
  return "";
}

// One config per group of variants that share a cell (twins), its cells counted once.
VarianceModel variance_model(const std::vector<SweepSummary>& sweeps, const SweepSet& set) {
  struct Member {
    std::size_t sweep;
    const json* variant;
  };
  std::vector<Member> members;
  std::vector<std::size_t> parent;
  std::map<std::string, std::size_t> first_with_origin;
  const auto find = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (std::size_t s = 0; s < sweeps.size(); ++s) {
    if (!set.counts(s)) continue;
    for (const json& variant : sweeps[s].summary.at("variants")) {
      const std::size_t index = members.size();
      members.push_back({s, &variant});
      parent.push_back(index);
      for (const json& cell : variant.at("cells")) {
        const std::string o = set.origin(cell_path(sweeps[s].folder, variant, cell));
        const auto [it, fresh] = first_with_origin.emplace(o, index);
        if (!fresh) parent[find(index)] = find(it->second);
      }
    }
  }
  std::map<std::size_t, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < members.size(); ++i) groups[find(i)].push_back(i);
  VarianceModel model;
  std::vector<CalibrationSample> calibration;
  for (const auto& [root, indices] : groups) {
    const json& summary = sweeps[members[indices.front()].sweep].summary;
    const std::string recipe = members[indices.front()].variant->value("recipe", "");
    Pool& pool = model.pools[recipe_key(summary, recipe)];
    pool.description = {{"backend", summary.value("backend", json())},
                        {"base", summary.value("base", json())},
                        {"overrides", summary.value("overrides", json::object())}};
    if (!recipe.empty()) pool.description["recipe"] = summary.at("recipes").at(recipe);
    std::map<std::string, const json*> unique;  // by origin
    for (std::size_t i : indices) {
      for (const json& cell : members[i].variant->at("cells")) {
        unique.emplace(set.origin(cell_path(sweeps[members[i].sweep].folder, *members[i].variant, cell)), &cell);
      }
    }
    if (const std::string why = budgets_differ(unique); !why.empty()) {
      json configs = json::array();
      for (std::size_t i : indices) {
        configs.push_back(sweeps[members[i].sweep].folder + "/" + members[i].variant->at("name").get<std::string>());
      }
      pool.left_out.push_back({{"configs", configs}, {"why", why}});
      continue;
    }
    for (const char* quantity : kQuantities) {
      std::vector<double> values;
      for (const auto& [origin, cell] : unique) {
        if (const auto v = quantity_of(*cell, quantity)) values.push_back(*v);
      }
      pool.samples[quantity].push_back({values.size() > 1 ? sample_variance(values) : 0.0, values.size()});
      if (std::string(quantity) != "test_bleu") continue;
      for (std::size_t i : indices) {
        const json& aa = members[i].variant->value("aa_bootstrap", json());
        if (aa.is_object() && aa.at("n").get<std::size_t>() == values.size()) {
          calibration.push_back({sample_variance(values), aa.at("per_system_variance").get<double>(), values.size()});
          break;
        }
      }
    }
  }
  for (auto& [key, pool] : model.pools) {
    for (const auto& [quantity, samples] : pool.samples) pool.pooled[quantity] = pool_variances(samples);
  }
  model.calibration = calibrate(calibration);
  return model;
}

json pool_json(const Pool& pool) {
  json out = pool.description;
  for (const auto& [quantity, p] : pool.pooled) {
    out[quantity] = {{"sd", p.df > 0 ? json(std::sqrt(p.variance)) : json()}, {"df", p.df}, {"configs", p.configs}};
  }
  if (!pool.left_out.empty()) out["left_out"] = pool.left_out;
  return out;
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

// A claim (or comparison with the baseline) tested against its pool: claim["test"], "p_value"
// and "method"; false when it has no evidence or its pool no degrees of freedom.
bool test_claim(json& claim, const Pool* pool) {
  for (const char* key : {"test", "p_value", "interval"}) claim.erase(key);
  if (!claim.contains("evidence")) return false;
  const json& e = claim["evidence"];
  const std::string quantity = e.at("quantity");
  const PooledVariance* pooled = nullptr;
  if (pool && pool->pooled.count(quantity)) pooled = &pool->pooled.at(quantity);
  if (!pooled || pooled->df <= 0) {
    claim["method"] = "no test: no config of its backend and recipe has 2 seeds of " + quantity;
    return false;
  }
  const double estimate = e.at("estimate").get<double>(), test_set = e.at("test_set_variance").get<double>();
  const ErrorModel error = error_model(pooled->variance, pooled->df, e.at("n_better").get<std::size_t>(),
                                       e.at("n_worse").get<std::size_t>(), test_set);
  if (!(error.standard_error > 0.0)) {  // identical values in every seed of every config: nothing to test against
    claim["method"] = "no test: the pooled seed variance of " + quantity + " and its test-set variance are both 0";
    return false;
  }
  json test = {{"quantity", quantity},
               {"estimate", estimate},
               {"standard_error", error.standard_error},
               {"df", error.df},
               {"seed_sd", std::sqrt(pooled->variance)},
               {"seed_df", pooled->df},
               {"test_set_variance", test_set}};
  std::string method = quantity == "log_test_perplexity"
                           ? "log test perplexity of the checkpoint validation selected (not the best validation value, "
                             "which selection biases low), mean over seeds"
                           : quantity + " difference, mean over seeds";
  method += "; Student's t (df " + fixed(error.df, 1) + ") with the seed variance pooled over the configs of its backend "
            "and recipe (sd " + fixed(std::sqrt(pooled->variance), 4) + ", df " + fixed(pooled->df, 0) + ")";
  if (test_set > 0) method += " plus the paired bootstrap's test-set variance";
  if (e.contains("margin")) {
    const double margin = e.at("margin").get<double>();
    const EquivalenceTest t = equivalence_test(estimate, error, margin);
    const bool inside = std::abs(estimate) < margin;
    test["margin"] = margin;
    test["p_equivalent"] = t.p_equivalent;
    test["p_beyond"] = t.p_beyond;
    test["interval_90"] = {t.interval.low, t.interval.high};
    claim["interval"] = test["interval_90"];
    claim["p_value"] = inside ? t.p_equivalent : t.p_beyond;
    method += "; equivalence within +-" + fixed(margin, 3) + " by two one-sided tests (p: TOST's inside the margin, "
              "the test of a difference beyond it outside)";
  } else {
    const DifferenceTest t = directional_test(estimate, error);
    test["statistic"] = t.statistic;
    test["interval"] = {t.interval.low, t.interval.high};
    claim["interval"] = test["interval"];
    claim["p_value"] = t.p_value;
    method += "; two-sided";
  }
  claim["test"] = std::move(test);
  claim["method"] = method;
  return true;
}

std::string decided_verdict(const json& claim, double adjusted) {
  if (!(adjusted < kVerdictAlpha)) return "inconclusive";
  const json& test = claim.at("test");
  const double estimate = test.at("estimate").get<double>();
  if (test.contains("margin")) return std::abs(estimate) < test.at("margin").get<double>() ? "reproduced" : "contradicted";
  return estimate > 0 ? "reproduced" : "contradicted";
}

// The paper's effect in the test's units: BLEU scaled to this sweep's range by its baseline's
// BLEU over the paper's base 25.8; a perplexity as its log ratio (scale-free). The baseline is
// taken under the recipe the claim's worse arm is judged on where the sweep ran it, since a
// recipe moves the BLEU level and only the new cells have the three test sets' quantity.
std::optional<double> paper_effect(const json& claim, const json& summary) {
  if (!claim.contains("paper") || !claim.contains("test")) return std::nullopt;
  const double better = claim["paper"].at("better").get<double>(), worse = claim["paper"].at("worse").get<double>();
  const std::string quantity = claim["test"].at("quantity");
  if (quantity == "log_test_perplexity") return std::log(worse / better);
  const json baseline_field = summary.value("baseline", json());
  if (!baseline_field.is_string()) return std::nullopt;
  const std::string baseline = baseline_field.get<std::string>();
  std::vector<std::string> references;
  if (const std::string recipe = claim.contains("recipes") ? claim["recipes"].at("worse").get<std::string>() : "";
      !recipe.empty())
    references.push_back(recipe_variant_name(baseline, recipe));
  references.push_back(baseline);
  for (const std::string& reference : references)
    for (const json& variant : summary.at("variants")) {
      if (variant.at("name") != reference || !variant.at("statistics").contains(quantity)) continue;
      return (better - worse) * variant["statistics"][quantity].at("mean").get<double>() / kPaperBaseBleu;
    }
  return std::nullopt;
}

json power_json(const json& claim, const json& summary, double level) {
  const json& test = claim.at("test");
  PowerQuestion q;
  q.seed_variance = std::pow(test.at("seed_sd").get<double>(), 2);
  q.seed_df = test.at("seed_df").get<double>();
  q.seeds_now = std::min(claim.at("evidence").at("n_better").get<std::size_t>(), claim.at("evidence").at("n_worse").get<std::size_t>());
  q.test_set_variance = test.at("test_set_variance").get<double>();
  q.level = level;
  q.margin = test.value("margin", 0.0);
  const auto seeds = [&](std::optional<double> effect) -> json {
    if (!effect) return nullptr;
    q.effect = *effect;
    const std::optional<std::size_t> n = seeds_for_power(q, kPowerTarget);
    return n ? json(*n) : json("more than " + std::to_string(kMaxSeedsPerArm));
  };
  const std::optional<double> paper = paper_effect(claim, summary);
  return {{"level", level},
          {"target", kPowerTarget},
          {"paper_effect", paper ? json(*paper) : json()},
          {"observed_effect", test.at("estimate")},
          {"seeds_per_arm_at_paper_effect", seeds(paper)},
          {"seeds_per_arm_at_observed_effect", seeds(test.at("estimate").get<double>())}};
}

// The pool a claim is tested against: its arms' recipe's; where a recipe check chose two different
// recipes, both pools together (the seed variance taken as alike under the two), made once into
// `merged`.
const Pool* claim_pool(const json& claim, const json& summary, const VarianceModel& model, std::map<std::string, Pool>& merged) {
  const auto find = [&](const std::string& key) -> const Pool* {
    const auto it = model.pools.find(key);
    return it == model.pools.end() ? nullptr : &it->second;
  };
  if (!claim.contains("recipes")) return find(recipe_key(summary));
  const std::string better = recipe_key(summary, claim["recipes"].at("better").get<std::string>());
  const std::string worse = recipe_key(summary, claim["recipes"].at("worse").get<std::string>());
  if (better == worse) return find(better);
  const Pool *a = find(better), *b = find(worse);
  if (!a || !b) return nullptr;
  const std::string key = better + "+" + worse;
  if (const auto it = merged.find(key); it != merged.end()) return &it->second;
  Pool both;
  both.description = {a->description, b->description};
  both.samples = a->samples;
  for (const auto& [quantity, samples] : b->samples) {
    both.samples[quantity].insert(both.samples[quantity].end(), samples.begin(), samples.end());
  }
  for (const auto& [quantity, samples] : both.samples) both.pooled[quantity] = pool_variances(samples);
  return &merged.emplace(key, std::move(both)).first->second;
}

}  // namespace

void apply_verdicts(std::vector<SweepSummary>& sweeps, const std::string& scope) {
  SweepSet set(sweeps);
  const VarianceModel model = variance_model(sweeps, set);
  struct ClaimRef {
    std::size_t sweep;
    json* claim;
    std::string id;
    bool pending = false;  // in the family as p = 1: its seeds were planned, their cells not all run
  };
  std::map<std::string, Pool> merged_pools;
  std::vector<ClaimRef> family;
  std::vector<double> raw;
  json folders = json::array();
  for (std::size_t s = 0; s < sweeps.size(); ++s) {
    json& summary = sweeps[s].summary;
    const auto it = model.pools.find(recipe_key(summary));
    const Pool* pool = it == model.pools.end() ? nullptr : &it->second;
    if (set.counts(s)) folders.push_back(sweeps[s].folder);
    for (json& variant : summary.at("variants")) {
      if (!variant.contains("vs_baseline")) continue;
      json& comparison = variant["vs_baseline"];
      if (test_claim(comparison, pool)) comparison["verdict"] = decided_verdict(comparison, comparison["p_value"].get<double>());
    }
    json& claims = summary.at("claims");
    for (std::size_t c = 0; c < claims.size(); ++c) {
      json& claim = claims[c];
      for (const char* key : {"p_holm", "q_bh", "power", "shares_cells_with"}) claim.erase(key);
      claim["id"] = sweeps[s].folder + "#" + std::to_string(c + 1);
      claim["backend"] = summary.value("backend", json());
      const bool tested = test_claim(claim, claim_pool(claim, summary, model, merged_pools));
      if (tested && set.counts(s)) {
        family.push_back({s, &claim, claim["id"]});
        raw.push_back(claim["p_value"].get<double>());
      } else if (set.counts(s) && claim.value("verdict", "") == "pending") {
        // Holm's family is the claims planned, not those whose cells have run: leaving a pending one
        // out would loosen every other claim's threshold.
        family.push_back({s, &claim, claim["id"], true});
        raw.push_back(1.0);
      } else if (tested) {
        claim["verdict"] = decided_verdict(claim, claim["p_value"].get<double>());  // superseded: unadjusted
      } else if (claim.contains("evidence")) {
        claim["verdict"] = "inconclusive";
      }
    }
  }
  const std::vector<double> holm = holm_adjusted(raw), bh = benjamini_hochberg(raw);
  const std::size_t rejected = static_cast<std::size_t>(std::count_if(holm.begin(), holm.end(), [](double p) { return p < kVerdictAlpha; }));
  // An undecided claim joins the R rejected ones when its p is below alpha / (m - R).
  const double power_level = family.size() > rejected ? kVerdictAlpha / static_cast<double>(family.size() - rejected) : kVerdictAlpha;
  for (std::size_t i = 0; i < family.size(); ++i) {
    if (family[i].pending) continue;
    json& claim = *family[i].claim;
    claim["p_holm"] = holm[i];
    claim["q_bh"] = bh[i];
    claim["verdict"] = decided_verdict(claim, holm[i]);
    if (claim["verdict"] == "inconclusive") claim["power"] = power_json(claim, sweeps[family[i].sweep].summary, power_level);
  }
  // Dependence: claims whose arms share a cell (by origin).
  std::map<std::string, std::vector<std::string>> claims_of_origin;
  std::map<std::string, std::set<std::string>> origins_of_claim;
  for (std::size_t s = 0; s < sweeps.size(); ++s) {
    if (!set.counts(s)) continue;
    for (json& claim : sweeps[s].summary.at("claims")) {
      std::set<std::string> origins;
      for (const char* arm : {"better", "worse"}) {
        const std::string name = claim.contains(arm) ? claim[arm].get<std::string>() : claim.at("equivalent")[arm == std::string("better") ? 0 : 1].get<std::string>();
        const std::set<std::string> o = set.origins(s, name);
        origins.insert(o.begin(), o.end());
      }
      for (const std::string& o : origins) claims_of_origin[o].push_back(claim["id"]);
      origins_of_claim[claim["id"]] = std::move(origins);
    }
  }
  for (std::size_t s = 0; s < sweeps.size(); ++s) {
    json& summary = sweeps[s].summary;
    if (set.counts(s)) {
      for (json& claim : summary.at("claims")) {
        std::set<std::string> shared;
        for (const std::string& o : origins_of_claim[claim["id"]]) {
          for (const std::string& other : claims_of_origin[o]) {
            if (other != claim["id"]) shared.insert(other);
          }
        }
        claim["shares_cells_with"] = shared;
      }
    }
    const auto it = model.pools.find(recipe_key(summary));
    json calibration = nullptr;
    if (model.calibration) {
      calibration = {{"factor", model.calibration->factor},
                     {"interval", {model.calibration->interval.low, model.calibration->interval.high}},
                     {"df", model.calibration->df},
                     {"configs", model.calibration->configs},
                     {"method", "per config with 2+ seeds: the between-seed variance of sacreBLEU over the variance the "
                                "paired sentence bootstrap gives one system (half that of two seeds' difference, A/A); "
                                "df-weighted mean, 95% chi-square interval. 1: the bootstrap predicts the seeds' spread"}};
    }
    summary["variance_model"] = {{"scope", scope},
                                 {"recipe", "the spec's base config and common overrides, on one backend"},
                                 {"pool", it == model.pools.end() ? json() : pool_json(it->second)},
                                 {"calibration", calibration}};
    summary["adjustment"] = {{"scope", scope},
                             {"sweeps", folders},
                             {"alpha", kVerdictAlpha},
                             {"claims", family.size()},
                             {"pending", std::count_if(family.begin(), family.end(), [](const ClaimRef& c) { return c.pending; })},
                             {"rejected_holm", rejected},
                             {"verdicts", "Holm-adjusted p (confirmatory); Benjamini-Hochberg q reported beside it"},
                             {"power_level", power_level},
                             {"power_target", kPowerTarget},
                             {"max_seeds_per_arm", kMaxSeedsPerArm}};
  }
}

std::vector<SweepSummary> read_sweep_summaries(const std::string& dir) {
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": not a folder (expected the folder of the sweeps, e.g. reports/ablations)");
  std::vector<fs::path> folders;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && fs::exists(SweepFolder(entry.path()).summary())) folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  std::vector<SweepSummary> sweeps;
  for (const fs::path& folder : folders) {
    const std::string path = SweepFolder(folder).summary();
    json summary = read_json_file(path);
    if (!summary.is_object() || summary.value("kind", "") != "ablation" || !summary.contains("variants") ||
        !summary.contains("claims")) {
      throw std::runtime_error(path + ": not an ablation summary (expected \"kind\": \"ablation\" with variants and claims)");
    }
    sweeps.push_back({folder.filename().string(), std::move(summary)});
  }
  if (sweeps.empty()) throw std::runtime_error(dir + ": no <sweep>/summary.json inside");
  return sweeps;
}

}  // namespace trepro
