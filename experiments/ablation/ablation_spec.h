// An ablation spec (experiments/ablations/*.json): a base config and the variants to run, each a
// set of overrides of the base's JSON keys written as dotted paths:
//   {
//     "name": "activation",
//     "description": "what the ablation asks",
//     "base": "../configs/multi30k_deen.json",        (relative to the spec file)
//     "overrides": {"train.max_steps": 800},           (optional: applied to every variant)
//     "variants": [{"name": "relu", "set": {"model.activation": "relu"}}, ...],
//     "grid": {"model.norm": ["post", "pre"], ...}     (optional: the cartesian product, each
//   }                                                   point a variant named "norm=post,...")
// A path must name a key of the base config (a typo is an error naming the spec and the key),
// and every variant's config is validated as a config file would be.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"

namespace trepro {

struct AblationVariant {
  std::string name;     // a folder name: letters, digits, '_', '-', '.', '=', ','
  nlohmann::json set;   // the variant's own overrides (dotted path -> value)
  Config config;        // base + common overrides + set
};

struct AblationSpec {
  std::string name, description, base_path;
  nlohmann::json overrides = nlohmann::json::object();
  std::vector<AblationVariant> variants;
};

// Throws ConfigError naming `path` and the offending field.
AblationSpec load_ablation_spec(const std::string& path);

// `config` with `overrides` (dotted path -> value) applied; `where` names the overrides in
// errors ("spec.json: variants[2].set").
Config apply_overrides(const Config& config, const nlohmann::json& overrides, const std::string& where);

}  // namespace trepro
