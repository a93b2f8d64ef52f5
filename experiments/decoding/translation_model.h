// What the decoding commands (translate, evaluate, attention) load from a run folder: its
// config (RUN/config.json), its vocabulary (RUN/vocab.model) and one set of weights: the best
// checkpoint, a named checkpoint, or the average of the last N step checkpoints (the paper
// averages the last 5). Their command-line options are experiments/commands/translation_options.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "experiments/data/vocabulary.h"
#include "model/decoding.h"

namespace trepro {

struct TranslationModelSource {
  std::string run_dir;
  std::string checkpoint;    // empty: RUN/checkpoints/best.safetensors
  std::int64_t average = 0;  // > 0: the mean of the last `average` RUN/checkpoints/step_N
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

// `make_backend` is called once the config and the vocabulary have been read and checked.
// Throws std::runtime_error naming the file when a part of the run is missing or unreadable.
TranslationModel load_translation_model(const TranslationModelSource& source,
                                        const std::function<std::unique_ptr<Backend>()>& make_backend);

// "beam 4, alpha 0.6, max length source + 50" or "greedy, max length source + 50".
std::string describe(const TranslateOptions& options);

// The search in a file name: the options that differ from the default search (beam 4, alpha 0.6,
// k_finished, source + 50), e.g. "greedy", "beam8_alpha1", "bound", "greedy_extra20"; "" for the
// default, so that the hypotheses of the paper's decoding keep the name they always had and each
// other search gets its own file.
std::string search_file_tag(const TranslateOptions& options);

}  // namespace trepro
