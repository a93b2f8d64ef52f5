// The summary report of a seeded ablation (DIR/summary.json, validated against
// reports/ablation_schema.json):
// - per variant, each seed's cell (the headline numbers of DIR/<variant>/seed_<S>/report.json:
//   final training loss, best validation perplexity, test perplexity, sacreBLEU and tokenized
//   lower-cased BLEU, throughput) and the mean and standard deviation of each metric over seeds;
// - per variant against the spec's baseline, the paired bootstrap of the sacreBLEU difference
//   over the test sentences, pooled over the seeds both have;
// - per claim of the spec, its per-seed advantages, pooled interval and verdict
//   (ablation_statistics.h).
// The curves stay in the run reports.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "experiments/ablation/ablation_spec.h"

namespace trepro {

// Reads the cells' reports under `out_dir` (a cell not run yet is listed with status "not_run")
// and, for the bootstrap, their hypotheses files and the test references of `data_dir` (empty:
// the usual search, experiments/data/multi30k.h).
nlohmann::json ablation_summary(const AblationSpec& spec, const std::string& spec_path, const std::string& out_dir,
                                const std::string& data_dir);

// Mean training loss of the last `window` steps of a run report's "curve" (its points from the
// end until they cover `window` steps, each weighted by its steps; all of them when fewer): the
// end of a noisy curve in one number.
double final_training_loss(const nlohmann::json& curve, std::int64_t window);

}  // namespace trepro
