// The synthetic copy (or reverse) task: random token sequences the model must reproduce. It
// needs no files and a tiny model learns it in seconds, so it is the smoke test of training.
//   src    = x_1 .. x_n EOS            (reverse: x_n .. x_1 EOS as the target instead)
//   tgt    = BOS y_1 .. y_n            (the decoder input, shifted right)
//   labels = y_1 .. y_n EOS
// Rows are padded with pad_id to the longest row of the batch.
#pragma once

#include <cstdint>

#include "core/config.h"
#include "model/transformer.h"

namespace trepro {

struct CopyTask {
  bool reverse = false;
  std::int64_t min_length = 4;
  std::int64_t max_length = 12;
  std::int64_t batch_size = 32;
};

// Special ids: the two smallest ids that are not pad_id.
struct SpecialTokens {
  std::int64_t pad, bos, eos;
};
SpecialTokens special_tokens(const ModelConfig& model);

// Batch `index` of the stream seeded by `seed`: a pure function of its arguments, so training
// and validation streams never overlap when their seeds differ.
Batch copy_task_batch(const ModelConfig& model, const CopyTask& task, std::uint64_t seed, std::uint64_t index);

}  // namespace trepro
