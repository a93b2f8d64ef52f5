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

}  // namespace trepro::checks
