#include "experiments/copy_task.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/philox.h"

namespace trepro {

SpecialTokens special_tokens(const ModelConfig& model) {
  std::vector<std::int64_t> ids;
  for (std::int64_t id = 0; ids.size() < 2; ++id) {
    if (id != model.pad_id) ids.push_back(id);
  }
  return {model.pad_id, ids[0], ids[1]};
}

Batch copy_task_batch(const ModelConfig& model, const CopyTask& task, std::uint64_t seed, std::uint64_t index) {
  const SpecialTokens special = special_tokens(model);
  const std::int64_t first_content = std::max({special.pad, special.bos, special.eos}) + 1;
  if (model.vocab_size - first_content < 2) {
    throw std::invalid_argument("copy task: vocab_size " + std::to_string(model.vocab_size) +
                                " leaves fewer than 2 content tokens after pad, BOS and EOS");
  }
  if (task.max_length + 1 > model.max_len) {
    throw std::invalid_argument("copy task: max_length " + std::to_string(task.max_length) +
                                " + EOS exceeds model.max_len " + std::to_string(model.max_len));
  }
  const PhiloxKey key{seed, index, 0xC0B1};
  std::uint64_t draw = 0;
  auto uniform_int = [&](std::int64_t lo, std::int64_t hi) {  // in [lo, hi]
    return lo + static_cast<std::int64_t>(philox_uniform(key, draw++) * static_cast<double>(hi - lo + 1));
  };
  std::vector<std::vector<std::int64_t>> rows;
  std::int64_t longest = 0;
  for (std::int64_t b = 0; b < task.batch_size; ++b) {
    std::vector<std::int64_t> row(static_cast<std::size_t>(uniform_int(task.min_length, task.max_length)));
    for (auto& token : row) token = uniform_int(first_content, model.vocab_size - 1);
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(row.size()) + 1);
    rows.push_back(std::move(row));
  }
  Batch batch;
  const Shape shape{task.batch_size, longest};
  batch.src = Tensor::empty(shape, DType::i64);
  batch.tgt = Tensor::empty(shape, DType::i64);
  batch.labels = Tensor::empty(shape, DType::i64);
  for (std::int64_t b = 0; b < task.batch_size; ++b) {
    std::vector<std::int64_t> target = rows[static_cast<std::size_t>(b)];
    if (task.reverse) std::reverse(target.begin(), target.end());
    const auto n = static_cast<std::int64_t>(target.size());
    for (std::int64_t t = 0; t < longest; ++t) {
      const std::int64_t at = b * longest + t;
      const double pad = static_cast<double>(special.pad);
      batch.src.set(at, t < n ? static_cast<double>(rows[static_cast<std::size_t>(b)][static_cast<std::size_t>(t)])
                              : (t == n ? static_cast<double>(special.eos) : pad));
      batch.tgt.set(at, t == 0 ? static_cast<double>(special.bos)
                               : (t <= n ? static_cast<double>(target[static_cast<std::size_t>(t - 1)]) : pad));
      batch.labels.set(at, t < n ? static_cast<double>(target[static_cast<std::size_t>(t)])
                                 : (t == n ? static_cast<double>(special.eos) : pad));
    }
  }
  return batch;
}

}  // namespace trepro
