// The field list (core/config_fields.h) is the whole contract: every key is read, written and
// hashed, write-then-read is the identity, docs/config.md's key table is generated from it, and
// the hashes of committed reports survive any change to how the JSON is produced.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "core/atomic_file.h"
#include "core/config.h"
#include "core/sha256.h"

namespace trepro::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

// The smallest valid config with `patch` merged in (RFC 7396).
json minimal_with(const json& patch) {
  json config = {{"model", {{"vocab_size", 100}}}};
  config.merge_patch(patch);
  return config;
}

// A non-default value for each key, valid on its own in the minimal config; a key added to the
// field list without one here fails EveryKeyHasANonDefaultValueHere.
const std::map<std::string, json>& non_default_values() {
  static const std::map<std::string, json> values = {
      {"model.architecture", "decoder_only"},
      {"model.vocab_size", 200},
      {"model.d_model", 256},
      {"model.heads", 4},
      {"model.head_dim", 32},
      {"model.encoder_layers", 3},
      {"model.decoder_layers", 2},
      {"model.d_ff", 1024},
      {"model.norm", "pre"},
      {"model.norm_kind", "rmsnorm"},
      {"model.activation", "swiglu"},
      {"model.positional", "rope"},
      {"model.max_len", 128},
      {"model.tie_embeddings", false},
      {"model.dropout", 0.1 + 0.2},  // 17 significant digits: a lossy number format would show
      {"model.attention_dropout", 1.0 / 3.0},
      {"model.layer_norm_eps", 1e-6},
      {"model.pad_id", 3},
      {"train.label_smoothing", 0.2},
      {"train.label_smoothing_form", "fairseq"},
      {"train.optimizer.lr", 7e-4},
      {"train.optimizer.beta1", 0.85},
      {"train.optimizer.beta2", 0.999},
      {"train.optimizer.eps", 1e-8},
      {"train.schedule.kind", "inverse_sqrt"},
      {"train.schedule.warmup", 2500},
      {"train.schedule.factor", 0.7},
      {"train.seed", std::numeric_limits<std::uint64_t>::max()},
      {"train.max_tokens", 25000},
      {"train.update_freq", 4},
      {"train.max_steps", 300000},
      {"train.clip_norm", 1.0 / 3.0},
      {"train.validate_every", 250},
      {"train.checkpoint_every", 750},
      {"train.precision", "bf16"},
      {"train.patience", 5},
      {"train.keep_checkpoints", 4},
      {"train.replicas", 8},
      {"data.dataset", "reverse"},
      {"data.source_language", "en"},
      {"data.target_language", "de"},
      {"data.vocabulary.kind", "unigram"},
      {"data.vocabulary.size", 100},
      {"data.epochs", 10},
      {"data.dir", "/data/here"},
      {"data.min_length", 2},
      {"data.max_length", 20},
      {"data.batch_size", 16},
      {"data.vocabulary.sample_sentences", 2000000},
      {"data.train", "corpus"},
      {"data.valid", "dev"},
      {"data.test", json::array({"test_a", "test_b"})},
      {"data.max_len_filter", 64},
  };
  return values;
}

json::json_pointer pointer(const std::string& dotted) {
  std::string text = "/" + dotted;
  for (char& c : text) c = c == '.' ? '/' : c;
  return json::json_pointer(text);
}

TEST(ConfigFields, EveryKeyHasANonDefaultValueHere) {
  std::set<std::string> listed, here;
  for (const ConfigKey& key : config_keys()) listed.insert(key.path);
  for (const auto& [path, value] : non_default_values()) here.insert(path);
  EXPECT_EQ(listed, here);
}

// For each key alone: the value read is the value written (so the key is read and written),
// it is not the default (so the test means something), write-then-read is the identity, and
// the hash changes (so the key is hashed).
TEST(ConfigFields, EveryKeyIsReadWrittenAndHashed) {
  const Config base = config_from_json(minimal_with(json::object()), "base");
  const json defaults = config_to_json(base, JsonKeys::every);
  for (const auto& [path, value] : non_default_values()) {
    SCOPED_TRACE(path);
    json document = minimal_with(json::object());
    document[pointer(path)] = value;
    // train.replicas may not exceed train.update_freq (a shard takes whole batches).
    if (path == "train.replicas") document[pointer("train.update_freq")] = value;
    const Config read = config_from_json(document, "cfg.json");
    const json written = config_to_json(read);
    ASSERT_TRUE(written.contains(pointer(path)));
    EXPECT_EQ(written.at(pointer(path)), value);
    EXPECT_NE(written.at(pointer(path)), defaults.at(pointer(path)));
    const Config back = config_from_json(json::parse(written.dump(2)), "<string>");
    EXPECT_EQ(config_to_json(back, JsonKeys::every), config_to_json(read, JsonKeys::every));
    EXPECT_NE(config_hash(read), config_hash(base));
  }
}

TEST(ConfigFields, EveryKeyWrittenIsListedAndEveryListedKeyIsWritten) {
  std::set<std::string> listed, written;
  for (const ConfigKey& key : config_keys()) listed.insert(key.path);
  const json flat = config_to_json(Config{}, JsonKeys::every).flatten();
  for (const auto& [pointer_text, value] : flat.items()) {
    std::string path = pointer_text.substr(1);
    for (char& c : path) c = c == '/' ? '.' : c;
    // An array's items flatten to "key.0", "key.1": the key is the array.
    if (value.is_string() && path.find_last_not_of("0123456789") == path.size() - 2 && path.back() != '.') {
      path.erase(path.rfind('.'));
    }
    written.insert(path);
  }
  EXPECT_EQ(listed, written);
}

// ---- Keys added after contract version 1 --------------------------------------------------

TEST(ConfigFields, ANewKeyAtItsDefaultIsLeftOutOfTheCanonicalJson) {
  Config c = config_from_json(minimal_with(json::object()), "cfg.json");
  EXPECT_FALSE(config_to_json(c)["train"].contains("patience"));
  EXPECT_EQ(config_to_json(c, JsonKeys::every)["train"]["patience"], 0);
  const std::string without = config_hash(c);
  c.train.patience = 3;
  EXPECT_EQ(config_to_json(c)["train"]["patience"], 3);
  EXPECT_NE(config_hash(c), without);
  // Writing the default explicitly is the same config.
  const Config explicit_zero = config_from_json(minimal_with({{"train", {{"patience", 0}}}}), "cfg.json");
  EXPECT_EQ(config_hash(explicit_zero), without);
}

// Version 1 is the contract as it stood before the field list; keys added with or after it are
// version 2 and later.
// Version 2 holds the keys added since the field list; every earlier key is version 1.
TEST(ConfigFields, KeysAddedSinceTheFieldListAreVersionTwo) {
  const std::set<std::string> version_two = {"model.head_dim",          "train.patience",
                                            "train.keep_checkpoints",  "data.vocabulary.sample_sentences",
                                            "data.train",              "data.valid",
                                            "data.test",               "data.max_len_filter",
                                            "train.replicas"};
  for (const ConfigKey& key : config_keys()) {
    EXPECT_EQ(key.since, version_two.contains(key.path) ? 2 : 1) << key.path;
  }
}

TEST(ConfigFields, PatienceMustNotBeNegative) {
  try {
    config_from_json(minimal_with({{"train", {{"patience", -1}}}}), "cfg.json");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "cfg.json: train.patience: must be >= 0 (0 turns early stopping off), got -1");
  }
}

// ---- docs/config.md's key table -----------------------------------------------------------

TEST(ConfigFields, DocsKeyTableIsTheFieldList) {
  const std::string page = read_file(std::string(TREPRO_SOURCE_DIR) + "/docs/config.md");
  const std::string begin = "<!-- config-keys: begin -->\n", end = "<!-- config-keys: end -->";
  const auto from = page.find(begin), to = page.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/config.md has no " << begin;
  ASSERT_NE(to, std::string::npos) << "docs/config.md has no " << end;
  ASSERT_LT(from, to) << "docs/config.md: " << end << " comes before " << begin;
  EXPECT_EQ(page.substr(from + begin.size(), to - from - begin.size()), config_keys_markdown())
      << "regenerate docs/config.md's table with `trepro config-keys`";
}

// ---- Committed reports keep their config hash ---------------------------------------------

// Every report.json committed under reports/: its config, read and written again, is the JSON
// that was hashed, byte for byte (key order, number formatting, keys left out). Reports written
// before train.precision (added in 84ff9dd, a version-1 key written always, which gave every
// config a new hash) lack the key, so it is taken out again before comparing with those.
TEST(ConfigFields, CommittedReportsKeepTheirConfigHash) {
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(std::string(TREPRO_SOURCE_DIR) + "/reports")) {
    if (entry.path().filename() != "report.json") continue;
    SCOPED_TRACE(entry.path().string());
    const json report = json::parse(read_file(entry.path().string()));
    const Config config = config_from_json(report.at("config"), entry.path().string());
    json written = config_to_json(config);
    EXPECT_EQ(config_hash(config), sha256_hex(written.dump()));
    if (!report.at("config").at("train").contains("precision")) {
      ASSERT_EQ(written["train"]["precision"], "float32");
      written["train"].erase("precision");
    }
    EXPECT_EQ(sha256_hex(written.dump()), report.at("config_hash").get<std::string>());
    EXPECT_EQ(written, report.at("config"));
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace trepro::testing
