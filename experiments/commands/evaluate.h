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
  // Recorded only under "tests"/<split>, "test" left to the split the run is judged on (ablate's
  // other Multi30K test sets).
  bool additional_test_set = false;
};

// Writes RUN/<split>.<checkpoint>.hyp.<language> and RUN/report.json's "tests"/<split> (and "test",
// unless additional_test_set) object; prints the
// scores. Throws naming the file when the run or the data cannot be read.
void evaluate_run(const EvaluateOptions& options);

}  // namespace trepro::cli
