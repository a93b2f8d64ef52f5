// Token embedding, scaled, plus positions (Vaswani et al. 2017, section 3.4 and 3.5).
//   ids [B, T] int32 in [0, V), table [V, d], out [B, T, d], position of (b, t) = offset + t.
#pragma once

#include <cmath>
#include <cstdint>

#include <Eigen/Dense>

#include "core/backend_checks.h"

namespace trepro::reference {

namespace embedding_detail {

template <class T> using RowVector = Eigen::Matrix<T, 1, Eigen::Dynamic>;
template <class T> using Row = Eigen::Map<RowVector<T>>;
template <class T> using ConstRow = Eigen::Map<const RowVector<T>>;

// Sinusoidal encoding, interleaved (sin at even, cos at odd columns), d may be odd:
//   PE(p, 2i) = sin(p / 10000^(2i/d)),  PE(p, 2i+1) = cos(p / 10000^(2i/d))
// The angle reaches max_len radians: it is computed in double and rounded once to T, so the
// float build loses no more than the final rounding.
template <class T> void sinusoidal_position(std::int64_t position, RowVector<T>& pe) {
  const std::int64_t d = pe.size();
  for (std::int64_t i = 0; 2 * i < d; ++i) {
    const double angle = static_cast<double>(position) / std::pow(10000.0, static_cast<double>(2 * i) / d);
    pe(2 * i) = static_cast<T>(std::sin(angle));
    if (2 * i + 1 < d) pe(2 * i + 1) = static_cast<T>(std::cos(angle));
  }
}

}  // namespace embedding_detail

// out[b, t] = scale * table[ids[b, t]] + pos(offset + t)
//   sinusoidal: pos(p) = PE(p);  learned: pos(p) = pos_table[p] (pos_table [max_len, d]);
//   rope: pos(p) = 0 (rope_forward rotates positions into q and k instead).
// An id outside [0, V) or a learned position outside [0, max_len) throws std::out_of_range
// (core/backend_checks.h: every backend checks the same way, before writing anything).
template <class T>
void embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                       const Tensor* pos_table, std::int64_t offset, Tensor& out) {
  using namespace embedding_detail;
  constexpr const char* op = "embedding_forward";
  const checks::EmbeddingDims dims = checks::embedding_dims(op, dtype_of<T>(), Device::cpu, ids, "table", table, "out",
                                                            out, "pos_table", pos_table, pos, offset);
  const std::int32_t* id_of = ids.data<std::int32_t>();
  checks::embedding_values(op, id_of, dims, "pos_table", pos_table, offset);
  const auto [batch, time, vocab, d] = dims;
  const T scale_t = static_cast<T>(scale);
  RowVector<T> position = RowVector<T>::Zero(d);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < time; ++t) {
      const std::int64_t id = id_of[b * time + t];
      const std::int64_t p = offset + t;
      if (pos == Positional::sinusoidal) sinusoidal_position<T>(p, position);
      if (pos == Positional::learned) position = ConstRow<T>(pos_table->data<T>() + p * d, d);
      const ConstRow<T> embedding(table.data<T>() + id * d, d);
      Row<T>(out.data<T>() + (b * time + t) * d, d) = scale_t * embedding + position;
    }
  }
}

// dtable[ids[b, t]] += scale * dout[b, t];  dpos_table[offset + t] += dout[b, t] (learned only).
// Accumulated, because the table may be tied with other uses (the output projection).
template <class T>
void embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos,
                        std::int64_t offset, Tensor& dtable, Tensor* dpos_table) {
  using namespace embedding_detail;
  constexpr const char* op = "embedding_backward";
  const checks::EmbeddingDims dims = checks::embedding_dims(op, dtype_of<T>(), Device::cpu, ids, "dtable", dtable,
                                                            "dout", dout, "dpos_table", dpos_table, pos, offset);
  const std::int32_t* id_of = ids.data<std::int32_t>();
  checks::embedding_values(op, id_of, dims, "dpos_table", dpos_table, offset);
  const auto [batch, time, vocab, d] = dims;
  const T scale_t = static_cast<T>(scale);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < time; ++t) {
      const std::int64_t id = id_of[b * time + t];
      const ConstRow<T> g(dout.data<T>() + (b * time + t) * d, d);
      Row<T>(dtable.data<T>() + id * d, d) += scale_t * g;
      if (dpos_table) {
        Row<T>(dpos_table->data<T>() + (offset + t) * d, d) += g;
      }
    }
  }
}

}  // namespace trepro::reference
