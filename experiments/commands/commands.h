// The `trepro` subcommands; each file in this folder adds one to the CLI.
#pragma once

#include <CLI/CLI.hpp>

namespace trepro::cli {

// A subcommand with what it does and an example: `trepro NAME --help` shows both, and the CLI
// page of the manual (docs/cli.md) is checked against them.
inline CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description,
                             const std::string& example) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->footer("Example:\n  " + example);
  return cmd;
}

void add_backends_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_config_keys_command(CLI::App& app);
void add_forward_command(CLI::App& app);
void add_prepare_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_average_command(CLI::App& app);
void add_upgrade_report_command(CLI::App& app);
void add_ablate_command(CLI::App& app);
void add_verdicts_command(CLI::App& app);
void add_bleu_command(CLI::App& app);
void add_translate_command(CLI::App& app);
void add_evaluate_command(CLI::App& app);
void add_attention_command(CLI::App& app);
void add_compare_kernels_command(CLI::App& app);
void add_conform_command(CLI::App& app);
void add_check_command(CLI::App& app);

}  // namespace trepro::cli
