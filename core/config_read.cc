// Reading a config: JSON -> structs through the field lists (core/config_fields.h), with an
// error naming the source and the dotted key for unknown keys and wrong types.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/config_fields.h"
#include "core/config_messages.h"

namespace trepro {
namespace {

using nlohmann::json;

// A JSON value as it was written, cut short so an error about an array stays one line.
std::string describe(const json& value) {
  constexpr std::size_t kMaxChars = 40;
  std::string text = value.dump();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

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

  const std::string& source() const { return source_; }
  std::string path_of(std::string_view key) const { return dotted(path_, key); }

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

  void read(std::string_view key, std::vector<std::string>& out) {
    if (const json* value = find(key)) {
      const auto is_string = [](const json& item) { return item.is_string(); };
      if (!value->is_array() || !std::all_of(value->begin(), value->end(), is_string)) {
        fail(key, "expected an array of strings, got " + describe(*value));
      }
      out = value->get<std::vector<std::string>>();
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

// Reads the keys of one JSON object into a section, through the section's field list.
class FieldReader {
 public:
  explicit FieldReader(ObjectReader& in) : in_(in) {}

  template <class T, class Range>
  void operator()(const Key& key, T& value, const Range& range) {
    if (key.required) in_.require(key.name);
    if constexpr (std::is_array_v<Range>) {
      in_.read(key.name, value, range);  // a Choice table: the enum's JSON names
    } else {
      in_.read(key.name, value);
    }
  }

  template <class Section>
  void section(const Key& key, Section& section) {
    const json* value = key.required ? &in_.require(key.name) : in_.find(key.name);
    if (value == nullptr) return;
    ObjectReader object(*value, in_.source(), in_.path_of(key.name));
    FieldReader reader(object);
    visit_fields(section, reader);
    object.reject_unknown_keys();
  }

 private:
  ObjectReader& in_;
};

// A stack the architecture does not have defaults to 0 layers; an explicit non-zero count is
// still an error (validate), since it would be silently ignored.
void default_missing_stacks(const json& model, ModelConfig& m) {
  if (m.architecture == Architecture::decoder_only && !model.contains("encoder_layers")) m.encoder_layers = 0;
  if (m.architecture == Architecture::encoder_only && !model.contains("decoder_layers")) m.decoder_layers = 0;
}

}  // namespace

Config config_from_json(const nlohmann::json& document, const std::string& source) {
  ObjectReader top(document, source, "");
  FieldReader reader(top);
  Config config;
  visit_fields(config, reader);
  top.reject_unknown_keys();
  default_missing_stacks(document.at("model"), config.model);
  validate(config, source);
  return config;
}

}  // namespace trepro
