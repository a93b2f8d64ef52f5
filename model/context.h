// What one forward pass needs besides its inputs: the backend, whether dropout is on, and the
// Philox key that makes dropout masks a pure function of (seed, stream, site, element).
#pragma once

#include <cstdint>

#include "core/backend.h"

namespace trepro {

struct ForwardContext {
  Backend& backend;
  bool training = false;
  PhiloxKey dropout_key;  // seed and stream; the site is chosen per dropout (dropout_site)

  DropoutSpec dropout(double p, std::uint32_t site) const {
    if (!training || p <= 0.0) return {};
    return {p, {dropout_key.seed, dropout_key.stream, site}};
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
