#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "experiments/commands/commands.h"
#include "model/parameter_specs.h"

namespace trepro::cli {

namespace {

// "encoder.layers.3.ffn.w1.weight" -> group "encoder.layers", layer 3; "embed.weight" -> "embed".
struct Group {
  std::string name;
  long layer = -1;
};

Group group_of(const std::string& name) {
  for (const char* stack : {"encoder.layers.", "decoder.layers."}) {
    const std::string prefix = stack;
    if (name.rfind(prefix, 0) == 0) return {prefix.substr(0, prefix.size() - 1), std::stol(name.substr(prefix.size()))};
  }
  return {name.substr(0, name.find('.')), -1};
}

nlohmann::json parameter_report(const Config& config) {
  std::int64_t total = 0;
  nlohmann::json groups = nlohmann::json::object();
  nlohmann::json tensors = nlohmann::json::object();
  for (const ParameterSpec& spec : parameter_specs(config.model)) {
    const std::int64_t n = shape_numel(spec.shape);
    total += n;
    tensors[spec.name] = {{"shape", spec.shape}, {"count", n}};
    const Group g = group_of(spec.name);
    std::string key = g.name;
    if (g.layer >= 0) key += "." + std::to_string(g.layer);
    groups[key] = groups.value(key, std::int64_t{0}) + n;
  }
  return {{"parameters", total},
          {"parameters_millions", static_cast<double>(total) / 1e6},
          {"breakdown", groups},
          {"tensors", tensors},
          {"config_hash", config_hash(config)}};
}

}  // namespace

void add_info_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "Parameter count of a config and its breakdown (JSON on stdout)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("config", *path, "config JSON")->required();
  cmd->callback([path] { std::cout << parameter_report(load_config(*path)).dump(2) << "\n"; });
}

}  // namespace trepro::cli
