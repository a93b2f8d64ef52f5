// linear of the optimized CPU backend (core/backend.h): the packed GEMM of gemm.cc with the bias
// and the activation fused into its epilogue; backward is act' (vectorized), two GEMMs reading
// dpre, w and x in place through strides, and the bias gradient as column sums.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"
#include "optimized/cpu/gemm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/linear.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/activation-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// dpre = act'(pre) dy over n elements.
void activation_gradient_kernel(Activation act, const float* pre, const float* dy, float* dpre, std::size_t n) {
  with_activation(act, [&]<Activation kAct>() {
    map_vectors<2, 1>(n, {pre, dy}, {dpre}, [](const FloatVec* x, FloatVec* y) {
      y[0] = hn::Mul(activation_derivative<kAct>(FloatTag(), x[0]), x[1]);
    });
  });
}

// acc[c] += sum over rows r (in order) of x[r * ld + c], for c < cols.
void column_sums_kernel(const float* x, std::size_t rows, std::size_t cols, std::size_t ld, float* acc) {
  const FloatTag d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t c = 0;
  for (; c + lanes <= cols; c += lanes) {
    auto sum = hn::Zero(d);
    for (std::size_t r = 0; r < rows; ++r) sum = hn::Add(sum, hn::LoadU(d, x + r * ld + c));
    hn::StoreU(hn::Add(hn::LoadU(d, acc + c), sum), d, acc + c);
  }
  for (; c < cols; ++c) {
    float sum = 0.0f;
    for (std::size_t r = 0; r < rows; ++r) sum += x[r * ld + c];
    acc[c] += sum;
  }
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(activation_gradient_kernel);
HWY_EXPORT(column_sums_kernel);

void CpuBackend::linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                                Tensor* pre) {
  const checks::LinearDims dims = checks::linear_forward_dims(DType::f32, Device::cpu, x, w, b, act, y, pre);
  const std::int64_t n = dims.n, k = dims.k, m = dims.m;
  // y = x w^T: w [M, K] read as B [K, M] with unit row stride.
  const GemmEpilogue epilogue{b != nullptr ? b->data<float>() : nullptr, act,
                              act != Activation::none ? pre->data<float>() : nullptr};
  gemm(context_, n, m, k, {x.data<float>(), k, 1}, {w.data<float>(), 1, k}, y.data<float>(), m, false, epilogue,
       packed_weights_.find(context_.target, w));
}

void CpuBackend::linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                                 Tensor* dx, Tensor& dw, Tensor* db) {
  const checks::LinearDims dims = checks::linear_backward_dims(DType::f32, Device::cpu, x, w, pre, act, dy, dx, dw, db);
  const std::int64_t n = dims.n, k = dims.k, m = dims.m;

  // Without an activation dpre is dy itself; otherwise it lives in the reused workspace.
  const float* dpre = dy.data<float>();
  if (act != Activation::none) {
    float* buffer = context_.workspace.floats(0, Slot::linear_dpre, static_cast<std::size_t>(n * m));
    const auto kernel = for_target(HWY_DISPATCH_TABLE(activation_gradient_kernel), context_.target);
    context_.pool.parallel_for(0, n, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(m, 1)),
                               [&](std::int64_t lo, std::int64_t hi) {
                                 kernel(act, pre->data<float>() + lo * m, dy.data<float>() + lo * m, buffer + lo * m,
                                        static_cast<std::size_t>((hi - lo) * m));
                               });
    dpre = buffer;
  }
  // dx [N, K] = dpre [N, M] w [M, K]
  if (dx != nullptr) gemm(context_, n, k, m, {dpre, m, 1}, {w.data<float>(), k, 1}, dx->data<float>(), k, false, {});
  // dw [M, K] += dpre^T [M, N] x [N, K]
  gemm(context_, m, k, n, {dpre, 1, m}, {x.data<float>(), k, 1}, dw.data<float>(), k, true, {});
  if (db != nullptr) {
    // Column blocks per thread; each column sums its rows in order, whatever the split.
    const auto kernel = for_target(HWY_DISPATCH_TABLE(column_sums_kernel), context_.target);
    const std::int64_t blocks = (m + 63) / 64;
    context_.pool.parallel_for(0, blocks, std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(n, 1)),
                               [&](std::int64_t lo, std::int64_t hi) {
                                 const std::int64_t c0 = lo * 64, c1 = std::min(m, hi * 64);
                                 kernel(dpre + c0, static_cast<std::size_t>(n), static_cast<std::size_t>(c1 - c0),
                                        static_cast<std::size_t>(m), db->data<float>() + c0);
                               });
  }
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
