#include <iostream>

#include "core/config.h"
#include "experiments/commands/commands.h"

namespace trepro::cli {

void add_config_keys_command(CLI::App& app) {
  CLI::App* cmd = add_command(
      app, "config-keys", "The config's keys, ranges and defaults as docs/config.md's Markdown table (from core/config_fields.h)",
      "trepro config-keys");
  cmd->callback([] { std::cout << config_keys_markdown(); });
}

}  // namespace trepro::cli
