#include "core/backend_checks.h"

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

}  // namespace trepro::checks
