// What the decoding commands (translate, evaluate, attention) load from a run folder: its
// config (RUN/config.json), its vocabulary (RUN/vocab.model) and one set of weights: the best
// checkpoint, a named checkpoint, or the average of the last N step checkpoints (the paper
// averages the last 5).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/config.h"
#include "experiments/commands/backend_choice.h"
#include "experiments/data/vocabulary.h"
#include "model/decoding.h"

namespace trepro::cli {

struct TranslationModelOptions {
  std::string run_dir;
  std::string checkpoint;    // empty: RUN/checkpoints/best.safetensors
  std::int64_t average = 0;  // > 0: the mean of the last `average` RUN/checkpoints/step_N
  BackendChoice backend;
  void add_options(CLI::App& cmd);
};

struct TranslationModel {
  Config config;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Transformer> model;
  std::unique_ptr<Vocabulary> vocabulary;
  std::string checkpoint;  // the weights loaded
  std::int64_t checkpoint_step = 0;  // 0 when the file does not say (an average)

  SearchTokens tokens() const { return {config.model.pad_id, Vocabulary::kBos, Vocabulary::kEos}; }
  // Source ids as in training: subword ids, then EOS (empty text: no ids at all).
  std::vector<std::int64_t> encode_source(const std::string& text) const;
  // Detokenized text of a hypothesis.
  std::string detokenize(const Hypothesis& hypothesis) const;
};

// Throws std::runtime_error naming the file when a part of the run is missing or unreadable.
TranslationModel load_translation_model(const TranslationModelOptions& options);

// --greedy, --beam, --alpha, --max-extra, --max-tokens.
void add_search_options(CLI::App& cmd, TranslateOptions& options);
// "beam 4, alpha 0.6, max length source + 50" or "greedy, max length source + 50".
std::string describe(const TranslateOptions& options);

}  // namespace trepro::cli
