#include <iostream>

#include <nlohmann/json.hpp>

#include "experiments/commands/commands.h"
#include "registry/registry.h"

namespace trepro::cli {

void add_backends_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("backends", "List the backends this build can run on this machine (JSON)");
  cmd->callback([] {
    nlohmann::json out = nlohmann::json::array();
    for (const BackendInfo& info : available_backends()) {
      out.push_back({{"name", info.name}, {"dtype", dtype_name(info.dtype)}, {"description", info.description}});
    }
    std::cout << out.dump(2) << "\n";
  });
}

}  // namespace trepro::cli
