// What a run trains on, chosen by config.data.dataset: the synthetic copy/reverse task (an
// endless stream, no files) or a parallel corpus, Multi30K's preset or any other (token batches
// of the encoded training split, epochs), read into memory or memory-mapped from a folder that
// `trepro prepare` wrote.
// Both are pure functions of (config, position): a checkpoint stores the DataPosition and a
// resumed run continues with exactly the batches an uninterrupted one would have seen.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "model/transformer.h"

namespace trepro {

struct DataPosition {
  std::int64_t epoch = 1;  // counted from 1
  std::int64_t batch = 0;  // the next batch of that epoch, from 0
};

class TrainingData {
 public:
  // A corpus is read from `prepared_dir` when it is not empty (memory-mapped; its vocabulary is
  // copied to RUN/vocab.model), else from the text files of corpus_spec(config, data_dir) into
  // memory, reusing RUN/vocab.model when it exists (resume) or training the vocabulary on
  // data.vocabulary.sample_sentences sentences of the training split and writing it there.
  // Both give the same batches. Progress notes ("vocabulary: training ...") go to `note`.
  static std::unique_ptr<TrainingData> open(const Config& config, const std::string& run_dir,
                                            const std::string& data_dir, const std::string& prepared_dir,
                                            const std::function<void(const std::string&)>& note);
  virtual ~TrainingData() = default;

  // The batch at `position`; moves `position` to the next one (the next epoch after the last).
  virtual Batch next(DataPosition& position) = 0;
  // Moves `position` past its batch without building it: a data-parallel rank skips the batches
  // that other ranks run, so no rank reads every pair of a memory-mapped corpus.
  virtual void skip(DataPosition& position) = 0;
  // Batches in one epoch (the first; packing varies slightly by epoch), 0 for an endless stream.
  virtual std::int64_t batches_per_epoch() = 0;
  // Mean cross-entropy (no label smoothing) per non-pad target token of the validation set,
  // dropout off; exp() of it is the perplexity.
  virtual double validation_loss(Transformer& model) = 0;
  // The same on the test set, when there is one.
  virtual std::optional<double> test_loss(Transformer& model) = 0;
  // What the report records about the data (name, split sizes, vocabulary).
  virtual nlohmann::json describe() const = 0;
};

// Mean cross-entropy per non-pad label over `batches` (no label smoothing, dropout off), and the
// labels it is the mean over.
struct TokenLoss {
  double loss = 0.0;
  std::int64_t tokens = 0;
};
TokenLoss token_loss(Transformer& model, const std::vector<Batch>& batches);
double mean_loss(Transformer& model, const std::vector<Batch>& batches);

}  // namespace trepro
