// Decoding a split with a run and adding BLEU and perplexity to its report: `trepro evaluate`,
// and the last step of every cell of `trepro ablate`.
#pragma once

#include <string>

#include "experiments/commands/translation_options.h"

namespace trepro::cli {

struct EvaluateOptions {
  TranslationModelOptions model;
  TranslateOptions search;
  std::string split = "test_2016_flickr";
  std::string data_dir;
  bool paper_wmt14 = false;  // also the paper's BLEU (experiments/bleu/paper_bleu.h)
};

// Writes RUN/<split>.<checkpoint>.hyp.<language> and RUN/report.json's "test" object; prints the
// scores. Throws naming the file when the run or the data cannot be read.
void evaluate_run(const EvaluateOptions& options);

}  // namespace trepro::cli
