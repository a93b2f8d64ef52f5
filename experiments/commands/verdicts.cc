// trepro verdicts DIR: the verdict step over every sweep of a folder of sweeps (DIR/*/summary.json,
// as `trepro ablate --summarize-only` writes them): pools the seed variance over the sweeps'
// configs, tests every claim, adjusts the p values over all of them (Holm for the verdicts,
// Benjamini-Hochberg beside it) and rewrites each summary.json in place, atomically
// (experiments/ablation/verdicts.h). `ablate --summarize-only` alone adjusts over its own sweep.
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/atomic_file.h"
#include "experiments/ablation/verdicts.h"
#include "experiments/commands/commands.h"
#include "experiments/run_folder/run_folder.h"

namespace trepro::cli {

void add_verdicts_command(CLI::App& app) {
  CLI::App* cmd = add_command(
      app, "verdicts",
      "Test every claim of every sweep under a folder with the pooled seed variance, adjust for multiplicity over "
      "all of them and rewrite their summary.json",
      "trepro verdicts reports/ablations");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("dir", *dir, "the folder of sweeps (e.g. reports/ablations)")->required();
  cmd->callback([dir] {
    std::vector<SweepSummary> sweeps = read_sweep_summaries(*dir);
    apply_verdicts(sweeps, "every sweep of its folder but superseded ones (trepro verdicts)");
    std::size_t counts[3] = {0, 0, 0};
    for (const SweepSummary& sweep : sweeps) {
      write_file_atomically(SweepFolder(std::filesystem::path(*dir) / sweep.folder).summary(), sweep.summary.dump(2) + "\n");
      if (sweep.summary.contains("superseded_by")) continue;
      for (const auto& claim : sweep.summary.at("claims")) {
        const std::string verdict = claim.at("verdict");
        counts[0] += verdict == "reproduced";
        counts[1] += verdict == "contradicted";
        counts[2] += verdict == "inconclusive";
      }
    }
    std::cout << "verdicts: " << sweeps.size() << " summaries rewritten; Holm over all: " << counts[0] << " reproduced, "
              << counts[1] << " contradicted, " << counts[2] << " inconclusive" << std::endl;
  });
}

}  // namespace trepro::cli
