// Validation: the per-field ranges of the field lists (core/config_fields.h), then the rules
// that relate keys to each other, each error naming the source and the dotted key.
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "core/config.h"
#include "core/config_fields.h"
#include "core/config_messages.h"

namespace trepro {
namespace {

// Multi30K task 1 has these two languages.
constexpr std::string_view kMulti30kLanguages[] = {"de", "en"};

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

// Checks each field against the range its field list gives it.
class RangeChecker {
 public:
  RangeChecker(const Checker& check, std::string prefix) : check_(check), prefix_(std::move(prefix)) {}

  void operator()(const Key& key, std::int64_t value, AtLeast range) const {
    check_.at_least(dotted(prefix_, key.name), value, range.min, range.note);
  }

  void operator()(const Key& key, double value, Real range) const {
    const std::string path = dotted(prefix_, key.name);
    switch (range.range) {
      case RealRange::positive:
        return check_.positive(path, value);
      case RealRange::probability:
        return check_.probability(path, value);
      case RealRange::non_negative:
        if (!(value >= 0)) {
          check_.fail(path, "must be >= 0" + std::string(range.note) + ", got " + format_number(value));
        }
        return;
    }
  }

  // Enums (their table is checked by reading), free values and cross-field ones (below).
  template <class T, class Range>
  void operator()(const Key&, const T&, const Range&) const {}

  template <class Section>
  void section(const Key& key, Section& section) const {
    const RangeChecker checker(check_, dotted(prefix_, key.name));
    visit_fields(section, checker);
  }

 private:
  const Checker& check_;
  std::string prefix_;
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

// The rules between keys; the per-field ranges have passed, so heads >= 1 here.
void validate_model(const Checker& check, const ModelConfig& m) {
  // Token ids are int32 on every backend.
  if (m.vocab_size > std::numeric_limits<std::int32_t>::max()) {
    check.fail("model.vocab_size",
               "must fit in int32 (token ids are int32), got " + std::to_string(m.vocab_size));
  }
  // An explicit head_dim frees d_model from being heads x d_k.
  if (m.head_dim == 0 && m.d_model % m.heads != 0) {
    check.fail("model.heads", "d_model " + std::to_string(m.d_model) + " is not divisible by heads " +
                                  std::to_string(m.heads));
  }
  if (m.positional == Positional::rope && m.d_head() % 2 != 0) {
    const std::string d_head = std::to_string(m.d_head());
    if (m.head_dim != 0) {
      check.fail("model.head_dim", "rope rotates pairs of dimensions, so head_dim must be even, got " + d_head);
    }
    check.fail("model.positional",
               "rope rotates pairs of dimensions, so d_head (d_model / heads) must be even, got " + d_head);
  }
  check_stack(check, "model.encoder_layers", m.encoder_layers, m.architecture,
              m.architecture != Architecture::decoder_only, "encoder");
  check_stack(check, "model.decoder_layers", m.decoder_layers, m.architecture,
              m.architecture != Architecture::encoder_only, "decoder");
  if (m.swiglu && m.activation != Activation::none) {
    check.fail("model.activation",
               "swiglu is set, so activation must be none, got " + to_string(m.activation, false));
  }
  if (!m.swiglu && m.activation == Activation::none) {
    check.fail("model.activation", "none is only valid together with swiglu");
  }
  if (m.pad_id < 0 || m.pad_id >= m.vocab_size) {
    check.fail("model.pad_id", "must be in [0, vocab_size " + std::to_string(m.vocab_size) + "), got " +
                                   std::to_string(m.pad_id));
  }
}

void validate_train(const Checker& check, const TrainConfig& t) {
  // noam and inverse_sqrt divide by the warmup; constant warms up over it, and 0 means none.
  const std::int64_t min_warmup = t.schedule.kind == ScheduleKind::constant ? 0 : 1;
  check.at_least("train.schedule.warmup", t.schedule.warmup, min_warmup,
                 " for the " + to_string(t.schedule.kind) + " schedule");
  // Shards take whole batches of a step (batch j to shard j mod replicas): a shard without one
  // would leave its rank idle every step.
  if (t.replicas > t.update_freq) {
    check.fail("train.replicas", "must be <= train.update_freq " + std::to_string(t.update_freq) +
                                     " (each shard takes whole batches of a step), got " + std::to_string(t.replicas));
  }
}

void check_language(const Checker& check, std::string_view path, const std::string& language) {
  for (std::string_view known : kMulti30kLanguages) {
    if (language == known) return;
  }
  check.fail(path, "multi30k has no language \"" + language + "\" (expected de or en)");
}

// A split or language names files in data.dir: <split>.<language>[.gz].
void check_file_stem(const Checker& check, std::string_view path, const std::string& stem) {
  if (stem.empty() || stem.find('/') != std::string::npos || stem == "." || stem == "..") {
    check.fail(path, "must name a file in data.dir (not empty, no '/'), got \"" + stem + "\"");
  }
}

// A model validated or scored on sentences it trained on measures memory, and early stopping on
// the test split picks the checkpoint by its score: every split names its own files.
void check_distinct_splits(const Checker& check, const DataConfig& d) {
  std::map<std::string, std::string_view> named = {{d.train, "data.train"}};
  const auto name = [&](std::string_view path, const std::string& split) {
    const auto [earlier, inserted] = named.emplace(split, path);
    if (!inserted) {
      check.fail(path, "names the split \"" + split + "\" that " + std::string(earlier->second) +
                           " names too: each split must be its own files");
    }
  };
  name("data.valid", d.valid);
  for (const std::string& split : d.test) name("data.test", split);
}

void validate_corpus(const Checker& check, const DataConfig& d, const ModelConfig& m) {
  if (d.dataset == Dataset::multi30k) {
    check_language(check, "data.source_language", d.source_language);
    check_language(check, "data.target_language", d.target_language);
  } else {
    check_file_stem(check, "data.source_language", d.source_language);
    check_file_stem(check, "data.target_language", d.target_language);
    check_file_stem(check, "data.train", d.train);
    check_file_stem(check, "data.valid", d.valid);
    for (const std::string& split : d.test) check_file_stem(check, "data.test", split);
    check_distinct_splits(check, d);
    check.at_least("data.max_len_filter", d.max_len_filter, 0);
    if (d.max_len_filter > m.max_len) {
      check.fail("data.max_len_filter", "must be <= model.max_len " + std::to_string(m.max_len) +
                                            " (longer pairs have no positions), got " +
                                            std::to_string(d.max_len_filter));
    }
  }
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
    check.fail("model.pad_id", "must be 0 for " + to_string(d.dataset) + " (the vocabulary's pad id), got " +
                                   std::to_string(m.pad_id));
  }
}

void validate_data(const Checker& check, const DataConfig& d, const ModelConfig& m) {
  if (d.dataset == Dataset::multi30k || d.dataset == Dataset::parallel) {
    validate_corpus(check, d, m);
  } else {
    check.at_least("data.min_length", d.min_length, 1);
    // max_length + EOS against model.max_len is checked when batches are made (copy_task.h):
    // a config used only for `forward` need not fit the copy task's defaults.
    check.at_least("data.max_length", d.max_length, d.min_length, " (min_length)");
    check.at_least("data.batch_size", d.batch_size, 1);
  }
}

}  // namespace

void validate(const Config& config, const std::string& source) {
  const Checker check(source);
  Config fields = config;  // the field lists take mutable structs (core/config_fields.h)
  const RangeChecker ranges(check, "");
  visit_fields(fields, ranges);
  validate_model(check, config.model);
  validate_train(check, config.train);
  validate_data(check, config.data, config.model);
}

}  // namespace trepro
