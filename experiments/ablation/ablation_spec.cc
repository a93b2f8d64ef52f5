#include "experiments/ablation/ablation_spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <set>

#include "core/json_input.h"

namespace trepro {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw ConfigError(where + ": " + what); }

std::vector<std::string> split_path(const std::string& dotted) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    keys.push_back(dotted.substr(start, dot - start));
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

void check_name(const std::string& name, const std::string& where) {
  const bool valid = !name.empty() && name != "." && name != ".." &&
                     name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.=,") ==
                         std::string::npos;
  if (!valid) fail(where, "\"" + name + "\" is not a usable folder name (letters, digits, _ - . = ,)");
}

std::string string_member(const json& object, const std::string& key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) fail(where, "missing key \"" + key + "\"");
  if (!it->is_string()) fail(where + "." + key, std::string("expected a string, got ") + it->type_name());
  return it->get<std::string>();
}

// A grid's points: every combination of the listed values, in the order written.
std::vector<AblationVariant> grid_variants(const json& grid, const std::string& where) {
  if (!grid.is_object() || grid.empty()) fail(where, "expected an object of \"path\": [values...]");
  std::vector<AblationVariant> points = {AblationVariant{.set = json::object()}};
  for (const auto& [path, values] : grid.items()) {
    if (!values.is_array() || values.empty()) fail(where + "." + path, "expected a non-empty list of values");
    std::vector<AblationVariant> next;
    for (const AblationVariant& point : points) {
      for (const json& value : values) {
        AblationVariant extended = point;
        extended.set[path] = value;
        const std::string shown = value.is_string() ? value.get<std::string>() : value.dump();
        extended.name += (extended.name.empty() ? "" : ",") + split_path(path).back() + "=" + shown;
        next.push_back(std::move(extended));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::vector<std::uint64_t> read_seeds(const json& document, const std::string& path, std::uint64_t base_seed) {
  const auto it = document.find("seeds");
  if (it == document.end()) return {base_seed};
  if (!it->is_array() || it->empty()) fail(path + ": seeds", "expected a non-empty list of non-negative integers");
  std::vector<std::uint64_t> seeds;
  for (const json& seed : *it) {
    if (!seed.is_number_unsigned()) fail(path + ": seeds", "expected non-negative integers, got " + seed.dump());
    const auto value = seed.get<std::uint64_t>();
    if (std::find(seeds.begin(), seeds.end(), value) != seeds.end()) {
      fail(path + ": seeds", "seed " + std::to_string(value) + " is listed twice");
    }
    seeds.push_back(value);
  }
  return seeds;
}

void require_variant(const AblationSpec& spec, const std::string& name, const std::string& where) {
  if (!spec.find_variant(name)) fail(where, "no variant is named \"" + name + "\"");
}

ClaimMetric claim_metric(const std::string& name, const std::string& where) {
  for (ClaimMetric m : {ClaimMetric::bleu, ClaimMetric::bleu_tok_lc, ClaimMetric::test_perplexity,
                        ClaimMetric::validation_perplexity}) {
    if (to_string(m) == name) return m;
  }
  fail(where, "unknown metric \"" + name + "\" (expected one of " + kClaimMetrics + ")");
}

// An equivalence claim's pair and margin into `claim`.
void read_equivalence(const json& entry, const std::string& where, AblationClaim& claim) {
  const json& pair = entry.at("equivalent");
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) {
    fail(where + ".equivalent", "expected the names of two variants");
  }
  claim.better = pair[0].get<std::string>();
  claim.worse = pair[1].get<std::string>();
  const auto margin = entry.find("margin");
  if (margin == entry.end() || !margin->is_number() || !std::isfinite(margin->get<double>()) || margin->get<double>() <= 0.0) {
    fail(where + ".margin", "an equivalence claim needs a margin > 0 (BLEU points or perplexity)");
  }
  claim.margin = margin->get<double>();
}

AblationClaim::PaperValues read_paper_values(const json& paper, const std::string& where) {
  const auto value = [&](const char* key) {
    const auto it = paper.is_object() ? paper.find(key) : paper.end();
    if (it == paper.end() || !it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0.0) {
      fail(where + "." + key, "expected the paper's value of the metric, a number > 0, in {\"better\": x, \"worse\": y}");
    }
    return it->get<double>();
  };
  if (paper.is_object() && paper.size() != 2) fail(where, "expected exactly {\"better\": x, \"worse\": y}");
  return {value("better"), value("worse")};
}

// A claim's "seeds": N, its seeds per arm: the spec's, then the integers after their largest.
std::vector<std::uint64_t> claim_seeds(const json& entry, const AblationSpec& spec, const std::string& where) {
  const auto it = entry.find("seeds");
  if (it == entry.end()) return spec.seeds;
  if (!it->is_number_unsigned() || it->get<std::uint64_t>() < spec.seeds.size()) {
    fail(where + ".seeds", "expected the number of seeds per arm, at least the spec's " +
                               std::to_string(spec.seeds.size()) + ", got " + it->dump());
  }
  std::vector<std::uint64_t> seeds = spec.seeds;
  for (std::uint64_t next = *std::max_element(seeds.begin(), seeds.end()) + 1; seeds.size() < it->get<std::uint64_t>(); ++next) {
    seeds.push_back(next);
  }
  return seeds;
}

std::vector<AblationClaim> read_claims(const json& claims, const AblationSpec& spec, const std::string& path) {
  constexpr const char* kForms = "{\"claim\", \"better\", \"worse\", \"metric\"} or {\"claim\", \"equivalent\", \"margin\", \"metric\"}";
  if (!claims.is_array()) fail(path + ": claims", std::string("expected a list of ") + kForms);
  std::vector<AblationClaim> out;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const std::string where = path + ": claims[" + std::to_string(i) + "]";
    const json& entry = claims[i];
    if (!entry.is_object()) fail(where, std::string("expected ") + kForms);
    const bool equivalence = entry.contains("equivalent");
    for (const auto& [key, value] : entry.items()) {
      const bool known = key == "claim" || key == "metric" || key == "paper" || key == "seeds" || key == "recipe_check" ||
                         (equivalence ? key == "equivalent" || key == "margin" : key == "better" || key == "worse");
      if (!known) {
        fail(where + "." + key, equivalence ? "unknown key in an equivalence claim (expected claim, equivalent, margin, metric, paper, seeds, recipe_check)"
                                            : "unknown key (expected claim, better, worse, metric, paper, seeds, recipe_check; or claim, equivalent, margin, metric, paper, seeds, recipe_check)");
      }
    }
    AblationClaim claim;
    claim.claim = string_member(entry, "claim", where);
    if (equivalence) {
      read_equivalence(entry, where, claim);
    } else {
      claim.better = string_member(entry, "better", where);
      claim.worse = string_member(entry, "worse", where);
    }
    claim.metric = claim_metric(string_member(entry, "metric", where), where + ".metric");
    if (const auto paper = entry.find("paper"); paper != entry.end()) claim.paper = read_paper_values(*paper, where + ".paper");
    const std::string first = equivalence ? ".equivalent[0]" : ".better", second = equivalence ? ".equivalent[1]" : ".worse";
    require_variant(spec, claim.better, where + first);
    require_variant(spec, claim.worse, where + second);
    if (claim.better == claim.worse) fail(where, "the claim names the same variant twice");
    claim.seeds = claim_seeds(entry, spec, where);
    if (entry.contains("recipe_check")) {
      claim.recipe_check = string_member(entry, "recipe_check", where);
      if (!spec.recipes.contains(claim.recipe_check)) {
        fail(where + ".recipe_check", "\"" + claim.recipe_check + "\" is not one of the spec's \"recipes\"");
      }
    }
    out.push_back(std::move(claim));
  }
  return out;
}

// A spec's "recipes": name -> overrides of the common config, none choosing the seed.
json read_recipes(const json& recipes, const std::string& path) {
  if (!recipes.is_object()) fail(path + ": recipes", "expected an object of \"name\": {\"dotted.path\": value}");
  for (const auto& [name, overrides] : recipes.items()) {
    check_name(name, path + ": recipes." + name);
    if (!overrides.is_object() || overrides.empty()) fail(path + ": recipes." + name, "expected a non-empty object of \"dotted.path\": value");
    if (overrides.contains("train.seed")) fail(path + ": recipes." + name + ".train.seed", "a recipe cannot choose the seed");
  }
  return recipes;
}

// Every claim's seeds into its arms' seed lists, and the variants its recipe check runs.
void add_claim_cells(AblationSpec& spec, const std::string& path) {
  const auto variant_named = [&](const std::string& name) {
    return std::find_if(spec.variants.begin(), spec.variants.end(), [&](const AblationVariant& v) { return v.name == name; });
  };
  const auto add_seeds = [](AblationVariant& variant, const std::vector<std::uint64_t>& seeds) {
    for (std::uint64_t seed : seeds) {
      if (std::find(variant.seeds.begin(), variant.seeds.end(), seed) == variant.seeds.end()) variant.seeds.push_back(seed);
    }
  };
  for (AblationVariant& variant : spec.variants) variant.seeds = spec.seeds;
  for (const AblationClaim& claim : spec.claims) {
    for (const std::string& arm : {claim.better, claim.worse}) {
      add_seeds(*variant_named(arm), claim.seeds);
      if (claim.recipe_check.empty()) continue;
      const std::string name = recipe_variant_name(arm, claim.recipe_check);
      auto it = variant_named(name);
      if (it == spec.variants.end()) {
        const AblationVariant& plain = *variant_named(arm);
        const std::string where = path + ": recipes." + claim.recipe_check + " on variant \"" + arm + "\"";
        AblationVariant under_recipe{.name = name,
                                     .set = plain.set,
                                     .config = apply_overrides(plain.config, spec.recipes[claim.recipe_check], where),
                                     .recipe = claim.recipe_check};
        spec.variants.push_back(std::move(under_recipe));
        it = std::prev(spec.variants.end());
      } else if (it->recipe != claim.recipe_check) {
        fail(path + ": variant \"" + name + "\"", "the name of the variant a recipe check runs; rename it");
      }
      add_seeds(*it, claim.seeds);
    }
  }
}

}  // namespace

Config apply_overrides(const Config& config, const json& overrides, const std::string& where) {
  if (!overrides.is_object()) fail(where, "expected an object of \"dotted.path\": value");
  // Every key, so that a key left out of the canonical JSON at its default can be overridden too.
  json document = config_to_json(config, JsonKeys::every);
  for (const auto& [path, value] : overrides.items()) {
    json* node = &document;
    for (const std::string& key : split_path(path)) {
      if (!node->is_object() || !node->contains(key)) {
        fail(where + "." + path, "the config has no key \"" + key + "\" here");
      }
      node = &(*node)[key];
    }
    if (node->is_object()) fail(where + "." + path, "names a section; override its keys one by one");
    *node = value;
  }
  return config_from_json(document, where);
}

AblationSpec load_ablation_spec(const std::string& path) {
  json document;
  try {
    document = read_json_file(path);
  } catch (const JsonInputError& e) {
    throw ConfigError(e.what());
  }
  if (!document.is_object()) fail(path, "expected an object");
  static const std::set<std::string> known = {"name", "description", "base", "overrides", "variants",
                                               "grid", "seeds", "recipes", "baseline", "claims"};
  for (const auto& [key, value] : document.items()) {
    if (!known.contains(key)) {
      fail(path + ": " + key, "unknown key (expected name, description, base, overrides, variants, grid, seeds, recipes, baseline, claims)");
    }
  }
  AblationSpec spec;
  spec.name = string_member(document, "name", path);
  check_name(spec.name, path + ": name");
  if (document.contains("description")) spec.description = string_member(document, "description", path);
  const std::string base = string_member(document, "base", path);
  spec.base_path = (std::filesystem::path(path).parent_path() / base).lexically_normal().string();
  if (!std::filesystem::exists(spec.base_path)) {
    // A spec copied to another folder keeps a base relative to its old one.
    fail(path + ": base", "\"" + base + "\" is resolved against the spec's own folder, as " + spec.base_path +
                              ", which does not exist: give the base config's path relative to " +
                              std::filesystem::path(path).parent_path().string() + "/ (or an absolute path)");
  }
  Config base_config;
  try {
    base_config = load_config(spec.base_path);
  } catch (const std::runtime_error& e) {  // the base's own error, and which spec names it (found by fuzz/)
    fail(path + ": base", e.what());
  }
  if (document.contains("overrides")) spec.overrides = document["overrides"];
  const Config common = apply_overrides(base_config, spec.overrides, path + ": overrides");

  std::vector<AblationVariant> variants;
  if (const auto it = document.find("variants"); it != document.end()) {
    if (!it->is_array()) fail(path + ": variants", "expected a list of {\"name\", \"set\"}");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const std::string where = path + ": variants[" + std::to_string(i) + "]";
      const json& entry = (*it)[i];
      if (!entry.is_object()) fail(where, "expected {\"name\", \"set\"}");
      const std::string name = string_member(entry, "name", where);
      for (const auto& [key, value] : entry.items()) {
        // A misspelt "set" would run the common config under this variant's name.
        if (key != "name" && key != "set") {
          fail(path + ": variant \"" + name + "\" " + key, "unknown key (expected name, set)");
        }
      }
      variants.push_back(AblationVariant{.name = name, .set = entry.value("set", json::object())});
    }
  }
  if (const auto it = document.find("grid"); it != document.end()) {
    for (AblationVariant& point : grid_variants(*it, path + ": grid")) variants.push_back(std::move(point));
  }
  if (variants.empty()) fail(path, "no variants (give \"variants\" or \"grid\")");
  std::set<std::string> names;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    AblationVariant& v = variants[i];
    const std::string where = path + ": variant \"" + v.name + "\"";
    check_name(v.name, where);
    if (!names.insert(v.name).second) fail(where, "the name is used twice");
    // cell_config gives every cell one of the spec's seeds, whatever its variant set.
    if (v.set.contains("train.seed")) {
      fail(where + " set.train.seed", "a variant cannot choose its seed: every variant runs each of the spec's seeds "
                                      "(\"seeds\", else the common config's train.seed)");
    }
    v.config = apply_overrides(common, v.set, where + " set");
  }
  spec.variants = std::move(variants);
  if (document.contains("seeds") && spec.overrides.contains("train.seed")) {
    fail(path + ": overrides.train.seed", "the spec's \"seeds\" set every cell's seed; give one or the other");
  }
  spec.seeds = read_seeds(document, path, common.train.seed);
  if (const auto it = document.find("recipes"); it != document.end()) spec.recipes = read_recipes(*it, path);
  if (document.contains("baseline")) {
    spec.baseline = string_member(document, "baseline", path);
    require_variant(spec, spec.baseline, path + ": baseline");
  }
  if (const auto it = document.find("claims"); it != document.end()) spec.claims = read_claims(*it, spec, path);
  add_claim_cells(spec, path);
  return spec;
}

const AblationVariant* AblationSpec::find_variant(const std::string& variant_name) const {
  for (const AblationVariant& v : variants) {
    if (v.name == variant_name) return &v;
  }
  return nullptr;
}

std::string recipe_variant_name(const std::string& arm, const std::string& recipe) { return arm + ",recipe=" + recipe; }

Config cell_config(const AblationVariant& variant, std::uint64_t seed) {
  Config config = variant.config;
  config.train.seed = seed;
  return config;
}

std::string to_string(ClaimMetric metric) {
  switch (metric) {
    case ClaimMetric::bleu: return "bleu";
    case ClaimMetric::bleu_tok_lc: return "bleu_tok_lc";
    case ClaimMetric::test_perplexity: return "test_perplexity";
    case ClaimMetric::validation_perplexity: return "validation_perplexity";
  }
  return "?";
}

bool higher_is_better(ClaimMetric metric) { return metric == ClaimMetric::bleu || metric == ClaimMetric::bleu_tok_lc; }

}  // namespace trepro
