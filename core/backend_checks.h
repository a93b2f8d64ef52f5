// Argument checks shared by every backend, so that all of them reject the same bad calls with
// the same message: "<op>: <tensor> has shape [..], expected [..]".
#pragma once

#include <string_view>

#include "core/backend.h"

namespace trepro::checks {

// Throws std::invalid_argument unless t is defined, on `device`, of `dtype`, with `shape`.
void expect(std::string_view op, std::string_view name, const Tensor& t, const Shape& shape,
            DType dtype, Device device);
// Same, for a tensor that may be null (then nothing is checked).
void expect_optional(std::string_view op, std::string_view name, const Tensor* t, const Shape& shape,
                     DType dtype, Device device);
// Throws std::invalid_argument unless t has rank `rank`.
void expect_rank(std::string_view op, std::string_view name, const Tensor& t, int rank);
// Throws std::invalid_argument with "<op>: <message>" unless `condition`.
void require(bool condition, std::string_view op, std::string_view message);

// The dims every attention op derives from q, k, v, with all checks done.
struct AttentionDims {
  std::int64_t batch, tq, tk, heads, dk, dv;
};
AttentionDims attention_dims(std::string_view op, DType dtype, Device device, const Tensor& q,
                             const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding);

// The dims of embedding_forward / embedding_backward, with every shape checked: ids [B, T]
// int32, the table [V, d] (`table_name`: "table" or "dtable"), the rows [B, T, d] ("out" or
// "dout"), and `positions` [max_len, d] ("pos_table" or "dpos_table") exactly when pos is
// learned. A negative offset throws std::out_of_range.
struct EmbeddingDims {
  std::int64_t batch, time, vocab, d;
};
EmbeddingDims embedding_dims(std::string_view op, DType dtype, Device device, const Tensor& ids,
                             std::string_view table_name, const Tensor& table, std::string_view rows_name,
                             const Tensor& rows, std::string_view positions_name, const Tensor* positions,
                             Positional pos, std::int64_t offset);
// The values, checked before anything is written: every id (`ids`: B * T int32 on the host) in
// [0, V), the first bad one reported by (b, t) and value; then, for learned positions, the last
// position offset + T - 1 inside the table's max_len rows (reported as the first one outside).
void embedding_values(std::string_view op, const std::int32_t* ids, const EmbeddingDims& dims,
                      std::string_view positions_name, const Tensor* positions, std::int64_t offset);

}  // namespace trepro::checks
