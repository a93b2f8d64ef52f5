// Loading and saving config files, and the enums' JSON names. Reading, validation, writing and
// the key table walk the field lists (core/config_fields.h): config_read.cc,
// config_validate.cc, config_write.cc, config_keys.cc.
#include "core/config.h"

#include <stdexcept>
#include <string_view>

#include "core/atomic_file.h"
#include "core/config_fields.h"
#include "core/config_messages.h"
#include "core/json_input.h"

namespace trepro {

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
    parsed = parse_json(text, path);
  } catch (const JsonInputError& e) {
    throw ConfigError(e.what());
  }
  return config_from_json(parsed, path);
}

void save_config(const Config& config, const std::string& path) {
  // A file that load_config would reject is never written.
  validate(config, path);
  write_file_atomically(path, config_to_json(config).dump(2) + "\n");
}

void apply_precision(const TrainConfig& train, Backend& backend) {
  try {
    backend.set_precision(train.precision);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("train.precision: ") + e.what() +
                      ": set it to \"float32\" or train with --backend cuda");
  }
}

std::string to_string(NormPlacement v) { return std::string(name_of(kNormPlacements, v)); }
std::string to_string(Architecture v) { return std::string(name_of(kArchitectures, v)); }
std::string to_string(ScheduleKind v) { return std::string(name_of(kScheduleKinds, v)); }
std::string to_string(NormKind v) { return std::string(name_of(kNormKinds, v)); }
std::string to_string(Positional v) { return std::string(name_of(kPositionals, v)); }
std::string to_string(SmoothingForm v) { return std::string(name_of(kSmoothingForms, v)); }
std::string to_string(Dataset v) { return std::string(name_of(kDatasets, v)); }
std::string to_string(VocabularyKind v) { return std::string(name_of(kVocabularyKinds, v)); }
std::string to_string(Precision v) { return std::string(name_of(kPrecisions, v)); }

std::string to_string(Activation v, bool swiglu) {
  for (const Choice<FeedForward>& choice : kFeedForwards) {
    if (choice.value.activation == v && choice.value.swiglu == swiglu) return std::string(choice.name);
  }
  // Combinations validate rejects still get a readable name for its messages.
  return swiglu ? "swiglu" : "none";
}

}  // namespace trepro
