// The keys of the contract as a list and as docs/config.md's Markdown table, from the field lists
// (core/config_fields.h); conformance/core/config_fields_test.cc checks docs/config.md against it.
#include <string>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/config_fields.h"
#include "core/config_messages.h"

namespace trepro {
namespace {

// What JSON type a member takes, in words.
template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, bool>) {
    return "`true` \\| `false`";
  } else if constexpr (std::is_same_v<T, double>) {
    return "number";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return "array of strings";
  } else {
    static_assert(std::is_integral_v<T>, "a config member is a bool, number, string, array of strings, integer or enum");
    return "integer";
  }
}

template <class T>
std::string values_of(const T&, const AtLeast& range) {
  return type_name<T>() + " >= " + std::to_string(range.min);
}

template <class T>
std::string values_of(const T&, const Real& range) {
  switch (range.range) {
    case RealRange::positive:
      return type_name<T>() + " > 0";
    case RealRange::probability:
      return type_name<T>() + " in [0, 1)";
    case RealRange::non_negative:
      return type_name<T>() + " >= 0";
  }
  return type_name<T>();
}

template <class T>
std::string values_of(const T&, const Unchecked& range) {
  return range.rule.empty() ? type_name<T>() : type_name<T>() + ", " + std::string(range.rule);
}

template <class T, std::size_t N>
std::string values_of(const T&, const Choice<T> (&choices)[N]) {
  std::string names;
  for (const Choice<T>& choice : choices) names.append(names.empty() ? "`" : " \\| `").append(choice.name).append("`");
  return names;
}

// Lists the keys of a default Config, so that each key's default is the struct's initializer.
class KeyLister {
 public:
  KeyLister(std::vector<ConfigKey>& keys, std::string prefix) : keys_(keys), prefix_(std::move(prefix)) {}

  template <class T, class Range>
  void operator()(const Key& key, const T& value, const Range& range) {
    keys_.push_back({dotted(prefix_, key.name), values_of(value, range),
                     key.required ? "required" : field_json(value, range).dump(), std::string(key.meaning),
                     key.since});
  }

  template <class Section>
  void section(const Key& key, Section& section) {
    KeyLister lister(keys_, dotted(prefix_, key.name));
    visit_fields(section, lister);
  }

 private:
  std::vector<ConfigKey>& keys_;
  std::string prefix_;
};

}  // namespace

std::vector<ConfigKey> config_keys() {
  std::vector<ConfigKey> keys;
  Config defaults;
  KeyLister lister(keys, "");
  visit_fields(defaults, lister);
  return keys;
}

std::string config_keys_markdown() {
  std::string table = "| Key | Values | Default | Meaning |\n|---|---|---|---|\n";
  for (const ConfigKey& key : config_keys()) {
    const std::string shown_default = key.default_value == "required" ? "required" : "`" + key.default_value + "`";
    std::string meaning = key.meaning;
    if (key.since > 1) {
      meaning += " (contract version " + std::to_string(key.since) + ": left out of the JSON and hash at its default)";
    }
    table += "| `" + key.path + "` | " + key.values + " | " + shown_default + " | " + meaning + " |\n";
  }
  return table;
}

}  // namespace trepro
