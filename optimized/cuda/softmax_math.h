// Online (streaming) softmax statistics, shared by the attention, cross-entropy and log-softmax
// kernels: a row is seen in pieces (key tiles, a thread's strided slice of the vocabulary), and
// the pieces' statistics are merged exactly (Milakov & Gimelshein 2018):
//   state = (max m, sum l = sum_j exp(s_j - m));  log sum_j exp(s_j) = m + log l.
// A masked score is -inf and contributes nothing; a state that has seen only masked scores has
// m = -inf and l = 0, and its lse is -inf. No exp(-inf - (-inf)) = NaN is ever formed.
#pragma once

#include <cmath>
#include <limits>

#include "core/host_device.h"

namespace trepro::cuda {

template <class T> struct SoftmaxState {
  T max = -std::numeric_limits<T>::infinity();
  T sum = T(0);
};

// exp(s - max), and exactly 0 for a masked score (s = -inf) or a state with no score yet.
template <class T> TR_HOST_DEVICE T softmax_weight(T s, T max) {
  const T minus_inf = -std::numeric_limits<T>::infinity();
  return (s == minus_inf || max == minus_inf) ? T(0) : std::exp(s - max);
}

// Raises the state's max to at least `tile_max` and rescales its sum; returns the factor
// exp(old max - new max) by which the caller must rescale anything else accumulated with the old
// max (the attention output accumulator). The factor is 0 when the old state was empty.
template <class T> TR_HOST_DEVICE T softmax_rescale(SoftmaxState<T>& state, T tile_max) {
  if (!(tile_max > state.max)) return T(1);
  const T factor = softmax_weight(state.max, tile_max);
  state.sum *= factor;
  state.max = tile_max;
  return factor;
}

// Adds one score.
template <class T> TR_HOST_DEVICE void softmax_add(SoftmaxState<T>& state, T s) {
  softmax_rescale(state, s);
  state.sum += softmax_weight(s, state.max);
}

// The state of the union of two disjoint pieces of a row.
template <class T> TR_HOST_DEVICE SoftmaxState<T> softmax_merge(SoftmaxState<T> a, const SoftmaxState<T>& b) {
  softmax_rescale(a, b.max);
  a.sum += b.sum * softmax_weight(b.max, a.max);
  return a;
}

// log sum_j exp(s_j); -inf when every score was masked.
template <class T> TR_HOST_DEVICE T softmax_lse(const SoftmaxState<T>& state) {
  return state.sum > T(0) ? state.max + std::log(state.sum) : -std::numeric_limits<T>::infinity();
}

}  // namespace trepro::cuda
