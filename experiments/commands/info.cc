#include <cmath>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "experiments/commands/commands.h"
#include "model/parameter_specs.h"

namespace trepro::cli {

namespace {

// The part of the model a parameter belongs to, for the summary: "embeddings", "encoder",
// "decoder" or "output_projection"; and its layer (-1 outside the layer stacks).
struct Part {
  std::string name;
  long layer = -1;
};

Part part_of(const std::string& name) {
  for (const char* stack : {"encoder", "decoder"}) {
    const std::string layers = std::string(stack) + ".layers.";
    if (name.rfind(layers, 0) == 0) return {stack, std::stol(name.substr(layers.size()))};
    if (name.rfind(std::string(stack) + ".norm.", 0) == 0) return {stack, -1};
  }
  if (name.rfind("out_proj.", 0) == 0) return {"output_projection", -1};
  return {"embeddings", -1};
}

// The paper's Table 3 counts (base 65M, big 213M, with a shared 37,000-token vocabulary): the
// config's count beside the nearer of the two.
nlohmann::ordered_json paper_comparison(std::int64_t total) {
  constexpr double kBase = 65e6, kBig = 213e6;
  const double n = static_cast<double>(total);
  const bool big = std::abs(n - kBig) < std::abs(n - kBase);
  const double paper = big ? kBig : kBase;
  return {{"model", big ? "big" : "base"}, {"parameters_millions", paper / 1e6}, {"ratio", n / paper}};
}

// Totals per part, and with `breakdown` per layer and per tensor; the parts add up to the total (checked by
// conformance/model/parameter_count_test.cc for the paper's base config).
nlohmann::ordered_json parameter_report(const Config& config, bool breakdown) {
  std::int64_t total = 0;
  nlohmann::json summary = {{"embeddings", 0}, {"encoder", 0}, {"decoder", 0}, {"output_projection", 0}};
  nlohmann::json layers = nlohmann::json::object();
  nlohmann::json tensors = nlohmann::json::object();
  for (const ParameterSpec& spec : parameter_specs(config.model)) {
    const std::int64_t n = shape_numel(spec.shape);
    total += n;
    tensors[spec.name] = {{"shape", spec.shape}, {"count", n}};
    const Part part = part_of(spec.name);
    summary[part.name] = summary[part.name].get<std::int64_t>() + n;
    if (part.layer >= 0) {
      const std::string layer = part.name + ".layers." + std::to_string(part.layer);
      layers[layer] = layers.value(layer, std::int64_t{0}) + n;
    }
  }
  // Ordered: the count and the paper's come first, where a reader looks.
  nlohmann::ordered_json report = {{"parameters", total},
                            {"parameters_millions", static_cast<double>(total) / 1e6},
                            {"paper", paper_comparison(total)},
                            {"summary", summary},
                            {"config_hash", config_hash(config)}};
  if (breakdown) {
    report["layers"] = layers;
    report["tensors"] = tensors;
  }
  return report;
}

}  // namespace

void add_info_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "info", "Parameter count of a config beside the paper's (JSON on stdout; --breakdown: per layer and tensor)",
      "trepro info experiments/configs/paper_base.json");
  auto path = std::make_shared<std::string>();
  auto breakdown = std::make_shared<bool>(false);
  cmd->add_option("config", *path, "config JSON")->required();
  cmd->add_flag("--breakdown", *breakdown, "also every layer's and every tensor's count");
  cmd->callback([path, breakdown] { std::cout << parameter_report(load_config(*path), *breakdown).dump(2) << "\n"; });
}

}  // namespace trepro::cli
