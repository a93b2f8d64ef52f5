// begin_constant_weights / end_constant_weights of the optimized CPU backend (core/backend.h),
// and the cache of packed weights behind them (packed_weights.h).
#include "optimized/cpu/packed_weights.h"

#include <stdexcept>

#include "optimized/cpu/cpu_backend.h"

namespace trepro::cpu {

void PackedWeights::end() {
  if (depth_ == 0) throw std::logic_error("end_constant_weights without begin_constant_weights");
  if (--depth_ == 0) entries_.clear();
}

const PackedWeight* PackedWeights::find(std::int64_t target, const Tensor& w) {
  if (depth_ == 0) return nullptr;
  const std::int64_t n = w.dim(0), k = w.dim(1);
  const auto key = std::make_tuple(w.data<float>(), n, k);
  auto at = entries_.find(key);
  if (at == entries_.end()) at = entries_.emplace(key, Entry{w, pack_weight(target, w.data<float>(), n, k)}).first;
  return &at->second.packed;
}

void CpuBackend::begin_constant_weights() { packed_weights_.begin(); }

void CpuBackend::end_constant_weights() { packed_weights_.end(); }

}  // namespace trepro::cpu
