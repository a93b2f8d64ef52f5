// norm_forward / norm_backward (layer and RMS), warp-per-row kernels over norm_math.h, plus the
// column reduction for dgamma/dbeta. The fused residual ops (add_dropout.cu) use the same
// kernels with a dropout prologue/epilogue.

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/dropout_math.h"
#include "optimized/cuda/kernel_support.cuh"
#include "optimized/cuda/norm.cuh"
#include "optimized/cuda/norm_math.h"

namespace trepro::cuda {

namespace {

// grid: warp_per_row_launch(rows), block: 256 (8 warps), shared: none.
// Warp w of block b normalizes row n = warp_row(b, threadIdx.x); lane l owns columns l, l + 32, ...
// Invariant: a lane reads back only the sum elements it wrote itself, so the fused prologue needs
// no barrier; the row statistics are warp-uniform after each warp_sum.
__global__ void norm_forward_rows(NormKind kind, const float* x, NormPrologue prologue, const float* gamma,
                                  const float* beta, float eps, float* y, float* mean, float* rstd,
                                  std::int64_t rows, std::int64_t d) {
  const std::int64_t n = warp_row(blockIdx.x, threadIdx.x);
  if (n >= rows) return;
  const int lane = threadIdx.x % kWarpSize;
  const float* in = x + n * d;
  if (prologue.residual) {
    const float kept_scale = static_cast<float>(1 / (1 - prologue.dropout.p));
    for (std::int64_t c = lane; c < d; c += kWarpSize) {
      const auto element = static_cast<std::uint64_t>(n * d + c);
      prologue.sum[n * d + c] =
          prologue.residual[n * d + c] + in[c] * dropout_factor(prologue.dropout.key, prologue.dropout.p, kept_scale, element);
    }
    in = prologue.sum + n * d;
  }
  float partial = 0;
  for (std::int64_t c = lane; c < d; c += kWarpSize) partial += in[c];
  const float row_mean = norm_mean(kind, warp_sum(partial), d);
  partial = 0;
  for (std::int64_t c = lane; c < d; c += kWarpSize) partial += (in[c] - row_mean) * (in[c] - row_mean);
  const float row_rstd = norm_rstd(warp_sum(partial), d, eps);
  for (std::int64_t c = lane; c < d; c += kWarpSize) {
    y[n * d + c] = norm_output(in[c], row_mean, row_rstd, gamma[c], beta ? beta[c] : 0.0f);
  }
  if (lane == 0) {
    mean[n] = row_mean;
    rstd[n] = row_rstd;
  }
}

// grid: warp_per_row_launch(rows), block: 256, shared: none. Warp per row as above:
//   dx = rstd (g - avg(g) - xhat avg(g xhat)), g = dy gamma; with the epilogue also
//   dx_dropped = keep dx / (1 - p). Invariant: row n's outputs are written by its warp only.
__global__ void norm_backward_rows(NormKind kind, const float* x, const float* gamma, const float* mean,
                                   const float* rstd, const float* dy, float* dx, NormEpilogue epilogue,
                                   std::int64_t rows, std::int64_t d) {
  const std::int64_t n = warp_row(blockIdx.x, threadIdx.x);
  if (n >= rows) return;
  const int lane = threadIdx.x % kWarpSize;
  const float m = mean[n], r = rstd[n];
  float sum_g = 0, sum_g_xhat = 0;
  for (std::int64_t c = lane; c < d; c += kWarpSize) {
    const float g = norm_scaled_gradient(dy[n * d + c], gamma[c]);
    sum_g += g;
    sum_g_xhat += g * (x[n * d + c] - m) * r;
  }
  const float avg_g = kind == NormKind::layer ? warp_sum(sum_g) / d : 0.0f;
  const float avg_g_xhat = warp_sum(sum_g_xhat) / d;
  const float kept_scale = static_cast<float>(1 / (1 - epilogue.dropout.p));
  for (std::int64_t c = lane; c < d; c += kWarpSize) {
    const float g = norm_scaled_gradient(dy[n * d + c], gamma[c]), xhat = (x[n * d + c] - m) * r;
    const float value = norm_input_gradient(g, xhat, avg_g, avg_g_xhat, r);
    dx[n * d + c] = value;
    if (epilogue.dx_dropped) {
      const auto element = static_cast<std::uint64_t>(n * d + c);
      epilogue.dx_dropped[n * d + c] = value * dropout_factor(epilogue.dropout.key, epilogue.dropout.p, kept_scale, element);
    }
  }
}

// One thread per column c (grid-stride over d): dgamma[c] += sum_n dy xhat, dbeta[c] += sum_n dy,
// summed over rows in order, so the result is deterministic. Coalesced: neighbouring threads
// read neighbouring columns of the same row.
struct NormParamGradients {
  const float* x;
  const float* mean;
  const float* rstd;
  const float* dy;
  float* dgamma;
  float* dbeta;  // null for rms
  std::int64_t rows, d;
  __device__ void operator()(std::int64_t c) const {
    float sum_dy_xhat = 0, sum_dy = 0;
    for (std::int64_t n = 0; n < rows; ++n) {
      const float g = dy[n * d + c];
      sum_dy_xhat += g * (x[n * d + c] - mean[n]) * rstd[n];
      sum_dy += g;
    }
    dgamma[c] += sum_dy_xhat;
    if (dbeta) dbeta[c] += sum_dy;
  }
};

}  // namespace

void launch_norm_forward(NormKind kind, const float* x, const NormPrologue& prologue, const float* gamma,
                         const float* beta, float eps, float* y, float* mean, float* rstd, std::int64_t rows,
                         std::int64_t d, cudaStream_t stream, const char* op) {
  const LaunchShape shape = warp_per_row_launch(rows);
  if (shape.grid_x == 0) return;
  norm_forward_rows<<<grid_of(shape.grid_x), shape.block, 0, stream>>>(kind, x, prologue, gamma, beta, eps, y, mean,
                                                                       rstd, rows, d);
  check_launch("norm_forward_rows", op);
}

void launch_norm_backward(NormKind kind, const float* x, const float* gamma, const float* mean, const float* rstd,
                          const float* dy, float* dx, const NormEpilogue& epilogue, float* dgamma, float* dbeta,
                          std::int64_t rows, std::int64_t d, cudaStream_t stream, const char* op) {
  const LaunchShape shape = warp_per_row_launch(rows);
  if (shape.grid_x == 0) return;
  norm_backward_rows<<<grid_of(shape.grid_x), shape.block, 0, stream>>>(kind, x, gamma, mean, rstd, dy, dx, epilogue,
                                                                        rows, d);
  check_launch("norm_backward_rows", op);
  launch_for_each(d, NormParamGradients{x, mean, rstd, dy, dgamma, dbeta, rows, d}, stream, "norm_param_gradients", op);
}

void CudaBackend::norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps,
                               Tensor& y, Tensor& mean, Tensor& rstd) {
  constexpr const char* op = "norm_forward";
  checks::norm_forward_dims(op, DType::f32, Device::cuda, kind, "x", x, gamma, beta, eps, y, mean, rstd);
  launch_norm_forward(kind, x.data<float>(), NormPrologue{}, gamma.data<float>(), beta ? beta->data<float>() : nullptr,
                      static_cast<float>(eps), y.data<float>(), mean.data<float>(), rstd.data<float>(), x.dim(0),
                      x.dim(1), stream_, op);
}

void CudaBackend::norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                const Tensor& rstd, const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  constexpr const char* op = "norm_backward";
  checks::norm_backward_dims(op, DType::f32, Device::cuda, kind, "x", x, gamma, mean, rstd, dy, "dx", dx, dgamma,
                             dbeta);
  launch_norm_backward(kind, x.data<float>(), gamma.data<float>(), mean.data<float>(), rstd.data<float>(),
                       dy.data<float>(), dx.data<float>(), NormEpilogue{}, dgamma.data<float>(),
                       dbeta ? dbeta->data<float>() : nullptr, x.dim(0), x.dim(1), stream_, op);
}

}  // namespace trepro::cuda
