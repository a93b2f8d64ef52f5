// report.json of a training run (validated against reports/schema.json): what ran (config and
// its hash, git commit, backend, SIMD target, threads, compiler, seed, data), what happened
// (the training curve of loss / learning rate / gradient norm, the validation curve, the best
// checkpoint, test perplexity), how fast (target tokens per second) and how big (peak memory).
// `test` is shared with decoding (`trepro evaluate` adds test.bleu, test.bleu_signature,
// test.bleu_tok_lc, test.hypotheses_file): each writer keeps the fields it does not set.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/backend.h"
#include "core/config.h"
#include "experiments/run_folder/run_folder.h"

namespace trepro {

// Every step and validation of the run so far, also kept in RUN/history.jsonl (one JSON object
// a line) so that a resumed run reports the whole run.
struct RunHistory {
  // {step, epoch, loss, learning_rate, grad_norm, tokens, seconds}, and stopped: true where the
  // process was stopped and continued during the step (StopCounter).
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json validation = nlohmann::json::array();  // {step, loss, perplexity}

  // Reads RUN/history.jsonl keeping entries up to `last_step`, and rewrites it so (a resumed run
  // drops what the interrupted one did after its last checkpoint). Missing file: empty.
  static RunHistory load(const std::string& path, std::int64_t last_step);
  void append(const std::string& path, const std::string& kind, const nlohmann::json& entry);
  // Validations after `step`: after the best one, how much of train.patience is used up.
  std::int64_t validations_after(std::int64_t step) const;
};

// The training curve a report keeps ("curve"): each of the first kCurveDenseSteps steps alone,
// then one point per kCurveWindow steps (windows end at its multiples, the last at the run's
// last step). A 6,000-step run's report is then tens of kilobytes rather than a megabyte (the
// committed sweeps are tens of runs, and travel to GPU machines in a 64 MiB tree), the curves of
// different runs share their steps, and the first steps, where the loss and the warmup move
// fastest, stay exact. Each point: `step` (the window's last) and `steps` (how many), `epoch` and
// `learning_rate` at its last step, `loss` and `grad_norm` averaged over it, `grad_norm_max`, and
// `tokens` and `seconds` summed. Every step stays in RUN/history.jsonl.
inline constexpr std::int64_t kCurveDenseSteps = 100;
inline constexpr std::int64_t kCurveWindow = 50;
nlohmann::json training_curve(const nlohmann::json& steps);

// A report of schema_version 1 (every step under "steps") as schema_version 2 writes it (their
// training_curve under "curve"); a report already at 2 is returned as it is. Throws, naming
// `source`, on any other version or a step without the fields the curve needs.
nlohmann::json upgraded_run_report(nlohmann::json report, const std::string& source);

// A report's "timings" over `steps`: train_seconds and the rate count the steps that no stop fell
// in (a stopped step's wall time holds the pause; stopped_steps says how many were left out),
// target_tokens counts them all.
nlohmann::json run_timings(const nlohmann::json& steps);

// The facts of this process: git commit, backend, SIMD target, threads, compiler.
nlohmann::json build_facts(const Backend& backend);

// Completes `run` (status, config, config_hash, seed, data, best, test, resumed and maybe error,
// from the training loop) with the build facts, the history, timings over the whole run and
// the peak memory, and writes it as the folder's report. The `test` fields of an existing report
// that `run` does not set (BLEU from decoding) are kept.
void write_run_report(const RunFolder& folder, nlohmann::json run, const RunHistory& history, const Backend& backend);

}  // namespace trepro
