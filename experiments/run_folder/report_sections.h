// The sections of RUN/report.json (reports/schema.json) that more than one command writes,
// typed, so that each field is named in one place:
//   "best"  the validation that chose RUN/checkpoints/best.safetensors (training);
//   "test"  one checkpoint's figures on one test split: training writes the best checkpoint's
//           loss, and decoding (`trepro evaluate`) replaces them with those of the checkpoint it
//           decoded and adds BLEU and how it decoded ("decoding"), so every field is about one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/run_folder/run_folder.h"

namespace trepro {

struct BestSection {
  std::int64_t step = 0;  // 0: no validation yet
  double validation_loss = 0.0;
};
nlohmann::json best_section_json(const RunFolder& run, const BestSection& best);

struct TestLoss {
  std::string split;
  std::string checkpoint;  // relative to the run folder when inside it
  std::int64_t checkpoint_step = 0;
  double loss = 0.0;  // cross-entropy per target token, no smoothing
};
nlohmann::json test_loss_json(const TestLoss& test);

struct PaperBleu {
  double score = 0.0;
  std::string signature;
  std::string verbose;
};

struct TestDecoding {
  double bleu = 0.0;
  std::string bleu_signature;
  double bleu_tok_lc = 0.0;
  std::string hypotheses_file;  // in the run folder
  nlohmann::json decoding;      // the search and its counts
  std::optional<PaperBleu> paper_wmt14;
};

// Whether a decoding's figures also become the report's "test" (the split the run is judged on),
// or are one more test set beside it.
enum class TestRole { primary, additional };

// Records `loss` and `decoding` under "tests"/<split>; a primary decoding also replaces "test" (a
// paper's BLEU of an earlier decoding does not survive a decoding without it). Keeps every other
// section; throws naming the file when the run has no report.
void record_decoded_test(const RunFolder& run, const TestLoss& loss, const TestDecoding& decoding,
                         TestRole role = TestRole::primary);

}  // namespace trepro
