// An ablation spec (experiments/specs/*.json): a base config and the variants to run, each a
// set of overrides of the base's JSON keys written as dotted paths:
//   {
//     "name": "activation",
//     "description": "what the ablation asks",
//     "base": "../configs/multi30k_deen.json",        (relative to the spec file)
//     "overrides": {"train.max_steps": 800},           (optional: applied to every variant)
//     "variants": [{"name": "relu", "set": {"model.activation": "relu"}}, ...],
//     "grid": {"model.norm": ["post", "pre"], ...},    (optional: the cartesian product, each
//                                                       point a variant named "norm=post,...")
//     "seeds": [1, 2, 3],                              (optional: every variant runs once per
//                                                       seed; default: the base's train.seed)
//     "recipes": {"warmup1200": {"train.warmup_steps": 1200}},
//                                                      (optional: second recipes a claim's
//                                                       "recipe_check" may name)
//     "baseline": "relu",                              (optional: the variant every other one
//                                                       is compared with)
//     "claims": [{"claim": "SwiGLU beats ReLU", "better": "swiglu", "worse": "relu",
//                 "metric": "bleu"},                   (optional: the claims the runs test;
//                {"claim": "learned = sinusoidal",     an equivalence claim names the two
//                 "equivalent": ["learned", "sinusoidal"], variants and the margin within
//                 "margin": 1.0, "metric": "bleu"}]     which their difference counts as none)
//   }
//   An optional "paper": {"better": x, "worse": y} gives the paper's values of a claim's metric,
//   the effect its power calculation assumes (verdicts.h).
//   An optional "seeds": N (at least the spec's count) gives a claim N seeds per arm, fixed before
//   its runs so that no one stops when the result looks good: the spec's seeds, then the next
//   integers after the largest. Its two variants run those seeds; the claim is pending until all
//   have finished.
//   An optional "recipe_check": "warmup1200" runs each arm also under that recipe of "recipes"
//   (the variants "<arm>,recipe=warmup1200", the claim's seeds each); each arm then uses the recipe
//   with the lower mean validation perplexity over those seeds, and the claim's verdict is on
//   the recipes so chosen (Dodge et al. 2019): a contradiction under one recipe may be the
//   recipe's, not the claim's.
// A path must name a key of the base config (a typo is an error naming the spec and the key),
// and every variant's config is validated as a config file would be. A variant holds only
// "name" and "set". Seeds are the spec's alone: no variant sets train.seed, nor do the overrides
// beside "seeds". A claim's metric is one of kClaimMetrics; "better"/"worse" and "baseline" must
// name variants.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"

namespace trepro {

struct AblationVariant {
  std::string name;     // a folder name: letters, digits, '_', '-', '.', '=', ','
  nlohmann::json set;   // the variant's own overrides (dotted path -> value)
  Config config;        // base + common overrides + set (+ the recipe's overrides)
  std::vector<std::uint64_t> seeds;  // the spec's, then those its claims add
  std::string recipe;   // empty: the spec's recipe; else a name of the spec's "recipes"
};

// What a claim compares: sacreBLEU on the test split (paired bootstrap over its sentences), the
// tokenized lower-cased BLEU, or a perplexity (lower is better).
enum class ClaimMetric { bleu, bleu_tok_lc, test_perplexity, validation_perplexity };
inline constexpr const char* kClaimMetrics = "bleu, bleu_tok_lc, test_perplexity, validation_perplexity";
std::string to_string(ClaimMetric metric);
bool higher_is_better(ClaimMetric metric);

struct AblationClaim {
  std::string claim, better, worse;  // `better` beats `worse` on `metric`
  ClaimMetric metric = ClaimMetric::bleu;
  // > 0: an equivalence claim: `better` and `worse` (the spec's "equivalent" pair, in order) differ
  // by less than `margin` (BLEU points or perplexity) on `metric`.
  double margin = 0.0;
  bool equivalence() const { return margin > 0.0; }
  // The paper's values of the metric for `better` and `worse` (optional "paper": {"better": x,
  // "worse": y}): the effect a power calculation assumes (verdicts.h).
  struct PaperValues {
    double better = 0.0, worse = 0.0;
  };
  std::optional<PaperValues> paper;
  std::vector<std::uint64_t> seeds;  // per arm: the spec's, or its "seeds": N extending them
  std::string recipe_check;          // empty: none; else a name of the spec's "recipes"
};

struct AblationSpec {
  std::string name, description, base_path;
  nlohmann::json overrides = nlohmann::json::object();
  std::vector<AblationVariant> variants;
  std::vector<std::uint64_t> seeds;  // never empty: the spec's, or the base config's train.seed
  nlohmann::json recipes = nlohmann::json::object();  // name -> overrides
  std::string baseline;              // empty: none
  std::vector<AblationClaim> claims;

  // nullptr when no variant has this name.
  const AblationVariant* find_variant(const std::string& name) const;
};

// The variant that runs `arm` under the spec's recipe `recipe` (a claim's "recipe_check").
std::string recipe_variant_name(const std::string& arm, const std::string& recipe);

// The config of one cell of the grid: the variant's, with train.seed set to `seed`.
Config cell_config(const AblationVariant& variant, std::uint64_t seed);

// Throws ConfigError naming `path` and the offending field.
AblationSpec load_ablation_spec(const std::string& path);

// `config` with `overrides` (dotted path -> value) applied; `where` names the overrides in
// errors ("spec.json: variants[2].set").
Config apply_overrides(const Config& config, const nlohmann::json& overrides, const std::string& where);

}  // namespace trepro
