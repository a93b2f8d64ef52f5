// The residual ops: add_dropout_forward (Pre-LN: out = residual + dropout(x), one dropout kernel
// with a residual) and the fused Post-LN pair, one warp-per-row kernel each way
// (norm.cu's kernels with the dropout prologue / epilogue).
#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/dropout.cuh"
#include "optimized/cuda/norm.cuh"

namespace trepro::cuda {

void CudaBackend::add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout, Tensor& out) {
  constexpr const char* op = "add_dropout_forward";
  checks::add_dropout_forward_dims(DType::f32, Device::cuda, residual, x, dropout, out);
  launch_dropout(x.data<float>(), residual.data<float>(), dropout, out.data<float>(), x.numel(), stream_, op);
}

void CudaBackend::add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x,
                                           const DropoutSpec& dropout, const Tensor& gamma, const Tensor* beta,
                                           double eps, Tensor& sum, Tensor& y, Tensor& mean, Tensor& rstd) {
  constexpr const char* op = "add_dropout_norm_forward";
  checks::add_dropout_norm_forward_dims(DType::f32, Device::cuda, kind, residual, x, dropout, gamma, beta, eps, sum, y,
                                        mean, rstd);
  const NormPrologue prologue{residual.data<float>(), sum.data<float>(), dropout};
  launch_norm_forward(kind, x.data<float>(), prologue, gamma.data<float>(), beta ? beta->data<float>() : nullptr,
                      static_cast<float>(eps), y.data<float>(), mean.data<float>(), rstd.data<float>(), sum.dim(0),
                      sum.dim(1), stream_, op);
}

void CudaBackend::add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                                            const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy,
                                            Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta) {
  constexpr const char* op = "add_dropout_norm_backward";
  checks::add_dropout_norm_backward_dims(DType::f32, Device::cuda, kind, sum, gamma, mean, rstd, dropout, dy, dresidual,
                                         dx, dgamma, dbeta);
  const NormEpilogue epilogue{dx.data<float>(), dropout};
  launch_norm_backward(kind, sum.data<float>(), gamma.data<float>(), mean.data<float>(), rstd.data<float>(),
                       dy.data<float>(), dresidual.data<float>(), epilogue, dgamma.data<float>(),
                       dbeta ? dbeta->data<float>() : nullptr, sum.dim(0), sum.dim(1), stream_, op);
}

}  // namespace trepro::cuda
