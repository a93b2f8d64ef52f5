// The options the decoding commands (translate, evaluate, attention) share: which run and
// weights (experiments/decoding/translation_model.h), which backend, and the search's.
#pragma once

#include <CLI/CLI.hpp>

#include "experiments/commands/backend_choice.h"
#include "experiments/decoding/translation_model.h"

namespace trepro::cli {

// RUN, --checkpoint, --average, --backend, --dtype.
struct TranslationModelOptions : TranslationModelSource {
  BackendChoice backend;
  void add_options(CLI::App& cmd);
  TranslationModel load() const;
};

// --greedy, --beam, --alpha, --beam-stop, --max-extra, --max-tokens, --max-sentences.
void add_search_options(CLI::App& cmd, TranslateOptions& options);

}  // namespace trepro::cli
