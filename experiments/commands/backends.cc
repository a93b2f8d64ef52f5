#include <iostream>

#include <nlohmann/json.hpp>

#include "experiments/commands/commands.h"
#include "registry/registry.h"

namespace trepro::cli {

void add_backends_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "backends", "List the backends this build can run on this machine (JSON)",
      "trepro backends");
  cmd->callback([] {
    nlohmann::json out = nlohmann::json::array();
    const std::string chosen = default_backend_name();
    for (const BackendInfo& info : available_backends()) {
      out.push_back({{"name", info.name},
                     {"dtype", dtype_name(info.dtype)},
                     {"description", info.description},
                     {"default", info.name == chosen}});
    }
    std::cout << out.dump(2) << "\n";
    // The project's backends that this build or machine lacks, and why, so that `--backend cuda`
    // failing is no surprise; on stderr, so that stdout lists what runs.
    if (const std::string cuda = unavailable_reason("cuda"); !cuda.empty()) {
      std::cerr << "trepro backends: cuda is not listed: " << cuda << "\n";
    }
  });
}

}  // namespace trepro::cli
