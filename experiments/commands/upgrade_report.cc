// trepro upgrade-report: rewrites run reports of an earlier schema_version as this build writes
// them (1 -> 2: every step's record becomes the training curve, training_curve in
// experiments/training/run_report.h), so that reports made before the change read, render and
// summarize as new ones do.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/json_input.h"
#include "experiments/commands/commands.h"
#include "experiments/training/run_report.h"

namespace trepro::cli {

namespace {

void upgrade_report(const std::string& path) {
  const nlohmann::json report = read_json_file(path);
  const nlohmann::json upgraded = upgraded_run_report(report, path);
  if (upgraded == report) {
    std::cout << path << ": already at schema_version 2" << std::endl;
    return;
  }
  write_file_atomically(path, upgraded.dump(2) + "\n");
  std::cout << path << ": schema_version 1 -> 2, " << report["steps"].size() << " steps -> "
            << upgraded["curve"].size() << " curve points" << std::endl;
}

}  // namespace

void add_upgrade_report_command(CLI::App& app) {
  CLI::App* cmd =
      add_command(app, "upgrade-report", "Rewrite run reports of an earlier schema_version as this build writes them",
      "trepro upgrade-report runs/old/report.json");
  auto paths = std::make_shared<std::vector<std::string>>();
  cmd->add_option("reports", *paths, "report.json files, each rewritten in place (atomically)")->required();
  cmd->callback([paths] {
    for (const std::string& path : *paths) upgrade_report(path);
  });
}

}  // namespace trepro::cli
