// The linear weights of a constant-weights scope (Backend::begin_constant_weights), each packed
// once for the backend's target (gemm.h: PackedWeight) at its first use in the scope, and
// dropped when the outermost scope ends.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "core/tensor.h"
#include "optimized/cpu/gemm.h"

namespace trepro::cpu {

class PackedWeights {
 public:
  void begin() { ++depth_; }
  // Drops every packed weight when the outermost scope ends.
  void end();
  // w's packed form inside a scope (made now at its first use), or null outside any scope.
  const PackedWeight* find(std::int64_t target, const Tensor& w);

 private:
  struct Entry {
    Tensor weight;  // holds w's storage, so that its address names no other tensor meanwhile
    PackedWeight packed;
  };
  int depth_ = 0;
  // By data address and shape: a view of the same storage with another shape is another weight.
  std::map<std::tuple<const float*, std::int64_t, std::int64_t>, Entry> entries_;
};

}  // namespace trepro::cpu
