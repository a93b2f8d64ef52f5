// Writing a config: structs -> JSON through the field lists (core/config_fields.h), and the
// config hash of that JSON.
#include <string>
#include <utility>

#include "core/config.h"
#include "core/config_fields.h"
#include "core/sha256.h"

namespace trepro {
namespace {

using nlohmann::json;

// Builds one JSON object from a section. With `defaults` (the same section of a default Config,
// every key written), a key added after contract version 1 is left out while it equals its
// default: see config_to_json in core/config.h.
class JsonWriter {
 public:
  explicit JsonWriter(const json* defaults) : defaults_(defaults) {}

  template <class T, class Range>
  void operator()(const Key& key, const T& value, const Range& range) {
    json written = field_json(value, range);
    const std::string name(key.name);
    if (defaults_ != nullptr && key.since > 1 && written == defaults_->at(name)) return;
    out_[name] = std::move(written);
  }

  template <class Section>
  void section(const Key& key, Section& section) {
    const std::string name(key.name);
    JsonWriter writer(defaults_ != nullptr ? &defaults_->at(name) : nullptr);
    visit_fields(section, writer);
    out_[name] = std::move(writer.out_);
  }

  json take() { return std::move(out_); }

 private:
  const json* defaults_;
  json out_ = json::object();
};

json every_key(const Config& config) {
  Config fields = config;  // the field lists take mutable structs
  JsonWriter writer(nullptr);
  visit_fields(fields, writer);
  return writer.take();
}

}  // namespace

nlohmann::json config_to_json(const Config& config, JsonKeys keys) {
  if (keys == JsonKeys::every) return every_key(config);
  const json defaults = every_key(Config{});
  Config fields = config;
  JsonWriter writer(&defaults);
  visit_fields(fields, writer);
  return writer.take();
}

std::string config_hash(const Config& config) { return sha256_hex(config_to_json(config).dump()); }

}  // namespace trepro
