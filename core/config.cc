#include "core/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/sha256.h"

namespace trepro {
namespace {

using nlohmann::json;

// ---- Names --------------------------------------------------------------------------------
// One table per enum, shared by the parser (and its "expected ..." list) and to_string.

template <class T>
struct Choice {
  T value;
  std::string_view name;
};

// The feed-forward activation as the JSON names it: "swiglu" is a gate, not an Activation.
struct FeedForward {
  Activation activation;
  bool swiglu;
};

constexpr Choice<Architecture> kArchitectures[] = {{Architecture::encoder_decoder, "encoder_decoder"},
                                                   {Architecture::decoder_only, "decoder_only"},
                                                   {Architecture::encoder_only, "encoder_only"}};
constexpr Choice<NormPlacement> kNormPlacements[] = {{NormPlacement::post, "post"},
                                                     {NormPlacement::pre, "pre"}};
constexpr Choice<NormKind> kNormKinds[] = {{NormKind::layer, "layernorm"}, {NormKind::rms, "rmsnorm"}};
constexpr Choice<FeedForward> kFeedForwards[] = {{{Activation::relu, false}, "relu"},
                                                 {{Activation::gelu, false}, "gelu"},
                                                 {{Activation::gelu_tanh, false}, "gelu_tanh"},
                                                 {{Activation::none, true}, "swiglu"}};
constexpr Choice<Positional> kPositionals[] = {{Positional::sinusoidal, "sinusoidal"},
                                               {Positional::learned, "learned"},
                                               {Positional::rope, "rope"}};
constexpr Choice<SmoothingForm> kSmoothingForms[] = {{SmoothingForm::uniform, "uniform"},
                                                     {SmoothingForm::fairseq, "fairseq"}};
constexpr Choice<Precision> kPrecisions[] = {{Precision::float32, "float32"}, {Precision::bf16, "bf16"}};
constexpr Choice<ScheduleKind> kScheduleKinds[] = {{ScheduleKind::noam, "noam"},
                                                   {ScheduleKind::constant, "constant"},
                                                   {ScheduleKind::inverse_sqrt, "inverse_sqrt"}};

constexpr Choice<Dataset> kDatasets[] = {
    {Dataset::copy, "copy"}, {Dataset::reverse, "reverse"}, {Dataset::multi30k, "multi30k"}};
constexpr Choice<VocabularyKind> kVocabularyKinds[] = {{VocabularyKind::bpe, "bpe"},
                                                       {VocabularyKind::unigram, "unigram"}};
// Multi30K task 1 has these two languages.
constexpr std::string_view kMulti30kLanguages[] = {"de", "en"};

template <class T, std::size_t N>
std::string name_of(const Choice<T> (&choices)[N], T value) {
  for (const Choice<T>& choice : choices) {
    if (choice.value == value) return std::string(choice.name);
  }
  throw std::invalid_argument("to_string: enum value out of range");
}

// ---- Messages -----------------------------------------------------------------------------

std::string format_error(const std::string& source, std::string_view path, std::string_view what) {
  std::string message = source + ": ";
  if (!path.empty()) message.append(path).append(": ");
  return message.append(what);
}

// The shortest text that reads back as the same double ("0.1", "1e-05").
std::string format_number(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

// A JSON value as it was written, cut short so an error about an array stays one line.
std::string describe(const json& value) {
  constexpr std::size_t kMaxChars = 40;
  std::string text = value.dump();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

// ---- Reading ------------------------------------------------------------------------------

// An integral value of type Int: a JSON integer, or a JSON number with no fractional part
// (so 1e5 and 512.0 are accepted, 512.5 is not). Empty when the value does not fit.
template <class Int>
std::optional<Int> integral_value(const json& value) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (std::in_range<Int>(v)) return static_cast<Int>(v);
  } else if (value.is_number_integer()) {
    const auto v = value.get<std::int64_t>();
    if (std::in_range<Int>(v)) return static_cast<Int>(v);
  } else if (value.is_number_float()) {
    const auto v = value.get<double>();
    const double upper = std::ldexp(1.0, std::numeric_limits<Int>::digits);  // 2^63 or 2^64, exact
    if (std::trunc(v) == v && v >= static_cast<double>(std::numeric_limits<Int>::min()) && v < upper) {
      return static_cast<Int>(v);
    }
  }
  return std::nullopt;
}

// Reads the members of one JSON object into struct fields, remembering the keys it was asked
// for so that any other key can be reported as unknown (a typo must not silently fall back to
// the default).
class ObjectReader {
 public:
  ObjectReader(const json& object, const std::string& source, std::string path)
      : object_(object), source_(source), path_(std::move(path)) {
    if (!object_.is_object()) fail_here("expected a JSON object, got " + describe(object_));
  }

  std::string path_of(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    throw ConfigError(format_error(source_, path_of(key), what));
  }

  // The member `key`, or null when absent.
  const json* find(std::string_view key) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
    const auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  const json& require(std::string_view key) {
    const json* value = find(key);
    if (value == nullptr) fail_here("missing required key " + std::string(key));
    return *value;
  }

  void read(std::string_view key, std::int64_t& out) {
    if (const json* value = find(key)) {
      const auto v = integral_value<std::int64_t>(*value);
      if (!v) fail(key, "expected an integer, got " + describe(*value));
      out = *v;
    }
  }

  void read(std::string_view key, std::uint64_t& out) {
    if (const json* value = find(key)) {
      const auto v = integral_value<std::uint64_t>(*value);
      if (!v) fail(key, "expected a non-negative integer, got " + describe(*value));
      out = *v;
    }
  }

  void read(std::string_view key, double& out) {
    if (const json* value = find(key)) {
      if (!value->is_number()) fail(key, "expected a number, got " + describe(*value));
      out = value->get<double>();
    }
  }

  void read(std::string_view key, std::string& out) {
    if (const json* value = find(key)) {
      if (!value->is_string()) fail(key, "expected a string, got " + describe(*value));
      out = value->get<std::string>();
    }
  }

  void read(std::string_view key, bool& out) {
    if (const json* value = find(key)) {
      if (!value->is_boolean()) fail(key, "expected true or false, got " + describe(*value));
      out = value->get<bool>();
    }
  }

  template <class T, std::size_t N>
  void read(std::string_view key, T& out, const Choice<T> (&choices)[N]) {
    const json* value = find(key);
    if (value == nullptr) return;
    if (value->is_string()) {
      const auto& text = value->get_ref<const std::string&>();
      for (const Choice<T>& choice : choices) {
        if (choice.name == text) {
          out = choice.value;
          return;
        }
      }
    }
    std::string expected;
    for (const Choice<T>& choice : choices) expected.append(expected.empty() ? "" : ", ").append(choice.name);
    const std::string problem = value->is_string() ? "unknown value " : "expected a string, got ";
    fail(key, problem + describe(*value) + " (expected " + expected + ")");
  }

  // Call after every read: throws on the first member that no read asked for.
  void reject_unknown_keys() const {
    for (const auto& [key, value] : object_.items()) {
      if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
      std::string known;
      for (const std::string& k : known_) known.append(known.empty() ? "" : ", ").append(k);
      fail(key, "unknown key (known keys: " + known + ")");
    }
  }

 private:
  [[noreturn]] void fail_here(const std::string& what) const {
    throw ConfigError(format_error(source_, path_, what));
  }

  const json& object_;
  const std::string& source_;
  std::string path_;
  std::vector<std::string> known_;
};

ModelConfig read_model(ObjectReader& in) {
  ModelConfig m;
  in.read("architecture", m.architecture, kArchitectures);
  // A stack the architecture does not have defaults to 0 layers; an explicit non-zero count is
  // still an error (validate), since it would be silently ignored.
  if (m.architecture == Architecture::decoder_only) m.encoder_layers = 0;
  if (m.architecture == Architecture::encoder_only) m.decoder_layers = 0;
  in.require("vocab_size");
  in.read("vocab_size", m.vocab_size);
  in.read("d_model", m.d_model);
  in.read("heads", m.heads);
  in.read("encoder_layers", m.encoder_layers);
  in.read("decoder_layers", m.decoder_layers);
  in.read("d_ff", m.d_ff);
  in.read("norm", m.norm, kNormPlacements);
  in.read("norm_kind", m.norm_kind, kNormKinds);
  FeedForward ffn{m.activation, m.swiglu};
  in.read("activation", ffn, kFeedForwards);
  m.activation = ffn.activation;
  m.swiglu = ffn.swiglu;
  in.read("positional", m.positional, kPositionals);
  in.read("max_len", m.max_len);
  in.read("tie_embeddings", m.tie_embeddings);
  in.read("dropout", m.dropout);
  in.read("attention_dropout", m.attention_dropout);
  in.read("layer_norm_eps", m.layer_norm_eps);
  in.read("pad_id", m.pad_id);
  in.reject_unknown_keys();
  return m;
}

TrainConfig read_train(ObjectReader& in, const std::string& source) {
  TrainConfig t;
  in.read("label_smoothing", t.label_smoothing);
  in.read("label_smoothing_form", t.label_smoothing_form, kSmoothingForms);
  if (const json* value = in.find("optimizer")) {
    ObjectReader optimizer(*value, source, in.path_of("optimizer"));
    optimizer.read("lr", t.optimizer.lr);
    optimizer.read("beta1", t.optimizer.beta1);
    optimizer.read("beta2", t.optimizer.beta2);
    optimizer.read("eps", t.optimizer.eps);
    optimizer.reject_unknown_keys();
  }
  if (const json* value = in.find("schedule")) {
    ObjectReader schedule(*value, source, in.path_of("schedule"));
    schedule.read("kind", t.schedule.kind, kScheduleKinds);
    schedule.read("warmup", t.schedule.warmup);
    schedule.read("factor", t.schedule.factor);
    schedule.reject_unknown_keys();
  }
  in.read("seed", t.seed);
  in.read("max_tokens", t.max_tokens);
  in.read("update_freq", t.update_freq);
  in.read("max_steps", t.max_steps);
  in.read("clip_norm", t.clip_norm);
  in.read("validate_every", t.validate_every);
  in.read("checkpoint_every", t.checkpoint_every);
  in.read("precision", t.precision, kPrecisions);
  in.reject_unknown_keys();
  return t;
}

DataConfig read_data(ObjectReader& in, const std::string& source) {
  DataConfig d;
  in.read("dataset", d.dataset, kDatasets);
  in.read("source_language", d.source_language);
  in.read("target_language", d.target_language);
  if (const json* value = in.find("vocabulary")) {
    ObjectReader vocabulary(*value, source, in.path_of("vocabulary"));
    vocabulary.read("kind", d.vocabulary.kind, kVocabularyKinds);
    vocabulary.read("size", d.vocabulary.size);
    vocabulary.reject_unknown_keys();
  }
  in.read("epochs", d.epochs);
  in.read("dir", d.dir);
  in.read("min_length", d.min_length);
  in.read("max_length", d.max_length);
  in.read("batch_size", d.batch_size);
  in.reject_unknown_keys();
  return d;
}

// ---- Validation ---------------------------------------------------------------------------

class Checker {
 public:
  explicit Checker(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(std::string_view path, const std::string& what) const {
    throw ConfigError(format_error(source_, path, what));
  }

  void at_least(std::string_view path, std::int64_t value, std::int64_t min,
                std::string_view why = "") const {
    if (value < min) {
      fail(path, "must be >= " + std::to_string(min) + std::string(why) + ", got " + std::to_string(value));
    }
  }

  // The comparisons are written so that NaN fails them.
  void positive(std::string_view path, double value) const {
    if (!(value > 0)) fail(path, "must be > 0, got " + format_number(value));
  }

  void probability(std::string_view path, double value) const {
    if (!(value >= 0 && value < 1)) fail(path, "must be in [0, 1), got " + format_number(value));
  }

 private:
  const std::string& source_;
};

// An architecture without this stack must say 0 layers; one with it needs at least one.
void check_stack(const Checker& check, std::string_view path, std::int64_t layers, Architecture architecture,
                 bool has_stack, std::string_view stack) {
  const std::string arch = to_string(architecture);
  if (has_stack) {
    check.at_least(path, layers, 1, " for the " + arch + " architecture");
  } else if (layers != 0) {
    check.fail(path, "must be 0 for the " + arch + " architecture (it has no " + std::string(stack) +
                         "), got " + std::to_string(layers));
  }
}

void validate_model(const Checker& check, const ModelConfig& m) {
  check.at_least("model.vocab_size", m.vocab_size, 2);
  // Token ids are int32 on every backend.
  if (m.vocab_size > std::numeric_limits<std::int32_t>::max()) {
    check.fail("model.vocab_size",
               "must fit in int32 (token ids are int32), got " + std::to_string(m.vocab_size));
  }
  check.at_least("model.d_model", m.d_model, 1);
  check.at_least("model.heads", m.heads, 1);
  if (m.d_model % m.heads != 0) {
    check.fail("model.heads", "d_model " + std::to_string(m.d_model) + " is not divisible by heads " +
                                  std::to_string(m.heads));
  }
  if (m.positional == Positional::rope && m.d_head() % 2 != 0) {
    const std::string d_head = std::to_string(m.d_head());
    check.fail("model.positional",
               "rope rotates pairs of dimensions, so d_head (d_model / heads) must be even, got " + d_head);
  }
  check_stack(check, "model.encoder_layers", m.encoder_layers, m.architecture,
              m.architecture != Architecture::decoder_only, "encoder");
  check_stack(check, "model.decoder_layers", m.decoder_layers, m.architecture,
              m.architecture != Architecture::encoder_only, "decoder");
  check.at_least("model.d_ff", m.d_ff, 1);
  if (m.swiglu && m.activation != Activation::none) {
    check.fail("model.activation",
               "swiglu is set, so activation must be none, got " + to_string(m.activation, false));
  }
  if (!m.swiglu && m.activation == Activation::none) {
    check.fail("model.activation", "none is only valid together with swiglu");
  }
  check.at_least("model.max_len", m.max_len, 1);
  check.probability("model.dropout", m.dropout);
  check.probability("model.attention_dropout", m.attention_dropout);
  check.positive("model.layer_norm_eps", m.layer_norm_eps);
  if (m.pad_id < 0 || m.pad_id >= m.vocab_size) {
    check.fail("model.pad_id", "must be in [0, vocab_size " + std::to_string(m.vocab_size) + "), got " +
                                   std::to_string(m.pad_id));
  }
}

void validate_train(const Checker& check, const TrainConfig& t) {
  check.probability("train.label_smoothing", t.label_smoothing);
  check.positive("train.optimizer.lr", t.optimizer.lr);
  check.probability("train.optimizer.beta1", t.optimizer.beta1);
  check.probability("train.optimizer.beta2", t.optimizer.beta2);
  check.positive("train.optimizer.eps", t.optimizer.eps);
  // noam and inverse_sqrt divide by the warmup; constant ignores it.
  const std::int64_t min_warmup = t.schedule.kind == ScheduleKind::constant ? 0 : 1;
  check.at_least("train.schedule.warmup", t.schedule.warmup, min_warmup,
                 " for the " + to_string(t.schedule.kind) + " schedule");
  check.positive("train.schedule.factor", t.schedule.factor);
  check.at_least("train.max_tokens", t.max_tokens, 1);
  check.at_least("train.update_freq", t.update_freq, 1);
  check.at_least("train.max_steps", t.max_steps, 0);
  if (!(t.clip_norm >= 0)) {
    check.fail("train.clip_norm", "must be >= 0 (0 turns clipping off), got " + format_number(t.clip_norm));
  }
  check.at_least("train.validate_every", t.validate_every, 1);
  check.at_least("train.checkpoint_every", t.checkpoint_every, 1);
}

void check_language(const Checker& check, std::string_view path, const std::string& language) {
  for (std::string_view known : kMulti30kLanguages) {
    if (language == known) return;
  }
  check.fail(path, "multi30k has no language \"" + language + "\" (expected de or en)");
}

void validate_data(const Checker& check, const DataConfig& d, const ModelConfig& m) {
  check.at_least("data.epochs", d.epochs, 0);
  if (d.dataset == Dataset::multi30k) {
    check_language(check, "data.source_language", d.source_language);
    check_language(check, "data.target_language", d.target_language);
    if (d.source_language == d.target_language) {
      check.fail("data.target_language", "must differ from source_language \"" + d.source_language + "\"");
    }
    // The vocabulary's ids index the embedding table, so the two sizes are one number.
    if (d.vocabulary.size != m.vocab_size) {
      check.fail("data.vocabulary.size", "must equal model.vocab_size " + std::to_string(m.vocab_size) +
                                             ", got " + std::to_string(d.vocabulary.size));
    }
    // pad, bos, eos, unk and at least a few pieces.
    check.at_least("data.vocabulary.size", d.vocabulary.size, 8);
    if (m.pad_id != 0) {
      check.fail("model.pad_id", "must be 0 for multi30k (the vocabulary's pad id), got " + std::to_string(m.pad_id));
    }
  } else {
    check.at_least("data.min_length", d.min_length, 1);
    // max_length + EOS against model.max_len is checked when batches are made (copy_task.h):
    // a config used only for `forward` need not fit the copy task's defaults.
    check.at_least("data.max_length", d.max_length, d.min_length, " (min_length)");
    check.at_least("data.batch_size", d.batch_size, 1);
  }
}

}  // namespace

Config config_from_json(const nlohmann::json& document, const std::string& source) {
  ObjectReader top(document, source, "");
  Config config;
  ObjectReader model(top.require("model"), source, "model");
  config.model = read_model(model);
  if (const nlohmann::json* train = top.find("train")) {
    ObjectReader reader(*train, source, "train");
    config.train = read_train(reader, source);
  }
  if (const nlohmann::json* data = top.find("data")) {
    ObjectReader reader(*data, source, "data");
    config.data = read_data(reader, source);
  }
  top.reject_unknown_keys();
  validate(config, source);
  return config;
}

Config load_config(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    // read_file names the path too; say it once.
    std::string_view reason = e.what();
    if (reason.starts_with(path + ": ")) reason.remove_prefix(path.size() + 2);
    throw ConfigError(format_error(path, "", "cannot read: " + std::string(reason)));
  }
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix; the position and the reason remain.
    std::string_view reason = e.what();
    if (const auto end = reason.find("] "); reason.starts_with("[json.exception") && end != reason.npos) {
      reason.remove_prefix(end + 2);
    }
    throw ConfigError(format_error(path, "", "invalid JSON: " + std::string(reason)));
  }
  return config_from_json(parsed, path);
}

nlohmann::json config_to_json(const Config& config) {
  const ModelConfig& m = config.model;
  const TrainConfig& t = config.train;
  const DataConfig& d = config.data;
  return {
      {"model",
       {{"architecture", to_string(m.architecture)},
        {"vocab_size", m.vocab_size},
        {"d_model", m.d_model},
        {"heads", m.heads},
        {"encoder_layers", m.encoder_layers},
        {"decoder_layers", m.decoder_layers},
        {"d_ff", m.d_ff},
        {"norm", to_string(m.norm)},
        {"norm_kind", to_string(m.norm_kind)},
        {"activation", to_string(m.activation, m.swiglu)},
        {"positional", to_string(m.positional)},
        {"max_len", m.max_len},
        {"tie_embeddings", m.tie_embeddings},
        {"dropout", m.dropout},
        {"attention_dropout", m.attention_dropout},
        {"layer_norm_eps", m.layer_norm_eps},
        {"pad_id", m.pad_id}}},
      {"train",
       {{"label_smoothing", t.label_smoothing},
        {"label_smoothing_form", to_string(t.label_smoothing_form)},
        {"optimizer",
         {{"lr", t.optimizer.lr}, {"beta1", t.optimizer.beta1}, {"beta2", t.optimizer.beta2},
          {"eps", t.optimizer.eps}}},
        {"schedule",
         {{"kind", to_string(t.schedule.kind)},
          {"warmup", t.schedule.warmup},
          {"factor", t.schedule.factor}}},
        {"seed", t.seed},
        {"max_tokens", t.max_tokens},
        {"update_freq", t.update_freq},
        {"max_steps", t.max_steps},
        {"clip_norm", t.clip_norm},
        {"validate_every", t.validate_every},
        {"checkpoint_every", t.checkpoint_every},
        {"precision", to_string(t.precision)}}},
      {"data",
       {{"dataset", to_string(d.dataset)},
        {"source_language", d.source_language},
        {"target_language", d.target_language},
        {"vocabulary", {{"kind", to_string(d.vocabulary.kind)}, {"size", d.vocabulary.size}}},
        {"epochs", d.epochs},
        {"dir", d.dir},
        {"min_length", d.min_length},
        {"max_length", d.max_length},
        {"batch_size", d.batch_size}}},
  };
}

void save_config(const Config& config, const std::string& path) {
  // A file that load_config would reject is never written.
  validate(config, path);
  write_file_atomically(path, config_to_json(config).dump(2) + "\n");
}

void validate(const Config& config, const std::string& source) {
  const Checker check(source);
  validate_model(check, config.model);
  validate_train(check, config.train);
  validate_data(check, config.data, config.model);
}

std::string config_hash(const Config& config) { return sha256_hex(config_to_json(config).dump()); }

void apply_precision(const TrainConfig& train, Backend& backend) {
  try {
    backend.set_precision(train.precision);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("train.precision: ") + e.what() +
                      ": set it to \"float32\" or train with --backend cuda");
  }
}

std::string to_string(NormPlacement v) { return name_of(kNormPlacements, v); }
std::string to_string(Architecture v) { return name_of(kArchitectures, v); }
std::string to_string(ScheduleKind v) { return name_of(kScheduleKinds, v); }
std::string to_string(NormKind v) { return name_of(kNormKinds, v); }
std::string to_string(Positional v) { return name_of(kPositionals, v); }
std::string to_string(SmoothingForm v) { return name_of(kSmoothingForms, v); }
std::string to_string(Dataset v) { return name_of(kDatasets, v); }
std::string to_string(VocabularyKind v) { return name_of(kVocabularyKinds, v); }
std::string to_string(Precision v) { return name_of(kPrecisions, v); }

std::string to_string(Activation v, bool swiglu) {
  for (const Choice<FeedForward>& choice : kFeedForwards) {
    if (choice.value.activation == v && choice.value.swiglu == swiglu) return std::string(choice.name);
  }
  // Combinations validate rejects still get a readable name for its messages.
  return swiglu ? "swiglu" : "none";
}

}  // namespace trepro
