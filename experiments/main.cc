// trepro: the command line of transformer-repro. `trepro --help` lists the commands.
#include <exception>
#include <iostream>

#include "experiments/commands/cli_hints.h"
#include "experiments/commands/commands.h"
#include "experiments/run_info.h"
#include "registry/plugin_backend.h"

int main(int argc, char** argv) {
  CLI::App app{"transformer-repro: reference, conformance and reproduction of the Transformer (Vaswani et al. 2017)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trepro " + trepro::git_commit() + " (" + trepro::compiler_version() + ")");
  // Before the command: it runs as soon as it is parsed, so the command's --backend can name it.
  app.add_option_function<std::string>(
         "--plugin", [](const std::string& path) { trepro::add_plugin_path(path); },
         "A backend plugin to load (core/plugin_abi.h), as an entry of TREPRO_BACKEND_PLUGINS; repeatable")
      ->trigger_on_parse()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  trepro::cli::add_backends_command(app);
  trepro::cli::add_info_command(app);
  trepro::cli::add_config_keys_command(app);
  trepro::cli::add_forward_command(app);
  trepro::cli::add_prepare_command(app);
  trepro::cli::add_train_command(app);
  trepro::cli::add_average_command(app);
  trepro::cli::add_upgrade_report_command(app);
  trepro::cli::add_ablate_command(app);
  trepro::cli::add_verdicts_command(app);
  trepro::cli::add_bleu_command(app);
  trepro::cli::add_translate_command(app);
  trepro::cli::add_evaluate_command(app);
  trepro::cli::add_attention_command(app);
  trepro::cli::add_compare_kernels_command(app);
  trepro::cli::add_conform_command(app);
  trepro::cli::add_check_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end the parse too (success); a typo gets the nearest known name.
    if (e.get_exit_code() != 0) {
      if (const std::string hint = trepro::cli::parse_hint(app, argc, argv); !hint.empty()) {
        std::cerr << hint;
        return e.get_exit_code();
      }
    }
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "trepro: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
