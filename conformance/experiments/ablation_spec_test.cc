// Ablation specs (experiments/ablation/ablation_spec.h): overrides by dotted path, grids,
// and errors naming the spec file and the offending key; the committed specs all load.
#include "experiments/ablation/ablation_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>
#include <map>

#include "experiments/ablation/twin_cells.h"
#include "experiments/run_folder/run_folder.h"

namespace trepro {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A folder holding base.json (a small copy-task config) and the spec `spec` as spec.json.
std::string write_spec(const std::string& name, const json& spec) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("ablation_spec_test_" + name);
  fs::create_directories(dir);
  std::ofstream(dir / "base.json") << json{{"model", {{"vocab_size", 16}, {"d_model", 32}, {"heads", 4}}}}.dump();
  std::ofstream(dir / "spec.json") << spec.dump();
  return (dir / "spec.json").string();
}

// write_spec, with the spec given as text: what a json value cannot hold (a key twice).
std::string write_spec_text(const std::string& name, const std::string& text) {
  const std::string path = write_spec(name, json::object());
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    load_ablation_spec(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AblationSpec, VariantsApplyCommonThenOwnOverrides) {
  const std::string path = write_spec("variants", {{"name", "n"},
                                                   {"base", "base.json"},
                                                   {"overrides", {{"train.max_steps", 7}}},
                                                   {"variants", {{{"name", "pre"}, {"set", {{"model.norm", "pre"}}}},
                                                                 {{"name", "post"}, {"set", {{"model.norm", "post"}}}}}}});
  const AblationSpec spec = load_ablation_spec(path);
  ASSERT_EQ(spec.variants.size(), 2u);
  EXPECT_EQ(spec.variants[0].name, "pre");
  EXPECT_EQ(spec.variants[0].config.model.norm, NormPlacement::pre);
  EXPECT_EQ(spec.variants[1].config.model.norm, NormPlacement::post);
  EXPECT_EQ(spec.variants[1].config.train.max_steps, 7);
  EXPECT_EQ(spec.variants[1].config.model.d_model, 32);  // from the base
  EXPECT_NE(config_hash(spec.variants[0].config), config_hash(spec.variants[1].config));
}

TEST(AblationSpec, AGridIsTheCartesianProductInWrittenOrder) {
  const std::string path = write_spec(
      "grid", {{"name", "g"}, {"base", "base.json"},
               {"grid", {{"model.heads", {1, 4}}, {"train.schedule.warmup", {10, 20, 30}}}}});
  const AblationSpec spec = load_ablation_spec(path);
  ASSERT_EQ(spec.variants.size(), 6u);
  EXPECT_EQ(spec.variants[0].name, "heads=1,warmup=10");
  EXPECT_EQ(spec.variants[5].name, "heads=4,warmup=30");
  EXPECT_EQ(spec.variants[5].config.model.heads, 4);
  EXPECT_EQ(spec.variants[5].config.train.schedule.warmup, 30);
}

TEST(AblationSpec, AnUnknownPathIsAnErrorNamingSpecVariantAndKey) {
  const std::string path = write_spec(
      "typo", {{"name", "t"}, {"base", "base.json"}, {"variants", {{{"name", "x"}, {"set", {{"model.hedas", 2}}}}}}});
  EXPECT_EQ(error_of(path), path + ": variant \"x\" set.model.hedas: the config has no key \"hedas\" here");
}

TEST(AblationSpec, AnImpossibleValueIsTheConfigErrorOfTheVariant) {
  const std::string path = write_spec(
      "impossible", {{"name", "i"}, {"base", "base.json"}, {"variants", {{{"name", "x"}, {"set", {{"model.heads", 7}}}}}}});
  EXPECT_EQ(error_of(path), path + ": variant \"x\" set: model.heads: d_model 32 is not divisible by heads 7");
}

TEST(AblationSpec, NamesMustBeUniqueFolderNames) {
  const json twice = {{"name", "d"}, {"base", "base.json"}, {"variants", {{{"name", "a"}}, {{"name", "a"}}}}};
  EXPECT_NE(error_of(write_spec("twice", twice)).find("the name is used twice"), std::string::npos);
  const json slash = {{"name", "d"}, {"base", "base.json"}, {"variants", {{{"name", "../a"}}}}};
  EXPECT_NE(error_of(write_spec("slash", slash)).find("not a usable folder name"), std::string::npos);
}

// Found by fuzz/ablation_spec_fuzz: the error of a missing base named the base but not the spec.
TEST(AblationSpec, AMissingBaseIsAnErrorNamingTheSpecAndTheBase) {
  const std::string path = write_spec("no_base", {{"name", "n"}, {"base", "missing.json"}, {"variants", {{{"name", "a"}}}}});
  const std::string message = error_of(path);
  EXPECT_EQ(message.rfind(path + ": base: ", 0), 0u) << message;
  EXPECT_NE(message.find("missing.json"), std::string::npos) << message;
}

TEST(AblationSpec, NoVariantsAndUnknownKeysAreErrors) {
  EXPECT_NE(error_of(write_spec("empty", {{"name", "e"}, {"base", "base.json"}})).find("no variants"), std::string::npos);
  EXPECT_NE(error_of(write_spec("unknown", {{"name", "u"}, {"base", "base.json"}, {"variant", json::array()}}))
                .find("variant: unknown key"),
            std::string::npos);
}

// A misspelt "set" ran the common config under the variant's name.
TEST(AblationSpec, AnUnknownKeyOfAVariantIsAnErrorNamingSpecVariantAndKey) {
  const std::string path = write_spec(
      "variant_key", {{"name", "n"}, {"base", "base.json"},
                      {"variants", {{{"name", "a"}}, {{"name", "b"}, {"sett", {{"model.heads", 1}}}}}}});
  EXPECT_EQ(error_of(path), path + ": variant \"b\" sett: unknown key (expected name, set)");
}

// Every cell runs one of the spec's seeds (cell_config), so a seed set anywhere else was
// silently replaced by it.
TEST(AblationSpec, ASeedNotInTheSpecsSeedsIsAnErrorNamingTheKey) {
  const json variants = {{{"name", "a"}}, {{"name", "b"}, {"set", {{"train.seed", 9}}}}};
  const std::string variant_error = "variant \"b\" set.train.seed: a variant cannot choose its seed";
  EXPECT_NE(error_of(write_spec("variant_seed", {{"name", "n"}, {"base", "base.json"}, {"seeds", {1, 2}}, {"variants", variants}}))
                .find("spec.json: " + variant_error),
            std::string::npos);
  EXPECT_NE(error_of(write_spec("variant_seed_alone", {{"name", "n"}, {"base", "base.json"}, {"variants", variants}}))
                .find("spec.json: " + variant_error),
            std::string::npos);
  EXPECT_NE(error_of(write_spec("grid_seed", {{"name", "n"}, {"base", "base.json"}, {"grid", {{"train.seed", {1, 2}}}}}))
                .find("spec.json: variant \"seed=1\" set.train.seed: a variant cannot choose its seed"),
            std::string::npos);
  const json grid = {{"model.norm", {"post", "pre"}}};
  const std::string both = write_spec(
      "overrides_seed", {{"name", "n"}, {"base", "base.json"}, {"overrides", {{"train.seed", 9}}}, {"seeds", {1, 2}}, {"grid", grid}});
  EXPECT_EQ(error_of(both), both + ": overrides.train.seed: the spec's \"seeds\" set every cell's seed; give one or the other");
  // Without "seeds", the overrides' seed is the spec's one seed.
  const AblationSpec one_seed = load_ablation_spec(
      write_spec("overrides_seed_alone", {{"name", "n"}, {"base", "base.json"}, {"overrides", {{"train.seed", 9}}}, {"grid", grid}}));
  EXPECT_EQ(one_seed.seeds, (std::vector<std::uint64_t>{9}));
}

// nlohmann would keep the second; the spec would run something other than what it says.
TEST(AblationSpec, AKeyTwiceIsAnErrorNamingIt) {
  const std::string path = write_spec_text(
      "key_twice", R"({"name": "n", "base": "base.json",
                      "variants": [{"name": "a", "set": {"model.heads": 1, "model.heads": 2}}]})");
  EXPECT_EQ(error_of(path), path + ": variants[0].set.model.heads: the key appears twice");
}

TEST(AblationSpec, DeepNestingIsAnErrorNotACrash) {
  const std::string path = write_spec_text("deep", std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(error_of(path), path + ": JSON nested deeper than 64 levels (at byte 64)");
}

TEST(AblationSpec, TheCommittedSpecsLoad) {
  const fs::path dir = fs::path(TREPRO_SOURCE_DIR) / "experiments" / "specs";
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const AblationSpec spec = load_ablation_spec(entry.path().string());
    EXPECT_GE(spec.variants.size(), 2u) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 5u);
}

// model.head_dim is left out of the base's canonical JSON (a version-2 key at its default), yet
// the Table 3 row (B) spec sets it by path.
TEST(AblationSpec, TheHeadDimSpecNarrowsTheAttention) {
  const AblationSpec spec =
      load_ablation_spec((fs::path(TREPRO_SOURCE_DIR) / "experiments" / "specs" / "table3_head_dim.json").string());
  ASSERT_NE(spec.find_variant("head_dim8"), nullptr);
  const ModelConfig& model = spec.find_variant("head_dim8")->config.model;
  EXPECT_EQ(model.d_model, 256);
  EXPECT_EQ(model.attention_width(), 8 * 8);
  EXPECT_EQ(spec.seeds, (std::vector<std::uint64_t>{1, 2}));
}

// The committed specs' baselines are one training (experiments/ablation/twin_cells.h): every
// Table 3 spec and the activation spec compare against the same base model, which a sweep with
// --share-cells trains once per seed. cell_identity tells a change of model or seed from a
// default written out.
TEST(AblationSpec, TheCommittedBaselinesAreOneCell) {
  const fs::path dir = fs::path(TREPRO_SOURCE_DIR) / "experiments" / "specs";
  std::map<std::string, std::string> baseline_identity;
  for (const char* name : {"table3_heads", "table3_head_dim", "table3_size", "table3_regularization",
                           "table3_positions", "activation"}) {
    const AblationSpec spec = load_ablation_spec((dir / (std::string(name) + ".json")).string());
    const AblationVariant* baseline = spec.find_variant(spec.baseline);
    ASSERT_NE(baseline, nullptr) << name;
    baseline_identity[name] = cell_identity(cell_config(*baseline, 1));
  }
  for (const auto& [name, identity] : baseline_identity) EXPECT_EQ(identity, baseline_identity["table3_size"]) << name;

  const AblationSpec spec = load_ablation_spec((dir / "table3_head_dim.json").string());
  const AblationVariant& base = *spec.find_variant("head_dim32");
  Config implicit = cell_config(base, 1);
  implicit.model.head_dim = 0;  // d_model 256 / 8 heads: 32, as the variant writes out
  EXPECT_EQ(cell_identity(implicit), cell_identity(cell_config(base, 1)));
  EXPECT_NE(cell_identity(cell_config(base, 2)), cell_identity(cell_config(base, 1)));
  EXPECT_NE(cell_identity(cell_config(*spec.find_variant("head_dim16"), 1)), cell_identity(cell_config(base, 1)));
}

TEST(AblationSpec, SeedsBaselineAndClaims) {
  const std::string ok = write_spec(
      "claims", {{"name", "c"}, {"base", "base.json"}, {"seeds", {3, 1}}, {"baseline", "norm=post"},
                 {"grid", {{"model.norm", {"post", "pre"}}}},
                 {"claims", {{{"claim", "Pre-LN is better"}, {"better", "norm=pre"}, {"worse", "norm=post"},
                              {"metric", "validation_perplexity"}}}}});
  const AblationSpec spec = load_ablation_spec(ok);
  EXPECT_EQ(spec.seeds, (std::vector<std::uint64_t>{3, 1}));
  EXPECT_EQ(spec.baseline, "norm=post");
  ASSERT_EQ(spec.claims.size(), 1u);
  EXPECT_EQ(spec.claims[0].metric, ClaimMetric::validation_perplexity);
  EXPECT_FALSE(higher_is_better(spec.claims[0].metric));
  EXPECT_EQ(cell_config(spec.variants[1], 3).train.seed, 3u);
  EXPECT_EQ(SweepFolder("out").cell("norm=pre", 3).root().string(), "out/norm=pre/seed_3");
}

TEST(AblationSpec, SeedsDefaultToTheBaseSeed) {
  const std::string path = write_spec("no_seeds", {{"name", "n"}, {"base", "base.json"}, {"grid", {{"model.heads", {1, 4}}}}});
  EXPECT_EQ(load_ablation_spec(path).seeds, (std::vector<std::uint64_t>{Config{}.train.seed}));
}

TEST(AblationSpec, BadSeedsAndClaimsAreErrorsNamingTheKey) {
  const json grid = {{"model.norm", {"post", "pre"}}};
  const auto spec_with = [&](const std::string& name, const std::string& key, const json& value) {
    return error_of(write_spec(name, {{"name", "n"}, {"base", "base.json"}, {"grid", grid}, {key, value}}));
  };
  EXPECT_NE(spec_with("baseline", "baseline", "post").find("spec.json: baseline: no variant is named \"post\""),
            std::string::npos);
  EXPECT_NE(spec_with("seeds_empty", "seeds", json::array()).find("spec.json: seeds"), std::string::npos);
  EXPECT_NE(spec_with("seeds_twice", "seeds", {1, 1}).find("seed 1 is listed twice"), std::string::npos);
  EXPECT_NE(spec_with("seeds_negative", "seeds", {-1}).find("non-negative integers"), std::string::npos);
  const json claim = {{"claim", "x"}, {"better", "norm=pre"}, {"worse", "norm=post"}, {"metric", "bleu"}};
  json unknown_metric = claim;
  unknown_metric["metric"] = "accuracy";
  EXPECT_NE(spec_with("claim_metric", "claims", json::array({unknown_metric})).find("claims[0].metric: unknown metric \"accuracy\""),
            std::string::npos);
  json unknown_variant = claim;
  unknown_variant["worse"] = "norm=mid";
  EXPECT_NE(spec_with("claim_variant", "claims", json::array({unknown_variant})).find("claims[0].worse: no variant is named"),
            std::string::npos);
  json same = claim;
  same["worse"] = "norm=pre";
  EXPECT_NE(spec_with("claim_same", "claims", json::array({same})).find("names the same variant twice"), std::string::npos);
  const json equivalence = {{"claim", "x"}, {"equivalent", {"norm=pre", "norm=post"}}, {"margin", 1.0}, {"metric", "bleu"}};
  const AblationSpec with_equivalence = load_ablation_spec(write_spec(
      "claim_equivalence", {{"name", "n"}, {"base", "base.json"}, {"grid", grid}, {"claims", json::array({equivalence})}}));
  ASSERT_EQ(with_equivalence.claims.size(), 1u);
  EXPECT_TRUE(with_equivalence.claims[0].equivalence());
  EXPECT_EQ(with_equivalence.claims[0].better, "norm=pre");
  EXPECT_EQ(with_equivalence.claims[0].worse, "norm=post");
  EXPECT_EQ(with_equivalence.claims[0].margin, 1.0);
  EXPECT_FALSE(load_ablation_spec(write_spec("claim_directed", {{"name", "n"}, {"base", "base.json"}, {"grid", grid},
                                                                {"claims", json::array({claim})}}))
                   .claims[0]
                   .equivalence());
  for (const auto& [name, change, expected] :
       std::vector<std::tuple<std::string, std::function<void(json&)>, std::string>>{
           {"no_margin", [](json& c) { c.erase("margin"); }, "claims[0].margin: an equivalence claim needs a margin > 0"},
           {"zero_margin", [](json& c) { c["margin"] = 0; }, "claims[0].margin: an equivalence claim needs a margin > 0"},
           {"one_name", [](json& c) { c["equivalent"] = {"norm=pre"}; }, "claims[0].equivalent: expected the names of two variants"},
           {"unknown_name", [](json& c) { c["equivalent"][1] = "norm=mid"; }, "claims[0].equivalent[1]: no variant is named"},
           {"twice", [](json& c) { c["equivalent"][1] = "norm=pre"; }, "names the same variant twice"},
           {"mixed", [](json& c) { c["better"] = "norm=pre"; }, "claims[0].better: unknown key in an equivalence claim"}}) {
    json bad = equivalence;
    change(bad);
    EXPECT_NE(spec_with("claim_" + name, "claims", json::array({bad})).find(expected), std::string::npos) << name;
  }
  json extra = claim;
  extra["p"] = 0.05;
  EXPECT_NE(spec_with("claim_extra", "claims", json::array({extra})).find("claims[0].p: unknown key"), std::string::npos);
}

// Variants a, b and c at seeds 1 and 2; `claim` (b against a) and the spec's `recipes`.
std::string claims_spec(const std::string& name, const json& claim, const json& recipes = json::object()) {
  return write_spec(name, {{"name", "n"},
                           {"base", "base.json"},
                           {"seeds", {1, 2}},
                           {"recipes", recipes},
                           {"variants", {{{"name", "a"}, {"set", {{"model.dropout", 0.1}}}},
                                         {{"name", "b"}, {"set", {{"model.dropout", 0.2}}}},
                                         {{"name", "c"}, {"set", {{"model.dropout", 0.3}}}}}},
                           {"claims", json::array({claim})}});
}

// A claim's "seeds": N, fixed before its runs, are its two arms' alone; fewer than the spec's is
// an error, since the spec's seeds are every variant's.
TEST(AblationSpec, AClaimsSeedsExtendItsArmsAlone) {
  const json claim = {{"claim", "b wins"}, {"better", "b"}, {"worse", "a"}, {"metric", "bleu"}, {"seeds", 4}};
  const AblationSpec spec = load_ablation_spec(claims_spec("claim_seeds", claim));
  const std::vector<std::uint64_t> four = {1, 2, 3, 4}, two = {1, 2};
  EXPECT_EQ(spec.claims[0].seeds, four);
  EXPECT_EQ(spec.find_variant("a")->seeds, four);
  EXPECT_EQ(spec.find_variant("b")->seeds, four);
  EXPECT_EQ(spec.find_variant("c")->seeds, two);
  EXPECT_EQ(spec.seeds, two);
  json fewer = claim;
  fewer["seeds"] = 1;
  EXPECT_NE(error_of(claims_spec("claim_seeds_fewer", fewer)).find("claims[0].seeds: expected the number of seeds per arm, at least the spec's 2, got 1"),
            std::string::npos);
  json listed = claim;
  listed["seeds"] = {1, 2, 3};
  EXPECT_NE(error_of(claims_spec("claim_seeds_list", listed)).find("claims[0].seeds: expected the number"), std::string::npos);
  json without = claim;
  without.erase("seeds");
  EXPECT_EQ(load_ablation_spec(claims_spec("claim_seeds_default", without)).claims[0].seeds, two);
}

// A recipe check runs each arm under the named recipe too: the arm's own overrides, then the
// recipe's, at the claim's seeds; a variant shared by two checks is one.
TEST(AblationSpec, ARecipeCheckRunsEachArmUnderTheRecipeToo) {
  const json recipes = {{"clip1", {{"train.clip_norm", 1.0}}}};
  json claim = {{"claim", "b wins"}, {"better", "b"}, {"worse", "a"}, {"metric", "bleu"}, {"seeds", 3}, {"recipe_check", "clip1"}};
  const AblationSpec spec = load_ablation_spec(claims_spec("recipe_check", claim, recipes));
  ASSERT_EQ(spec.variants.size(), 5u);
  const AblationVariant* b = spec.find_variant("b,recipe=clip1");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->recipe, "clip1");
  EXPECT_EQ(b->set, spec.find_variant("b")->set);
  EXPECT_EQ(b->config.train.clip_norm, 1.0);
  EXPECT_EQ(b->config.model.dropout, 0.2);
  EXPECT_EQ(spec.find_variant("b")->config.train.clip_norm, 0.0);
  EXPECT_EQ(spec.find_variant("a,recipe=clip1")->seeds, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_TRUE(spec.find_variant("a")->recipe.empty());
  EXPECT_EQ(spec.claims[0].recipe_check, "clip1");

  json unknown = claim;
  unknown["recipe_check"] = "warmup";
  EXPECT_NE(error_of(claims_spec("recipe_unknown", unknown, recipes)).find("claims[0].recipe_check: \"warmup\" is not one of the spec's \"recipes\""),
            std::string::npos);
  EXPECT_NE(error_of(claims_spec("recipe_seed", claim, {{"clip1", {{"train.seed", 4}}}})).find("recipes.clip1.train.seed: a recipe cannot choose the seed"),
            std::string::npos);
  EXPECT_NE(error_of(claims_spec("recipe_typo", claim, {{"clip1", {{"train.clip", 1.0}}}})).find("recipes.clip1 on variant \"b\".train.clip"),
            std::string::npos);
  EXPECT_NE(error_of(claims_spec("recipe_empty", claim, {{"clip1", json::object()}})).find("recipes.clip1: expected a non-empty object"),
            std::string::npos);
}

}  // namespace
}  // namespace trepro
