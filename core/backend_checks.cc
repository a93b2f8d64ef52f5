#include "core/backend_checks.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace trepro::checks {

void require(bool condition, std::string_view op, std::string_view message) {
  if (!condition) throw std::invalid_argument(std::string(op) + ": " + std::string(message));
}

void expect_rank(std::string_view op, std::string_view name, const Tensor& t, int rank) {
  require(t.defined(), op, std::string(name) + " is undefined");
  require(t.rank() == rank, op,
          std::string(name) + " has shape " + shape_string(t.shape()) + ", expected rank " + std::to_string(rank));
}

void expect(std::string_view op, std::string_view name, const Tensor& t, const Shape& shape, DType dtype,
            Device device) {
  require(t.defined(), op, std::string(name) + " is undefined");
  require(t.shape() == shape, op,
          std::string(name) + " has shape " + shape_string(t.shape()) + ", expected " + shape_string(shape));
  require(t.dtype() == dtype, op,
          std::string(name) + " has dtype " + std::string(dtype_name(t.dtype())) + ", expected " +
              std::string(dtype_name(dtype)));
  require(t.device() == device, op,
          std::string(name) + " is on " + std::string(device_name(t.device())) + ", expected " +
              std::string(device_name(device)));
}

void expect_optional(std::string_view op, std::string_view name, const Tensor* t, const Shape& shape,
                     DType dtype, Device device) {
  if (t) expect(op, name, *t, shape, dtype, device);
}

AttentionDims attention_dims(std::string_view op, DType dtype, Device device, const Tensor& q, const Tensor& k,
                             const Tensor& v, int heads, const Tensor* key_padding) {
  expect_rank(op, "q", q, 3);
  expect_rank(op, "k", k, 3);
  expect_rank(op, "v", v, 3);
  require(heads > 0, op, "heads must be positive, got " + std::to_string(heads));
  AttentionDims d{q.dim(0), q.dim(1), k.dim(1), heads, 0, 0};
  require(q.dim(2) % heads == 0, op, "q width " + std::to_string(q.dim(2)) + " is not divisible by heads " + std::to_string(heads));
  require(v.dim(2) % heads == 0, op, "v width " + std::to_string(v.dim(2)) + " is not divisible by heads " + std::to_string(heads));
  d.dk = q.dim(2) / heads;
  d.dv = v.dim(2) / heads;
  expect(op, "q", q, {d.batch, d.tq, heads * d.dk}, dtype, device);
  expect(op, "k", k, {d.batch, d.tk, heads * d.dk}, dtype, device);
  expect(op, "v", v, {d.batch, d.tk, heads * d.dv}, dtype, device);
  expect_optional(op, "key_padding", key_padding, {d.batch, d.tk}, DType::i32, device);
  return d;
}

EmbeddingDims embedding_dims(std::string_view op, DType dtype, Device device, const Tensor& ids,
                             std::string_view table_name, const Tensor& table, std::string_view rows_name,
                             const Tensor& rows, std::string_view positions_name, const Tensor* positions,
                             Positional pos, std::int64_t offset) {
  expect_rank(op, "ids", ids, 2);
  expect_rank(op, table_name, table, 2);
  const EmbeddingDims dims{ids.dim(0), ids.dim(1), table.dim(0), table.dim(1)};
  expect(op, "ids", ids, {dims.batch, dims.time}, DType::i32, device);
  expect(op, table_name, table, {dims.vocab, dims.d}, dtype, device);
  expect(op, rows_name, rows, {dims.batch, dims.time, dims.d}, dtype, device);
  // The positions table is given exactly when positions are learned: anything else is wiring.
  if (pos == Positional::learned) {
    require(positions != nullptr, op, std::string(positions_name) + " is required for learned positions");
    expect_rank(op, positions_name, *positions, 2);
    expect(op, positions_name, *positions, {positions->dim(0), dims.d}, dtype, device);
  } else {
    require(positions == nullptr, op, std::string(positions_name) + " is only for learned positions");
  }
  if (offset < 0) {
    throw std::out_of_range(std::string(op) + ": position offset " + std::to_string(offset) + " is negative");
  }
  return dims;
}

void embedding_values(std::string_view op, const std::int32_t* ids, const EmbeddingDims& dims,
                      std::string_view positions_name, const Tensor* positions, std::int64_t offset) {
  for (std::int64_t i = 0; i < dims.batch * dims.time; ++i) {
    if (ids[i] < 0 || ids[i] >= dims.vocab) {
      throw std::out_of_range(std::string(op) + ": ids[" + std::to_string(i / dims.time) + ", " +
                              std::to_string(i % dims.time) + "] = " + std::to_string(ids[i]) + " is outside [0, " +
                              std::to_string(dims.vocab) + ")");
    }
  }
  if (positions == nullptr || dims.batch * dims.time == 0) return;
  const std::int64_t max_len = positions->dim(0);
  if (offset + dims.time > max_len) {
    throw std::out_of_range(std::string(op) + ": position " + std::to_string(std::max(offset, max_len)) +
                            " is outside [0, " + std::to_string(max_len) + ") of " + std::string(positions_name));
  }
}

}  // namespace trepro::checks
