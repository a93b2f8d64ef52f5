// What one forward pass needs besides its inputs: the backend, whether dropout is on, and the
// dropout stream that makes every mask a pure function of (seed, step, micro-batch, site, element).
#pragma once

#include <cstdint>

#include "core/backend.h"

namespace trepro {

// Which masks a training forward draws. Each micro-batch of an optimizer step (train.update_freq)
// is its own forward and must draw its own masks: the step fills the low 32 bits of the Philox
// stream and the micro-batch the high 32, which philox_block mixes into the key. Micro-batch 0
// gives the stream `step`, so a run with one micro-batch per step draws what it drew before
// micro-batches had their own masks. In data-parallel training micro_batch is the batch's index
// in the whole step, over every shard and rank (model/trainer.cc): it already differs between
// shards and ranks, and a rank field would make the masks, and so the weights, depend on the
// number of ranks.
struct DropoutStream {
  std::uint64_t seed = 0;
  std::uint32_t step = 0;         // the optimizer step, from 1
  std::uint32_t micro_batch = 0;  // the micro-batch's index within its step

  std::uint64_t philox_stream() const { return step | static_cast<std::uint64_t>(micro_batch) << 32; }
};

struct ForwardContext {
  Backend& backend;
  bool training = false;
  DropoutStream dropout_stream;  // the site is chosen per dropout (dropout_site)

  DropoutSpec dropout(double p, std::uint32_t site) const {
    if (!training || p <= 0.0) return {};
    return {p, {dropout_stream.seed, dropout_stream.philox_stream(), site}};
  }
};

// Each dropout in the model has its own site so that no two draw the same mask.
enum class Stack : std::uint32_t { encoder = 0, decoder = 1 };
enum class DropoutUse : std::uint32_t { residual = 0, attention_weights = 1 };
constexpr std::uint32_t kSourceEmbeddingSite = 1;
constexpr std::uint32_t kTargetEmbeddingSite = 2;
constexpr std::uint32_t dropout_site(Stack stack, std::int64_t layer, int sublayer, DropoutUse use) {
  return 16u + ((static_cast<std::uint32_t>(stack) * 4096u + static_cast<std::uint32_t>(layer)) * 4u +
                static_cast<std::uint32_t>(sublayer)) * 2u + static_cast<std::uint32_t>(use);
}

}  // namespace trepro
