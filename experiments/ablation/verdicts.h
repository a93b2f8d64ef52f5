// The verdict step over sweep summaries (ablation_summary.h): the variance model, the tests of
// the claims, their multiplicity adjustment and the power of the undecided ones (issue 55).
// - Variance model: the between-seed variance of one config, pooled over the configs that share
//   a backend and a recipe (the spec's base config and common overrides), with its degrees of
//   freedom: sacreBLEU, tokenized lower-cased BLEU and log test perplexity. A config that two
//   sweeps share (a twin cell, `shared_from`) counts once. Superseded sweeps (a `<name>_cpu`
//   folder whose spec also has a folder without the suffix) count for nothing. A config whose
//   seeds no one budget would have trained alike (one ended at a cap another stopped early past,
//   or two at different caps) is left out, named in its pool's `left_out`: its spread would be the
//   budgets', not the seeds'.
// - Calibration: the A/A factor of the sentence bootstrap against the seeds (verdict_rule.h).
// - Test: a BLEU claim's difference against sqrt(seed part + bootstrap's test-set part), a
//   perplexity claim's log difference against the seed part, Student's t with Satterthwaite's df;
//   an equivalence claim by two one-sided tests against its spec's margin.
// - Verdict: reproduced / contradicted when the Holm-adjusted p over every claim of every sweep
//   given (the confirmatory reading) is below 0.05, in the claim's direction / against it;
//   inconclusive otherwise. Benjamini-Hochberg q is reported beside it (the exploratory reading).
// - Power: for an inconclusive claim, the seeds per arm for 80% power at the Holm level it faces
//   (0.05 / (m - R), R the claims rejected now: the threshold it needs to join them), at the
//   paper's effect (BLEU scaled by our baseline's BLEU / the paper's 25.8; perplexity as its log
//   ratio) and at the observed one.
// - Dependence: which claims share cells (by origin, through `shared_from`), and each backend.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trepro {

inline constexpr double kVerdictAlpha = 0.05;
inline constexpr double kPowerTarget = 0.8;
// Table 3's base row: the paper's BLEU that its row effects are relative to.
inline constexpr double kPaperBaseBleu = 25.8;

struct SweepSummary {
  std::string folder;  // the sweep's folder name (what `shared_from` names)
  nlohmann::json summary;
};

// Rewrites every summary's variance model, claim tests, adjusted p values, verdicts, power and
// dependence from the evidence its claims carry; `scope` says in words which sweeps were given.
void apply_verdicts(std::vector<SweepSummary>& sweeps, const std::string& scope);

// DIR/*/summary.json, in folder order; throws naming a file that is not a summary.
std::vector<SweepSummary> read_sweep_summaries(const std::string& dir);

}  // namespace trepro
