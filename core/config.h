// The experiment config: JSON <-> structs, with validation.
//
// This is an interchange contract (other tools write these files): the JSON keys, their ranges
// and descriptions are the field lists of core/config_fields.h (one per struct below; the
// structs' initializers are the defaults), from which docs/config.md's key table is generated
// (`trepro config-keys`). Unknown keys, wrong types and impossible values are errors whose
// message names the file (when loaded from one) and the key path, e.g.
//   "base.json: model.heads: d_model 512 is not divisible by heads 7".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.h"

namespace trepro {

enum class NormPlacement { post, pre };  // model.norm: "post" | "pre"
enum class Architecture { encoder_decoder, decoder_only, encoder_only };
enum class ScheduleKind { noam, constant, inverse_sqrt };
enum class Dataset { copy, reverse, multi30k, parallel };
enum class VocabularyKind { bpe, unigram };

struct ModelConfig {
  Architecture architecture = Architecture::encoder_decoder;  // "encoder_decoder" | "decoder_only" | "encoder_only"
  std::int64_t vocab_size = 0;                                 // required, >= 2
  std::int64_t d_model = 512;
  std::int64_t heads = 8;                                      // d_model % heads == 0 unless head_dim is set
  std::int64_t head_dim = 0;                                   // d_k = d_v; 0: d_model / heads
  std::int64_t encoder_layers = 6;                             // >= 1 unless decoder_only (then 0)
  std::int64_t decoder_layers = 6;                             // >= 1 unless encoder_only (then 0)
  std::int64_t d_ff = 2048;
  NormPlacement norm = NormPlacement::post;                    // "post" | "pre"
  NormKind norm_kind = NormKind::layer;                        // "layernorm" | "rmsnorm"
  Activation activation = Activation::relu;                    // "relu" | "gelu" | "gelu_tanh" | "swiglu"
  bool swiglu = false;                                         // true when activation is "swiglu"
  Positional positional = Positional::sinusoidal;              // "sinusoidal" | "learned" | "rope"
  std::int64_t max_len = 256;                                  // positions 0 .. max_len-1
  bool tie_embeddings = true;
  double dropout = 0.1;                                        // [0, 1)
  double attention_dropout = 0.0;                              // [0, 1), off in the paper
  double layer_norm_eps = 1e-5;                                // > 0
  std::int64_t pad_id = 0;                                     // in [0, vocab_size)

  // d_k = d_v of each head, and the width of q, k, v and the attention output (heads x d_k),
  // which differs from d_model when head_dim is set (Table 3 row (B)).
  std::int64_t d_head() const { return head_dim != 0 ? head_dim : d_model / heads; }
  std::int64_t attention_width() const { return heads * d_head(); }
};

struct OptimizerConfig {
  double lr = 5e-4;  // peak rate for "constant" and "inverse_sqrt"; unused by "noam"
  double beta1 = 0.9;
  double beta2 = 0.98;
  double eps = 1e-9;
};

struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::noam;
  std::int64_t warmup = 4000;  // >= 1 for noam and inverse_sqrt
  double factor = 1.0;         // multiplies the noam rate
};

struct TrainConfig {
  double label_smoothing = 0.1;                            // [0, 1)
  SmoothingForm label_smoothing_form = SmoothingForm::uniform;  // "uniform" | "fairseq"
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  std::uint64_t seed = 1;
  // Batching: pairs bucketed by length and packed to max_tokens (source or target, whichever is
  // larger); update_freq batches are accumulated into one optimizer step.
  std::int64_t max_tokens = 4096;
  std::int64_t update_freq = 1;
  // The run stops after max_steps optimizer steps or after data.epochs, whichever comes first.
  std::int64_t max_steps = 1000;
  double clip_norm = 0.0;               // >= 0; 0 = off (the paper clips nothing)
  std::int64_t validate_every = 500;    // steps between validation losses (and at the end)
  std::int64_t checkpoint_every = 1000; // steps between checkpoints (and at the end)
  // "float32" | "bf16": bf16 rounds the linear layers' GEMM operands to bfloat16 (float32
  // accumulation, float32 master weights and Adam moments); only the cuda backend has it.
  Precision precision = Precision::float32;
  // Validations in a row without a new best validation loss after which the run stops early
  // (experiments/training/train_run.cc); 0 = off.
  std::int64_t patience = 0;
  // Step checkpoints kept on disk, the newest (a long sweep's cells would otherwise fill the
  // disk); 0 = all. Averaging the last K needs K <= keep_checkpoints.
  std::int64_t keep_checkpoints = 0;
  // Data parallelism: each step's batches are dealt to `replicas` virtual shards, whose gradients
  // are summed in a fixed tree (distributed/shard_plan.h), so that the weights depend on the
  // config alone and not on how many ranks (any divisor of replicas) computed them.
  std::int64_t replicas = 1;
};

struct VocabularyConfig {
  VocabularyKind kind = VocabularyKind::bpe;  // "bpe" | "unigram" (sentencepiece)
  std::int64_t size = 8000;                   // joint source+target; must equal model.vocab_size
  // Training sentences drawn from both sides of the training split (a deterministic sample,
  // experiments/data/sentence_sample.h); 0 = every sentence.
  std::int64_t sample_sentences = 0;
};

struct DataConfig {
  Dataset dataset = Dataset::copy;    // "copy" | "reverse" (synthetic) | "multi30k" | "parallel"
  std::string source_language = "de"; // multi30k: "de" | "en"; parallel: the files' suffix
  std::string target_language = "en"; // multi30k: the other one
  VocabularyConfig vocabulary;        // multi30k and parallel
  // parallel: the splits, read from <dir>/<split>.<language>[.gz] (multi30k's are fixed: train,
  // val, test_2016_flickr).
  std::string train = "train";
  std::string valid = "newstest2013";
  std::vector<std::string> test = {"newstest2014"};
  // parallel: pairs that are empty or longer than this many tokens (with EOS) on either side
  // are dropped and counted; 0 = keep every pair, and such a pair is an error naming its file
  // and line. multi30k always filters at model.max_len.
  std::int64_t max_len_filter = 0;
  std::int64_t epochs = 0;            // >= 0; 0 = no epoch limit (synthetic data never runs out)
  // multi30k: the folder that holds multi30k/; empty: --data-dir, then $TREPRO_DATA_DIR, then
  // <source dir>/data, the repository's own data/ (experiments/data/multi30k.h). parallel: the
  // folder of the split files (or --data-dir).
  std::string dir;
  // copy / reverse only: sequence lengths (before EOS) and sentences per batch.
  std::int64_t min_length = 4;
  std::int64_t max_length = 12;
  std::int64_t batch_size = 32;
};

struct Config {
  ModelConfig model;
  TrainConfig train;
  DataConfig data;
};

// Parses and validates; `source` names the file (or "<string>") in error messages.
// Throws ConfigError.
Config config_from_json(const nlohmann::json& json, const std::string& source);
Config load_config(const std::string& path);

// canonical: what files, reports and the hash hold. Every key of contract version 1 (the keys
// that existed before the field list) is written; a key added later (Key::since in
// core/config_fields.h, e.g. train.patience) only when it is not at its default, so a config
// that does not use it has the JSON, and so the hash, that the code before the key gave it.
// every: all keys, for tools that edit a config by key path (ablation overrides).
enum class JsonKeys { canonical, every };
nlohmann::json config_to_json(const Config& config, JsonKeys keys = JsonKeys::canonical);
// Writes atomically (temporary file, fsync, rename).
void save_config(const Config& config, const std::string& path);
// Throws ConfigError when the values are inconsistent (used by config_from_json and by code
// that builds a Config by hand).
void validate(const Config& config, const std::string& source);
// sha256 of the canonical JSON (sorted keys, no whitespace): the config hash in reports. Keys
// added after contract version 1 count only when set to something other than their default
// (see config_to_json), so adding a key never changes the hash of an existing config. (The
// reports committed before train.precision, a version-1 key, record the hash without it.)
std::string config_hash(const Config& config);

// One key of the contract as the field list (core/config_fields.h) describes it; docs/config.md's
// key table is config_keys_markdown().
struct ConfigKey {
  std::string path;           // dotted: "train.optimizer.lr"
  std::string values;         // Markdown: "number > 0", "`noam` \| `constant` \| `inverse_sqrt`"
  std::string default_value;  // JSON text of the struct's initializer, or "required"
  std::string meaning;
  int since = 1;              // contract version that added the key
};
std::vector<ConfigKey> config_keys();
std::string config_keys_markdown();

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Puts `backend` in train.precision; throws ConfigError naming the key and the backend when the
// backend has no such mode (bf16 on reference or cpu), so that a run fails at its start instead
// of silently training in another precision.
void apply_precision(const TrainConfig& train, Backend& backend);

// Names of enum values as they appear in JSON.
std::string to_string(NormPlacement v);
std::string to_string(Architecture v);
std::string to_string(ScheduleKind v);
std::string to_string(NormKind v);
std::string to_string(Activation v, bool swiglu);
std::string to_string(Positional v);
std::string to_string(SmoothingForm v);
std::string to_string(Dataset v);
std::string to_string(VocabularyKind v);
std::string to_string(Precision v);

}  // namespace trepro
