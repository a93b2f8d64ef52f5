// The field list of the config: every key of the contract, written once. Reading
// (config_read.cc), the per-field checks (config_validate.cc), writing and hashing
// (config_write.cc) and docs/config.md's key table (config_keys.cc) all walk these lists, so a key
// listed here is read, checked, written, hashed and documented, and none can be written without
// being read back.
//
// visit_fields(section, visitor) calls, in the order messages list the keys:
//   visitor(key, member, range)       for a value; range is AtLeast, Real, Unchecked or a
//                                     Choice table (the enum's JSON names)
//   visitor.section(key, sub_struct)  for a nested object (walked by its own visit_fields)
// Defaults are the structs' initializers (core/config.h). Rules that relate keys to each other
// (d_model divisible by heads, warmup >= 1 for noam, ...) are explicit code in validate().
// The lists take mutable structs because reading fills them; writers and checkers walk a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/config.h"

namespace trepro {

struct Key {
  std::string_view name;
  std::string_view meaning;  // one line for docs/config.md's key table
  bool required = false;
  // The contract version that added the key: 1 for the keys that existed before the field list
  // (they are always written), 2 and up for keys added since, which the canonical JSON leaves
  // out while at their default so that adding one keeps every existing hash (config_to_json).
  int since = 1;
};

template <class T>
struct Choice {
  T value;
  std::string_view name;
};

// Per-field ranges: "must be >= min<note>", and the real ranges below (NaN fails them all).
struct AtLeast {
  std::int64_t min;
  std::string_view note = "";
};
enum class RealRange { positive, probability, non_negative };  // > 0, [0, 1), >= 0
struct Real {
  RealRange range;
  std::string_view note = "";
};
// No range of its own; `rule` tells docs/config.md's table what validate() checks against other keys.
struct Unchecked {
  std::string_view rule = "";
};

// The feed-forward activation as the JSON names it: "swiglu" is a gate, not an Activation.
struct FeedForward {
  Activation activation;
  bool swiglu;
  bool operator==(const FeedForward&) const = default;
};

inline constexpr Choice<Architecture> kArchitectures[] = {{Architecture::encoder_decoder, "encoder_decoder"},
                                                          {Architecture::decoder_only, "decoder_only"},
                                                          {Architecture::encoder_only, "encoder_only"}};
inline constexpr Choice<NormPlacement> kNormPlacements[] = {{NormPlacement::post, "post"},
                                                            {NormPlacement::pre, "pre"}};
inline constexpr Choice<NormKind> kNormKinds[] = {{NormKind::layer, "layernorm"}, {NormKind::rms, "rmsnorm"}};
inline constexpr Choice<FeedForward> kFeedForwards[] = {{{Activation::relu, false}, "relu"},
                                                        {{Activation::gelu, false}, "gelu"},
                                                        {{Activation::gelu_tanh, false}, "gelu_tanh"},
                                                        {{Activation::none, true}, "swiglu"}};
inline constexpr Choice<Positional> kPositionals[] = {{Positional::sinusoidal, "sinusoidal"},
                                                      {Positional::learned, "learned"},
                                                      {Positional::rope, "rope"}};
inline constexpr Choice<SmoothingForm> kSmoothingForms[] = {{SmoothingForm::uniform, "uniform"},
                                                            {SmoothingForm::fairseq, "fairseq"}};
inline constexpr Choice<Precision> kPrecisions[] = {{Precision::float32, "float32"}, {Precision::bf16, "bf16"}};
inline constexpr Choice<ScheduleKind> kScheduleKinds[] = {{ScheduleKind::noam, "noam"},
                                                          {ScheduleKind::constant, "constant"},
                                                          {ScheduleKind::inverse_sqrt, "inverse_sqrt"}};
inline constexpr Choice<Dataset> kDatasets[] = {{Dataset::copy, "copy"},
                                                {Dataset::reverse, "reverse"},
                                                {Dataset::multi30k, "multi30k"},
                                                {Dataset::parallel, "parallel"}};
inline constexpr Choice<VocabularyKind> kVocabularyKinds[] = {{VocabularyKind::bpe, "bpe"},
                                                              {VocabularyKind::unigram, "unigram"}};

// The JSON name of `value`; throws std::invalid_argument for a value the table lacks.
template <class T, std::size_t N>
std::string_view name_of(const Choice<T> (&choices)[N], const T& value) {
  for (const Choice<T>& choice : choices) {
    if (choice.value == value) return choice.name;
  }
  throw std::invalid_argument("to_string: enum value out of range");
}

// A field's value as the JSON holds it: an enum by its name, anything else as it is.
template <class T, class Range>
nlohmann::json field_json(const T& value, const Range& range) {
  if constexpr (std::is_array_v<Range>) {
    return std::string(name_of(range, value));  // a Choice table
  } else {
    return value;
  }
}

template <class Visitor>
void visit_fields(ModelConfig& m, Visitor& visit) {
  visit(Key{"architecture", "which stacks the model has"}, m.architecture, kArchitectures);
  visit(Key{"vocab_size", "token ids, shared by source and target; fits in int32", true}, m.vocab_size,
        AtLeast{2});
  visit(Key{"d_model", "model width; divisible by heads unless head_dim is set"}, m.d_model, AtLeast{1});
  visit(Key{"heads", "attention heads; rope needs an even head width"}, m.heads, AtLeast{1});
  visit(Key{.name = "head_dim",
            .meaning = "d_k = d_v of each head (q, k, v are heads x head_dim wide); 0 = d_model / heads",
            .since = 2},
        m.head_dim, AtLeast{0, " (0 means d_model / heads)"});
  visit(Key{"encoder_layers", "encoder layers"}, m.encoder_layers,
        Unchecked{">= 1; 0 (and its default) for decoder_only"});
  visit(Key{"decoder_layers", "decoder layers"}, m.decoder_layers,
        Unchecked{">= 1; 0 (and its default) for encoder_only"});
  visit(Key{"d_ff", "feed-forward inner width"}, m.d_ff, AtLeast{1});
  visit(Key{"norm", "Post-LN (the paper) or Pre-LN"}, m.norm, kNormPlacements);
  visit(Key{"norm_kind", "LayerNorm or RMSNorm"}, m.norm_kind, kNormKinds);
  // One JSON key, two members: the activation and the SwiGLU gate.
  FeedForward feed_forward{m.activation, m.swiglu};
  visit(Key{"activation", "feed-forward activation (gelu: erf form; swiglu: gated)"}, feed_forward, kFeedForwards);
  m.activation = feed_forward.activation;
  m.swiglu = feed_forward.swiglu;
  visit(Key{"positional", "position encoding (rope: rotary, in every attention)"}, m.positional, kPositionals);
  visit(Key{"max_len", "positions 0 .. max_len-1"}, m.max_len, AtLeast{1});
  visit(Key{"tie_embeddings", "share the embedding and output projection weights"}, m.tie_embeddings,
        Unchecked{});
  visit(Key{"dropout", "dropout on sublayer outputs and embeddings"}, m.dropout, Real{RealRange::probability});
  visit(Key{"attention_dropout", "dropout on attention weights (off in the paper)"}, m.attention_dropout,
        Real{RealRange::probability});
  visit(Key{"layer_norm_eps", "added to the variance in every norm"}, m.layer_norm_eps, Real{RealRange::positive});
  visit(Key{"pad_id", "the padding token id"}, m.pad_id,
        Unchecked{"in [0, vocab_size); 0 for multi30k and parallel (their vocabularies pad with 0)"});
}

template <class Visitor>
void visit_fields(OptimizerConfig& o, Visitor& visit) {
  visit(Key{"lr", "peak rate of constant and inverse_sqrt (noam ignores it)"}, o.lr, Real{RealRange::positive});
  visit(Key{"beta1", "Adam's first-moment decay"}, o.beta1, Real{RealRange::probability});
  visit(Key{"beta2", "Adam's second-moment decay"}, o.beta2, Real{RealRange::probability});
  visit(Key{"eps", "Adam's denominator term"}, o.eps, Real{RealRange::positive});
}

template <class Visitor>
void visit_fields(ScheduleConfig& s, Visitor& visit) {
  visit(Key{"kind", "learning-rate schedule (model/schedule.h)"}, s.kind, kScheduleKinds);
  visit(Key{"warmup", "warm-up steps"}, s.warmup, Unchecked{">= 1; >= 0 for constant"});
  visit(Key{"factor", "multiplies the noam rate"}, s.factor, Real{RealRange::positive});
}

template <class Visitor>
void visit_fields(TrainConfig& t, Visitor& visit) {
  visit(Key{"label_smoothing", "label smoothing of the loss"}, t.label_smoothing, Real{RealRange::probability});
  visit(Key{"label_smoothing_form", "uniform: PyTorch's; fairseq: eps / (V - 1) off the label"}, t.label_smoothing_form,
        kSmoothingForms);
  visit.section(Key{"optimizer", "Adam"}, t.optimizer);
  visit.section(Key{"schedule", "learning-rate schedule"}, t.schedule);
  visit(Key{"seed", "initialization, dropout and batch order"}, t.seed, Unchecked{"in [0, 2^64)"});
  visit(Key{"max_tokens", "tokens per batch (source or target, the larger)"}, t.max_tokens, AtLeast{1});
  visit(Key{"update_freq", "batches accumulated into one optimizer step"}, t.update_freq, AtLeast{1});
  visit(Key{"max_steps", "optimizer steps (or data.epochs, whichever ends first)"}, t.max_steps, AtLeast{0});
  visit(Key{"clip_norm", "gradient L2-norm clipping; 0 = off (the paper clips nothing)"}, t.clip_norm,
        Real{RealRange::non_negative, " (0 turns clipping off)"});
  visit(Key{"validate_every", "steps between validation losses (and at the end)"}, t.validate_every, AtLeast{1});
  visit(Key{"checkpoint_every", "steps between checkpoints (and at the end)"}, t.checkpoint_every, AtLeast{1});
  visit(Key{"precision", "bf16: GEMM operands in bfloat16, cuda backend only"}, t.precision, kPrecisions);
  visit(Key{.name = "patience",
            .meaning = "stop after this many validations in a row without a new best loss; 0 = off",
            .since = 2},
        t.patience, AtLeast{0, " (0 turns early stopping off)"});
  visit(Key{.name = "keep_checkpoints",
            .meaning = "step checkpoints kept, the newest; 0 = all (best.safetensors is always kept)",
            .since = 2},
        t.keep_checkpoints, AtLeast{0, " (0 keeps every step checkpoint)"});
  visit(Key{.name = "replicas",
            .meaning = "virtual data-parallel shards W of each step (<= update_freq), summed in a fixed tree; any "
                       "number of ranks dividing W gives the same weights (distributed/)",
            .since = 2},
        t.replicas, AtLeast{1});
}

template <class Visitor>
void visit_fields(VocabularyConfig& v, Visitor& visit) {
  visit(Key{"kind", "multi30k, parallel: sentencepiece model type"}, v.kind, kVocabularyKinds);
  visit(Key{"size", "multi30k, parallel: joint source+target pieces"}, v.size,
        Unchecked{"= model.vocab_size, >= 8 (multi30k, parallel)"});
  visit(Key{.name = "sample_sentences",
            .meaning = "sentences of both sides of the training split the vocabulary is trained on, a "
                       "deterministic random sample; 0 = all",
            .since = 2},
        v.sample_sentences, AtLeast{0, " (0 trains on every sentence)"});
}

template <class Visitor>
void visit_fields(DataConfig& d, Visitor& visit) {
  visit(Key{"dataset", "copy and reverse are synthetic; parallel: any line-aligned corpus"}, d.dataset, kDatasets);
  visit(Key{"source_language", "multi30k, parallel: source side (parallel: the files' suffix)"}, d.source_language,
        Unchecked{"`de` \\| `en` (multi30k); a file suffix (parallel)"});
  visit(Key{"target_language", "multi30k, parallel: target side"}, d.target_language,
        Unchecked{"`de` \\| `en` (multi30k); a file suffix (parallel); not the source"});
  visit.section(Key{"vocabulary", "multi30k and parallel"}, d.vocabulary);
  visit(Key{.name = "train", .meaning = "parallel: training split, <dir>/<train>.<language>[.gz]", .since = 2},
        d.train, Unchecked{"a file name stem (parallel)"});
  visit(Key{.name = "valid", .meaning = "parallel: validation split", .since = 2}, d.valid,
        Unchecked{"a file name stem, not another split's (parallel)"});
  visit(Key{.name = "test",
            .meaning = "parallel: test splits (train reports the first one's loss; evaluate --split picks)",
            .since = 2},
        d.test, Unchecked{"file name stems, none another split's (parallel)"});
  visit(Key{.name = "max_len_filter",
            .meaning = "parallel: drop and count pairs empty or longer than this many tokens with EOS; 0 = off, "
                       "such a pair is an error naming its file and line",
            .since = 2},
        d.max_len_filter, Unchecked{">= 0, <= model.max_len (parallel)"});
  visit(Key{"epochs", "passes over the training data; 0 = no limit"}, d.epochs, AtLeast{0});
  visit(Key{"dir", "multi30k: folder holding multi30k/ (empty: --data-dir, $TREPRO_DATA_DIR, then defaults); "
                   "parallel: folder of the split files"},
        d.dir,
        Unchecked{});
  visit(Key{"min_length", "copy, reverse: shortest sequence (before EOS)"}, d.min_length, Unchecked{">= 1"});
  visit(Key{"max_length", "copy, reverse: longest sequence (before EOS)"}, d.max_length,
        Unchecked{">= min_length"});
  visit(Key{"batch_size", "copy, reverse: sentences per batch"}, d.batch_size, Unchecked{">= 1"});
}

template <class Visitor>
void visit_fields(Config& c, Visitor& visit) {
  visit.section(Key{"model", "", true}, c.model);
  visit.section(Key{"train", ""}, c.train);
  visit.section(Key{"data", ""}, c.data);
}

}  // namespace trepro
