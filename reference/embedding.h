// Token embedding, scaled, plus positions (Vaswani et al. 2017, section 3.4 and 3.5).
//   ids [B, T] int32 in [0, V), table [V, d], out [B, T, d], position of (b, t) = offset + t.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <Eigen/Dense>

#include "core/backend_checks.h"

namespace trepro::reference {

namespace embedding_detail {

template <class T> using RowVector = Eigen::Matrix<T, 1, Eigen::Dynamic>;
template <class T> using Row = Eigen::Map<RowVector<T>>;
template <class T> using ConstRow = Eigen::Map<const RowVector<T>>;

// ids[b, t], checked against the vocabulary: a bad id is a data bug, reported by value.
inline std::int64_t checked_id(const char* op, const Tensor& ids, std::int64_t b, std::int64_t t,
                               std::int64_t vocab) {
  const std::int32_t id = ids.data<std::int32_t>()[b * ids.dim(1) + t];
  if (id < 0 || id >= vocab) {
    throw std::out_of_range(std::string(op) + ": ids[" + std::to_string(b) + ", " + std::to_string(t) +
                            "] = " + std::to_string(id) + " is outside [0, " + std::to_string(vocab) + ")");
  }
  return id;
}

// Positions count from 0 whatever the encoding.
inline void check_offset(const char* op, std::int64_t offset) {
  if (offset < 0) {
    throw std::out_of_range(std::string(op) + ": position offset " + std::to_string(offset) + " is negative");
  }
}

// A learned position must have a row in pos_table [max_len, d].
inline void check_position(const char* op, std::int64_t position, std::int64_t max_len) {
  if (position >= max_len) {
    throw std::out_of_range(std::string(op) + ": position " + std::to_string(position) + " is outside [0, " +
                            std::to_string(max_len) + ") of pos_table");
  }
}

// pos_table is given exactly when the positions are learned: anything else is a wiring bug.
inline void check_pos_table(const char* op, const char* name, const Tensor* pos_table, Positional pos) {
  if (pos == Positional::learned) {
    checks::require(pos_table != nullptr, op, std::string(name) + " is required for learned positions");
  } else {
    checks::require(pos_table == nullptr, op, std::string(name) + " is only for learned positions");
  }
}

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
// An id outside [0, V) or a learned position outside [0, max_len) throws std::out_of_range.
template <class T>
void embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                       const Tensor* pos_table, std::int64_t offset, Tensor& out) {
  using namespace embedding_detail;
  constexpr const char* op = "embedding_forward";
  checks::expect_rank(op, "ids", ids, 2);
  checks::expect_rank(op, "table", table, 2);
  const std::int64_t batch = ids.dim(0), time = ids.dim(1), vocab = table.dim(0), d = table.dim(1);
  checks::expect(op, "ids", ids, {batch, time}, DType::i32, Device::cpu);
  checks::expect(op, "table", table, {vocab, d}, dtype_of<T>(), Device::cpu);
  check_pos_table(op, "pos_table", pos_table, pos);
  if (pos_table) {
    checks::expect_rank(op, "pos_table", *pos_table, 2);
    checks::expect(op, "pos_table", *pos_table, {pos_table->dim(0), d}, dtype_of<T>(), Device::cpu);
  }
  checks::expect(op, "out", out, {batch, time, d}, dtype_of<T>(), Device::cpu);
  check_offset(op, offset);
  const T scale_t = static_cast<T>(scale);
  RowVector<T> position = RowVector<T>::Zero(d);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < time; ++t) {
      const std::int64_t id = checked_id(op, ids, b, t, vocab);
      const std::int64_t p = offset + t;
      if (pos == Positional::sinusoidal) sinusoidal_position<T>(p, position);
      if (pos == Positional::learned) {
        check_position(op, p, pos_table->dim(0));
        position = ConstRow<T>(pos_table->data<T>() + p * d, d);
      }
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
  checks::expect_rank(op, "ids", ids, 2);
  checks::expect_rank(op, "dtable", dtable, 2);
  const std::int64_t batch = ids.dim(0), time = ids.dim(1), vocab = dtable.dim(0), d = dtable.dim(1);
  checks::expect(op, "ids", ids, {batch, time}, DType::i32, Device::cpu);
  checks::expect(op, "dtable", dtable, {vocab, d}, dtype_of<T>(), Device::cpu);
  checks::expect(op, "dout", dout, {batch, time, d}, dtype_of<T>(), Device::cpu);
  check_pos_table(op, "dpos_table", dpos_table, pos);
  if (dpos_table) {
    checks::expect_rank(op, "dpos_table", *dpos_table, 2);
    checks::expect(op, "dpos_table", *dpos_table, {dpos_table->dim(0), d}, dtype_of<T>(), Device::cpu);
  }
  check_offset(op, offset);
  const T scale_t = static_cast<T>(scale);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t t = 0; t < time; ++t) {
      const std::int64_t id = checked_id(op, ids, b, t, vocab);
      const ConstRow<T> g(dout.data<T>() + (b * time + t) * d, d);
      Row<T>(dtable.data<T>() + id * d, d) += scale_t * g;
      if (dpos_table) {
        const std::int64_t p = offset + t;
        check_position(op, p, dpos_table->dim(0));
        Row<T>(dpos_table->data<T>() + p * d, d) += g;
      }
    }
  }
}

}  // namespace trepro::reference
