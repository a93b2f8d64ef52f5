#include "core/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/sha256.h"

namespace trepro::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The smallest valid config with `patch` merged in (RFC 7396), so each case states only what it
// is about.
json minimal_with(const json& patch) {
  json config = {{"model", {{"vocab_size", 100}}}};
  config.merge_patch(patch);
  return config;
}

// The message of the ConfigError that parsing `document` as "cfg.json" throws.
std::string error_of(const json& document) {
  try {
    config_from_json(document, "cfg.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError for " << document.dump();
  return "";
}

std::string error_of_validate(const Config& config) {
  try {
    validate(config, "by-hand");
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError from validate";
  return "";
}

// A file path unique to the running test, in gtest's temporary folder.
std::string temp_path(const std::string& suffix) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "config_test_" + test->name() + suffix;
}

// Every field differs from its default; two doubles need 17 significant digits (0.1 + 0.2, 1/3),
// so a lossy number format would show.
Config every_field_changed() {
  Config c;
  c.model.architecture = Architecture::decoder_only;
  c.model.vocab_size = 32003;
  c.model.d_model = 384;
  c.model.heads = 6;
  c.model.encoder_layers = 0;
  c.model.decoder_layers = 5;
  c.model.d_ff = 1024;
  c.model.norm = NormPlacement::pre;
  c.model.norm_kind = NormKind::rms;
  c.model.activation = Activation::none;
  c.model.swiglu = true;
  c.model.positional = Positional::rope;
  c.model.max_len = 1024;
  c.model.tie_embeddings = false;
  c.model.dropout = 0.1 + 0.2;
  c.model.attention_dropout = 1.0 / 3.0;
  c.model.layer_norm_eps = 1e-6;
  c.train.label_smoothing = 0.2;
  c.train.label_smoothing_form = SmoothingForm::fairseq;
  c.train.optimizer = {7e-4, 0.85, 0.999, 1e-8};
  c.train.schedule = {ScheduleKind::inverse_sqrt, 2500, 0.7};
  c.train.seed = std::numeric_limits<std::uint64_t>::max();
  c.train.max_tokens = 25000;
  c.train.update_freq = 4;
  c.train.max_steps = 300000;
  c.train.clip_norm = 1.0 / 3.0;
  c.train.validate_every = 250;
  c.train.checkpoint_every = 750;
  c.train.precision = Precision::bf16;
  c.data.dataset = Dataset::multi30k;
  c.data.source_language = "en";
  c.data.target_language = "de";
  c.data.vocabulary = {VocabularyKind::unigram, 32003};
  c.data.epochs = 10;
  c.data.dir = "/data/here";
  c.data.min_length = 2;
  c.data.max_length = 20;
  c.data.batch_size = 16;
  c.model.pad_id = 0;  // multi30k's vocabulary pads with 0
  return c;
}

// ---- Defaults and round trips -------------------------------------------------------------

TEST(Config, MissingKeysTakeTheStructDefaults) {
  const Config parsed = config_from_json(minimal_with(json::object()), "cfg.json");
  Config expected;
  expected.model.vocab_size = 100;
  EXPECT_EQ(config_to_json(parsed), config_to_json(expected));
  EXPECT_EQ(parsed.model.architecture, Architecture::encoder_decoder);
  EXPECT_EQ(parsed.model.layer_norm_eps, 1e-5);
  EXPECT_EQ(parsed.model.pad_id, 0);
  EXPECT_EQ(parsed.train.label_smoothing_form, SmoothingForm::uniform);
  EXPECT_EQ(parsed.train.schedule.kind, ScheduleKind::noam);
  EXPECT_EQ(parsed.train.precision, Precision::float32);
}

TEST(Config, PartialSectionsKeepTheOtherDefaults) {
  const Config c = config_from_json(minimal_with({{"train", {{"optimizer", {{"lr", 1e-3}}}}}}), "cfg.json");
  EXPECT_EQ(c.train.optimizer.lr, 1e-3);
  EXPECT_EQ(c.train.optimizer.beta2, OptimizerConfig{}.beta2);
  EXPECT_EQ(c.train.schedule.warmup, ScheduleConfig{}.warmup);
}

TEST(Config, WritesEveryKeyOfTheContract) {
  const json j = config_to_json(every_field_changed());
  const auto keys = [](const json& object) {
    std::set<std::string> names;
    for (const auto& [key, value] : object.items()) names.insert(key);
    return names;
  };
  EXPECT_EQ(keys(j), (std::set<std::string>{"model", "train", "data"}));
  EXPECT_EQ(keys(j["model"]),
            (std::set<std::string>{"architecture", "vocab_size", "d_model", "heads", "encoder_layers",
                                   "decoder_layers", "d_ff", "norm", "norm_kind", "activation", "positional",
                                   "max_len", "tie_embeddings", "dropout", "attention_dropout",
                                   "layer_norm_eps", "pad_id"}));
  EXPECT_EQ(keys(j["train"]),
            (std::set<std::string>{"label_smoothing", "label_smoothing_form", "optimizer", "schedule", "seed",
                                   "max_tokens", "update_freq", "max_steps", "clip_norm", "validate_every",
                                   "checkpoint_every", "precision"}));
  EXPECT_EQ(keys(j["data"]), (std::set<std::string>{"dataset", "source_language", "target_language", "vocabulary",
                                                    "epochs", "dir", "min_length", "max_length", "batch_size"}));
  EXPECT_EQ(keys(j["data"]["vocabulary"]), (std::set<std::string>{"kind", "size"}));
  EXPECT_EQ(keys(j["train"]["optimizer"]), (std::set<std::string>{"lr", "beta1", "beta2", "eps"}));
  EXPECT_EQ(keys(j["train"]["schedule"]), (std::set<std::string>{"kind", "warmup", "factor"}));
}

TEST(Config, EveryFieldRoundTripsThroughJsonText) {
  const Config original = every_field_changed();
  const std::string text = config_to_json(original).dump(2);
  const Config back = config_from_json(json::parse(text), "<string>");
  EXPECT_EQ(config_to_json(back), config_to_json(original));
  EXPECT_EQ(back.model.dropout, 0.1 + 0.2);
  EXPECT_EQ(back.model.attention_dropout, 1.0 / 3.0);
  EXPECT_EQ(back.model.activation, Activation::none);
  EXPECT_TRUE(back.model.swiglu);
  EXPECT_EQ(back.model.norm_kind, NormKind::rms);
  EXPECT_EQ(back.train.seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(back.train.schedule.kind, ScheduleKind::inverse_sqrt);
  EXPECT_EQ(back.train.clip_norm, 1.0 / 3.0);
  EXPECT_EQ(back.train.precision, Precision::bf16);
  EXPECT_EQ(back.data.dataset, Dataset::multi30k);
  EXPECT_EQ(back.data.vocabulary.kind, VocabularyKind::unigram);
  EXPECT_EQ(back.data.source_language, "en");
  EXPECT_EQ(back.data.dir, "/data/here");
  EXPECT_EQ(config_hash(back), config_hash(original));
}

TEST(Config, SaveThenLoadGivesTheSameConfig) {
  const std::string path = temp_path(".json");
  const Config original = every_field_changed();
  save_config(original, path);
  EXPECT_EQ(read_file(path), config_to_json(original).dump(2) + "\n");
  const Config loaded = load_config(path);
  EXPECT_EQ(config_to_json(loaded), config_to_json(original));
  std::filesystem::remove(path);
}

TEST(Config, SaveRefusesAnInvalidConfig) {
  const std::string path = temp_path(".json");
  Config c;
  c.model.vocab_size = 100;
  c.model.heads = 7;
  EXPECT_THROW(save_config(c, path), ConfigError);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Config, HashIsSha256OfTheCanonicalJson) {
  const Config c = every_field_changed();
  const std::string hash = config_hash(c);
  EXPECT_EQ(hash, sha256_hex(config_to_json(c).dump()));
  EXPECT_EQ(hash.size(), 64u);
  Config changed = c;
  changed.train.seed = 2;
  EXPECT_NE(config_hash(changed), hash);
}

TEST(Config, HashDoesNotDependOnKeyOrderOrSpacing) {
  const Config a = config_from_json(json::parse(R"({"model": {"vocab_size": 100, "d_model": 256}})"), "a");
  const Config b = config_from_json(json::parse(R"({"model":{"d_model":256,"vocab_size":100}})"), "b");
  EXPECT_EQ(config_hash(a), config_hash(b));
}

// ---- Accepted forms -----------------------------------------------------------------------

TEST(Config, PaperBaseConfigParses) {
  const json base = json::parse(R"({
    "model": {"architecture": "encoder_decoder", "vocab_size": 37000, "d_model": 512, "heads": 8,
              "encoder_layers": 6, "decoder_layers": 6, "d_ff": 2048, "norm": "post",
              "norm_kind": "layernorm", "activation": "relu", "positional": "sinusoidal", "max_len": 256,
              "tie_embeddings": true, "dropout": 0.1, "attention_dropout": 0.0, "pad_id": 0},
    "train": {"label_smoothing": 0.1, "label_smoothing_form": "uniform",
              "optimizer": {"beta1": 0.9, "beta2": 0.98, "eps": 1e-9},
              "schedule": {"kind": "noam", "warmup": 4000, "factor": 1.0},
              "seed": 1, "max_tokens": 25000, "update_freq": 1, "max_steps": 100000}
  })");
  const Config c = config_from_json(base, "base.json");
  EXPECT_EQ(c.model.d_head(), 64);
  EXPECT_EQ(c.model.norm, NormPlacement::post);
  EXPECT_EQ(c.model.activation, Activation::relu);
  EXPECT_FALSE(c.model.swiglu);
  EXPECT_EQ(c.train.optimizer.eps, 1e-9);
  EXPECT_EQ(c.train.max_tokens, 25000);
}

// Table 3 row (B): d_k below d_model / heads. With head_dim set, d_model need not be a multiple
// of the head count, and the attention width is heads x head_dim.
TEST(Config, HeadDimSetsTheHeadWidthAndFreesDModelFromHeads) {
  const Config narrow = config_from_json({{"model", {{"vocab_size", 100}, {"heads", 8}, {"head_dim", 16}}}}, "b.json");
  EXPECT_EQ(narrow.model.d_head(), 16);
  EXPECT_EQ(narrow.model.attention_width(), 128);
  const Config odd = config_from_json({{"model", {{"vocab_size", 100}, {"heads", 7}, {"head_dim", 64}}}}, "b.json");
  EXPECT_EQ(odd.model.attention_width(), 448);
  const Config absent = config_from_json({{"model", {{"vocab_size", 100}}}}, "b.json");
  EXPECT_EQ(absent.model.d_head(), 64);  // 512 / 8
  EXPECT_EQ(absent.model.attention_width(), 512);
}

TEST(Config, ActivationNamesMapToTheEnumAndTheSwigluGate) {
  const auto parse = [](const char* name) {
    return config_from_json(minimal_with({{"model", {{"activation", name}}}}), "cfg.json").model;
  };
  EXPECT_EQ(parse("gelu").activation, Activation::gelu);
  EXPECT_EQ(parse("gelu_tanh").activation, Activation::gelu_tanh);
  const ModelConfig swiglu = parse("swiglu");
  EXPECT_EQ(swiglu.activation, Activation::none);
  EXPECT_TRUE(swiglu.swiglu);
  EXPECT_FALSE(parse("relu").swiglu);
}

TEST(Config, IntegralNumbersAreAcceptedForIntegerKeys) {
  const Config c = config_from_json(
      minimal_with({{"model", {{"d_model", 512.0}}}, {"train", {{"max_steps", 1e5}}}}), "cfg.json");
  EXPECT_EQ(c.model.d_model, 512);
  EXPECT_EQ(c.train.max_steps, 100000);
}

TEST(Config, SeedTakesTheWholeUint64Range) {
  const Config c = config_from_json(
      json::parse(R"({"model": {"vocab_size": 10}, "train": {"seed": 18446744073709551615}})"), "cfg.json");
  EXPECT_EQ(c.train.seed, std::numeric_limits<std::uint64_t>::max());
}

TEST(Config, AMissingStackDefaultsToZeroLayers) {
  const Config decoder = config_from_json(minimal_with({{"model", {{"architecture", "decoder_only"}}}}), "c");
  EXPECT_EQ(decoder.model.encoder_layers, 0);
  EXPECT_EQ(decoder.model.decoder_layers, 6);
  const Config encoder = config_from_json(minimal_with({{"model", {{"architecture", "encoder_only"}}}}), "c");
  EXPECT_EQ(encoder.model.encoder_layers, 6);
  EXPECT_EQ(encoder.model.decoder_layers, 0);
}

TEST(Config, ConstantScheduleAllowsNoWarmup) {
  const Config c = config_from_json(
      minimal_with({{"train", {{"schedule", {{"kind", "constant"}, {"warmup", 0}}}}}}), "cfg.json");
  EXPECT_EQ(c.train.schedule.warmup, 0);
}

TEST(Config, Multi30kDataSectionParses) {
  const Config c = config_from_json(
      minimal_with({{"data", {{"dataset", "multi30k"}, {"source_language", "en"}, {"target_language", "de"},
                              {"vocabulary", {{"kind", "unigram"}, {"size", 100}}}, {"epochs", 10}}}}),
      "cfg.json");
  EXPECT_EQ(c.data.dataset, Dataset::multi30k);
  EXPECT_EQ(c.data.source_language, "en");
  EXPECT_EQ(c.data.target_language, "de");
  EXPECT_EQ(c.data.vocabulary.kind, VocabularyKind::unigram);
  EXPECT_EQ(c.data.epochs, 10);
  EXPECT_EQ(c.data.dir, "");
}

TEST(Config, DataDefaultsToTheCopyTask) {
  const Config c = config_from_json(minimal_with(json::object()), "cfg.json");
  EXPECT_EQ(c.data.dataset, Dataset::copy);
  EXPECT_EQ(c.data.epochs, 0);
  EXPECT_EQ(c.train.clip_norm, 0.0);
}

TEST(ConfigErrors, Multi30kNeedsPadIdZero) {
  EXPECT_EQ(error_of(minimal_with({{"model", {{"pad_id", 5}}}, {"data", {{"dataset", "multi30k"}, {"vocabulary", {{"size", 100}}}}}})),
            "cfg.json: model.pad_id: must be 0 for multi30k (the vocabulary's pad id), got 5");
}

TEST(Config, EnumNamesAreTheJsonNames) {
  EXPECT_EQ(to_string(Dataset::multi30k), "multi30k");
  EXPECT_EQ(to_string(VocabularyKind::unigram), "unigram");
  EXPECT_EQ(to_string(Architecture::decoder_only), "decoder_only");
  EXPECT_EQ(to_string(NormPlacement::pre), "pre");
  EXPECT_EQ(to_string(NormKind::layer), "layernorm");
  EXPECT_EQ(to_string(NormKind::rms), "rmsnorm");
  EXPECT_EQ(to_string(Activation::gelu_tanh, false), "gelu_tanh");
  EXPECT_EQ(to_string(Activation::none, true), "swiglu");
  EXPECT_EQ(to_string(Positional::rope), "rope");
  EXPECT_EQ(to_string(SmoothingForm::fairseq), "fairseq");
  EXPECT_EQ(to_string(ScheduleKind::inverse_sqrt), "inverse_sqrt");
  EXPECT_EQ(to_string(Precision::float32), "float32");
  EXPECT_EQ(to_string(Precision::bf16), "bf16");
}

// ---- Errors: each names the source, the key path and what is wrong -----------------------

struct ErrorCase {
  const char* name;
  json patch;            // merged into the minimal config
  const char* expected;  // a substring of the message, from "cfg.json: " on
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class ConfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigErrorTest, MessageNamesSourcePathAndReason) {
  EXPECT_THAT(error_of(minimal_with(GetParam().patch)), HasSubstr(GetParam().expected));
}

json model(json fields) { return {{"model", std::move(fields)}}; }
json train(json fields) { return {{"train", std::move(fields)}}; }
json data(json fields) { return {{"data", std::move(fields)}}; }
// A multi30k data section whose vocabulary matches the minimal config's vocab_size 100.
json multi30k(json fields) {
  json section = {{"dataset", "multi30k"}, {"vocabulary", {{"size", 100}}}};
  section.merge_patch(fields);
  return {{"data", std::move(section)}};
}

std::vector<ErrorCase> error_cases() {
  return {
      // Unknown keys, at every level.
      {"unknown_top_key", {{"colour", 1}}, "cfg.json: colour: unknown key (known keys: model, train, data)"},
      {"unknown_model_key", model({{"colour", "red"}}),
       "cfg.json: model.colour: unknown key (known keys: architecture, vocab_size, d_model, heads, "},
      {"unknown_train_key", train({{"clip", 1.0}}), "cfg.json: train.clip: unknown key (known keys: "},
      {"unknown_data_key", data({{"language", "de"}}),
       "cfg.json: data.language: unknown key (known keys: dataset, source_language, target_language, "},
      {"unknown_vocabulary_key", data({{"vocabulary", {{"model_type", "bpe"}}}}),
       "cfg.json: data.vocabulary.model_type: unknown key (known keys: kind, size, sample_sentences)"},
      {"unknown_optimizer_key", train({{"optimizer", {{"momentum", 0.9}}}}),
       "cfg.json: train.optimizer.momentum: unknown key (known keys: lr, beta1, beta2, eps)"},
      {"unknown_schedule_key", train({{"schedule", {{"warmup_steps", 10}}}}),
       "cfg.json: train.schedule.warmup_steps: unknown key (known keys: kind, warmup, factor)"},
      // Wrong types.
      {"model_not_object", {{"model", 3}}, "cfg.json: model: expected a JSON object, got 3"},
      {"train_not_object", {{"train", json::array()}}, "cfg.json: train: expected a JSON object, got []"},
      {"schedule_not_object", train({{"schedule", "noam"}}),
       "cfg.json: train.schedule: expected a JSON object, got \"noam\""},
      {"int_as_string", model({{"d_model", "512"}}),
       "cfg.json: model.d_model: expected an integer, got \"512\""},
      {"int_as_fraction", model({{"d_model", 512.5}}),
       "cfg.json: model.d_model: expected an integer, got 512.5"},
      {"int_as_bool", model({{"heads", true}}), "cfg.json: model.heads: expected an integer, got true"},
      {"int_too_large", model({{"max_len", 1e19}}),
       "cfg.json: model.max_len: expected an integer, got 1e+19"},
      {"double_as_string", model({{"dropout", "0.1"}}),
       "cfg.json: model.dropout: expected a number, got \"0.1\""},
      {"bool_as_string", model({{"tie_embeddings", "yes"}}),
       "cfg.json: model.tie_embeddings: expected true or false, got \"yes\""},
      {"enum_as_number", model({{"activation", 3}}),
       "cfg.json: model.activation: expected a string, got 3 (expected relu, gelu, gelu_tanh, swiglu)"},
      {"seed_negative", train({{"seed", -1}}),
       "cfg.json: train.seed: expected a non-negative integer, got -1"},
      {"seed_fraction", train({{"seed", 1.5}}),
       "cfg.json: train.seed: expected a non-negative integer, got 1.5"},
      // Unknown enum values.
      {"activation", model({{"activation", "tanh"}}),
       "cfg.json: model.activation: unknown value \"tanh\" (expected relu, gelu, gelu_tanh, swiglu)"},
      {"architecture", model({{"architecture", "seq2seq"}}),
       "cfg.json: model.architecture: unknown value \"seq2seq\" (expected encoder_decoder, decoder_only, "
       "encoder_only)"},
      {"norm", model({{"norm", "sandwich"}}),
       "cfg.json: model.norm: unknown value \"sandwich\" (expected post, pre)"},
      {"norm_kind", model({{"norm_kind", "LayerNorm"}}),
       "cfg.json: model.norm_kind: unknown value \"LayerNorm\" (expected layernorm, rmsnorm)"},
      {"positional", model({{"positional", "alibi"}}),
       "cfg.json: model.positional: unknown value \"alibi\" (expected sinusoidal, learned, rope)"},
      {"smoothing_form", train({{"label_smoothing_form", "annotated"}}),
       "cfg.json: train.label_smoothing_form: unknown value \"annotated\" (expected uniform, fairseq)"},
      {"precision_fp16", train({{"precision", "fp16"}}),
       "cfg.json: train.precision: unknown value \"fp16\" (expected float32, bf16)"},
      {"precision_not_a_string", train({{"precision", 16}}),
       "cfg.json: train.precision: expected a string, got 16 (expected float32, bf16)"},
      {"schedule_kind", train({{"schedule", {{"kind", "cosine"}}}}),
       "cfg.json: train.schedule.kind: unknown value \"cosine\" (expected noam, constant, inverse_sqrt)"},
      // Impossible values.
      {"vocab_size_1", model({{"vocab_size", 1}}), "cfg.json: model.vocab_size: must be >= 2, got 1"},
      {"vocab_size_int32", model({{"vocab_size", 2147483648}}),
       "cfg.json: model.vocab_size: must fit in int32 (token ids are int32), got 2147483648"},
      {"d_model_0", model({{"d_model", 0}}), "cfg.json: model.d_model: must be >= 1, got 0"},
      {"heads_0", model({{"heads", 0}}), "cfg.json: model.heads: must be >= 1, got 0"},
      {"heads_not_divisor", model({{"heads", 7}}),
       "cfg.json: model.heads: d_model 512 is not divisible by heads 7"},
      {"rope_odd_d_head", model({{"positional", "rope"}, {"d_model", 520}, {"heads", 8}}),
       "cfg.json: model.positional: rope rotates pairs of dimensions, "
       "so d_head (d_model / heads) must be even, got 65"},
      {"head_dim_negative", model({{"head_dim", -1}}),
       "cfg.json: model.head_dim: must be >= 0 (0 means d_model / heads), got -1"},
      {"rope_odd_head_dim", model({{"positional", "rope"}, {"head_dim", 33}}),
       "cfg.json: model.head_dim: rope rotates pairs of dimensions, so head_dim must be even, got 33"},
      {"encoder_layers_0", model({{"encoder_layers", 0}}),
       "cfg.json: model.encoder_layers: must be >= 1 for the encoder_decoder architecture, got 0"},
      {"decoder_layers_0", model({{"decoder_layers", 0}}),
       "cfg.json: model.decoder_layers: must be >= 1 for the encoder_decoder architecture, got 0"},
      {"encoder_only_without_encoder", model({{"architecture", "encoder_only"}, {"encoder_layers", 0}}),
       "cfg.json: model.encoder_layers: must be >= 1 for the encoder_only architecture, got 0"},
      {"decoder_only_with_encoder", model({{"architecture", "decoder_only"}, {"encoder_layers", 6}}),
       "cfg.json: model.encoder_layers: must be 0 for the decoder_only architecture "
       "(it has no encoder), got 6"},
      {"encoder_only_with_decoder", model({{"architecture", "encoder_only"}, {"decoder_layers", 2}}),
       "cfg.json: model.decoder_layers: must be 0 for the encoder_only architecture "
       "(it has no decoder), got 2"},
      {"d_ff_0", model({{"d_ff", 0}}), "cfg.json: model.d_ff: must be >= 1, got 0"},
      {"max_len_0", model({{"max_len", 0}}), "cfg.json: model.max_len: must be >= 1, got 0"},
      {"dropout_1", model({{"dropout", 1}}), "cfg.json: model.dropout: must be in [0, 1), got 1"},
      {"dropout_negative", model({{"dropout", -0.1}}),
       "cfg.json: model.dropout: must be in [0, 1), got -0.1"},
      {"attention_dropout", model({{"attention_dropout", 1.5}}),
       "cfg.json: model.attention_dropout: must be in [0, 1), got 1.5"},
      {"layer_norm_eps_0", model({{"layer_norm_eps", 0}}),
       "cfg.json: model.layer_norm_eps: must be > 0, got 0"},
      {"layer_norm_eps_negative", model({{"layer_norm_eps", -1e-5}}),
       "cfg.json: model.layer_norm_eps: must be > 0, got -1e-05"},
      {"pad_id_vocab", model({{"pad_id", 100}}),
       "cfg.json: model.pad_id: must be in [0, vocab_size 100), got 100"},
      {"pad_id_negative", model({{"pad_id", -1}}),
       "cfg.json: model.pad_id: must be in [0, vocab_size 100), got -1"},
      {"label_smoothing_1", train({{"label_smoothing", 1.0}}),
       "cfg.json: train.label_smoothing: must be in [0, 1), got 1"},
      {"lr_0", train({{"optimizer", {{"lr", 0}}}}), "cfg.json: train.optimizer.lr: must be > 0, got 0"},
      {"beta1_1", train({{"optimizer", {{"beta1", 1}}}}),
       "cfg.json: train.optimizer.beta1: must be in [0, 1), got 1"},
      {"beta2_negative", train({{"optimizer", {{"beta2", -0.5}}}}),
       "cfg.json: train.optimizer.beta2: must be in [0, 1), got -0.5"},
      {"eps_0", train({{"optimizer", {{"eps", 0}}}}), "cfg.json: train.optimizer.eps: must be > 0, got 0"},
      {"noam_warmup_0", train({{"schedule", {{"warmup", 0}}}}),
       "cfg.json: train.schedule.warmup: must be >= 1 for the noam schedule, got 0"},
      {"inverse_sqrt_warmup_0", train({{"schedule", {{"kind", "inverse_sqrt"}, {"warmup", 0}}}}),
       "cfg.json: train.schedule.warmup: must be >= 1 for the inverse_sqrt schedule, got 0"},
      {"constant_warmup_negative", train({{"schedule", {{"kind", "constant"}, {"warmup", -1}}}}),
       "cfg.json: train.schedule.warmup: must be >= 0 for the constant schedule, got -1"},
      {"factor_0", train({{"schedule", {{"factor", 0}}}}),
       "cfg.json: train.schedule.factor: must be > 0, got 0"},
      {"max_tokens_0", train({{"max_tokens", 0}}), "cfg.json: train.max_tokens: must be >= 1, got 0"},
      {"update_freq_0", train({{"update_freq", 0}}), "cfg.json: train.update_freq: must be >= 1, got 0"},
      {"replicas_above_update_freq", train({{"update_freq", 2}, {"replicas", 4}}),
       "cfg.json: train.replicas: must be <= train.update_freq 2 (each shard takes whole batches of a step), got 4"},
      {"max_steps_negative", train({{"max_steps", -1}}), "cfg.json: train.max_steps: must be >= 0, got -1"},
      {"clip_norm_negative", train({{"clip_norm", -1}}),
       "cfg.json: train.clip_norm: must be >= 0 (0 turns clipping off), got -1"},
      {"validate_every_0", train({{"validate_every", 0}}), "cfg.json: train.validate_every: must be >= 1, got 0"},
      {"checkpoint_every_0", train({{"checkpoint_every", 0}}),
       "cfg.json: train.checkpoint_every: must be >= 1, got 0"},
      // The data section.
      {"dataset_unknown", data({{"dataset", "wmt14"}}),
       "cfg.json: data.dataset: unknown value \"wmt14\" (expected copy, reverse, multi30k, parallel)"},
      {"vocabulary_kind_unknown", data({{"vocabulary", {{"kind", "wordpiece"}}}}),
       "cfg.json: data.vocabulary.kind: unknown value \"wordpiece\" (expected bpe, unigram)"},
      {"language_not_string", data({{"source_language", 1}}),
       "cfg.json: data.source_language: expected a string, got 1"},
      {"language_unknown", multi30k({{"source_language", "fr"}}),
       "cfg.json: data.source_language: multi30k has no language \"fr\" (expected de or en)"},
      {"languages_equal", multi30k({{"source_language", "en"}, {"target_language", "en"}}),
       "cfg.json: data.target_language: must differ from source_language \"en\""},
      {"vocabulary_size_mismatch", multi30k({{"vocabulary", {{"size", 8000}}}}),
       "cfg.json: data.vocabulary.size: must equal model.vocab_size 100, got 8000"},
      {"parallel_filter_beyond_positions",
       data({{"dataset", "parallel"}, {"vocabulary", {{"size", 100}}}, {"max_len_filter", 300}}),
       "cfg.json: data.max_len_filter: must be <= model.max_len 256 (longer pairs have no positions), got 300"},
      {"parallel_split_outside_the_folder",
       data({{"dataset", "parallel"}, {"vocabulary", {{"size", 100}}}, {"train", "../train"}}),
       "cfg.json: data.train: must name a file in data.dir (not empty, no '/'), got \"../train\""},
      {"parallel_valid_is_a_test_split",
       data({{"dataset", "parallel"}, {"vocabulary", {{"size", 100}}}, {"valid", "t"}, {"test", {"t"}}}),
       "cfg.json: data.test: names the split \"t\" that data.valid names too: each split must be its own files"},
      {"parallel_valid_is_the_training_split",
       data({{"dataset", "parallel"}, {"vocabulary", {{"size", 100}}}, {"valid", "train"}}),
       "cfg.json: data.valid: names the split \"train\" that data.train names too: each split must be its own files"},
      {"parallel_test_named_twice",
       data({{"dataset", "parallel"}, {"vocabulary", {{"size", 100}}}, {"test", {"a", "a"}}}),
       "cfg.json: data.test: names the split \"a\" that data.test names too: each split must be its own files"},
      {"parallel_test_not_an_array", data({{"dataset", "parallel"}, {"vocabulary", {{"size", 100}}}, {"test", "t"}}),
       "cfg.json: data.test: expected an array of strings, got \"t\""},
      {"epochs_negative", data({{"epochs", -1}}), "cfg.json: data.epochs: must be >= 0, got -1"},
      {"copy_min_length_0", data({{"min_length", 0}}), "cfg.json: data.min_length: must be >= 1, got 0"},
      {"copy_max_below_min", data({{"min_length", 5}, {"max_length", 4}}),
       "cfg.json: data.max_length: must be >= 5 (min_length), got 4"},
      {"copy_batch_size_0", data({{"batch_size", 0}}), "cfg.json: data.batch_size: must be >= 1, got 0"},
  };
}

INSTANTIATE_TEST_SUITE_P(Config, ConfigErrorTest, ::testing::ValuesIn(error_cases()),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST(ConfigErrors, MissingVocabSize) {
  EXPECT_THAT(error_of({{"model", {{"d_model", 512}}}}),
              HasSubstr("cfg.json: model: missing required key vocab_size"));
}

TEST(ConfigErrors, MissingModel) {
  EXPECT_EQ(error_of({{"train", json::object()}}), "cfg.json: missing required key model");
}

TEST(ConfigErrors, NullIsNotAnInteger) {
  EXPECT_THAT(error_of({{"model", {{"vocab_size", nullptr}}}}),
              HasSubstr("cfg.json: model.vocab_size: expected an integer, got null"));
}

TEST(ConfigErrors, DocumentThatIsNotAnObject) {
  EXPECT_THAT(error_of(json::array({1, 2})), HasSubstr("cfg.json: expected a JSON object, got [1,2]"));
  EXPECT_THAT(error_of("model"), HasSubstr("cfg.json: expected a JSON object, got \"model\""));
}

TEST(ConfigErrors, LongValuesAreCutShort) {
  const std::string message = error_of(minimal_with(model({{"d_model", std::vector<int>(100, 512)}})));
  EXPECT_THAT(message, HasSubstr("cfg.json: model.d_model: expected an integer, got [512,512,"));
  EXPECT_LT(message.size(), 120u);
}

TEST(ConfigErrors, InvalidJsonFileNamesThePath) {
  const std::string path = temp_path(".json");
  std::ofstream(path) << R"({"model": {"vocab_size": 100,}})";
  try {
    load_config(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), StartsWith(path + ": invalid JSON: "));
    EXPECT_THAT(e.what(), HasSubstr("line 1"));
  }
  std::filesystem::remove(path);
}

TEST(ConfigErrors, MissingFileNamesThePath) {
  const std::string path = temp_path(".does-not-exist.json");
  try {
    load_config(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), StartsWith(path + ": cannot read: "));
  }
}

TEST(ConfigErrors, ValueErrorsInAFileNameTheFile) {
  const std::string path = temp_path(".json");
  std::ofstream(path) << R"({"model": {"vocab_size": 100, "heads": 7}})";
  try {
    load_config(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": model.heads: d_model 512 is not divisible by heads 7");
  }
  std::filesystem::remove(path);
}

// The message of the ConfigError that loading a file holding `text` throws, with the file's
// path written as "cfg.json".
std::string load_error_of(const std::string& text) {
  const std::string path = temp_path(".json");
  std::ofstream(path) << text;
  std::string message = "no ConfigError";
  try {
    load_config(path);
  } catch (const ConfigError& e) {
    message = e.what();
  }
  std::filesystem::remove(path);
  return message.starts_with(path) ? "cfg.json" + message.substr(path.size()) : message;
}

// 100,000 nested arrays overflowed the stack when the error message quoted the value.
TEST(ConfigErrors, DeeplyNestedJsonIsAnErrorNotACrash) {
  EXPECT_EQ(load_error_of(std::string(100000, '[') + std::string(100000, ']')),
            "cfg.json: JSON nested deeper than 64 levels (at byte 64)");
  EXPECT_EQ(load_error_of(R"({"model": {"vocab_size": 100, "d_model": )" + std::string(100, '[') + "}}"),
            "cfg.json: JSON nested deeper than 64 levels (at byte 103)");
}

// nlohmann keeps the last of two keys: the file would say 16 to a reader and 17 to the program.
TEST(ConfigErrors, DuplicateKeyIsAnError) {
  EXPECT_EQ(load_error_of(R"({"model": {"vocab_size": 16, "vocab_size": 17}})"),
            "cfg.json: model.vocab_size: the key appears twice");
  EXPECT_EQ(load_error_of(R"({"model": {"vocab_size": 16}, "train": {"seed": 1}, "model": {"d_model": 8}})"),
            "cfg.json: model: the key appears twice");
  EXPECT_EQ(load_error_of(R"({"model": {"vocab_size": 16}, "train": {"optimizer": {"lr": 1, "lr": 1}}})"),
            "cfg.json: train.optimizer.lr: the key appears twice");
}

TEST(ConfigErrors, ValidateChecksAConfigBuiltByHand) {
  EXPECT_EQ(error_of_validate(Config{}), "by-hand: model.vocab_size: must be >= 2, got 0");

  Config c;
  c.model.vocab_size = 100;
  c.model.swiglu = true;  // activation is still relu
  EXPECT_EQ(error_of_validate(c),
            "by-hand: model.activation: swiglu is set, so activation must be none, got relu");
  c.model.swiglu = false;
  c.model.activation = Activation::none;
  EXPECT_EQ(error_of_validate(c), "by-hand: model.activation: none is only valid together with swiglu");
  c.model.activation = Activation::relu;
  c.model.dropout = std::nan("");
  EXPECT_EQ(error_of_validate(c), "by-hand: model.dropout: must be in [0, 1), got nan");
}

// ---- SHA-256 ------------------------------------------------------------------------------

TEST(Sha256, FipsTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the padding boundaries (55 bytes fits one final block, 56 needs two); the
// digests are from coreutils sha256sum.
TEST(Sha256, PaddingBoundaries) {
  EXPECT_EQ(sha256_hex(std::string(55, 'x')),
            "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
  EXPECT_EQ(sha256_hex(std::string(56, 'x')),
            "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
  EXPECT_EQ(sha256_hex(std::string(64, 'x')),
            "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
  EXPECT_EQ(sha256_hex(std::string(119, 'x')),
            "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c");
}

}  // namespace
}  // namespace trepro::testing
