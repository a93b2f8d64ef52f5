// concat_time: out [B, Ta + Tb, d] = a [B, Ta, d] then b [B, Tb, d]: two strided 2D copies
// (one row of the copy per batch row), no kernel.
#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/cuda_call.h"

namespace trepro::cuda {

void CudaBackend::concat_time(const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr const char* op = "concat_time";
  const checks::ConcatTimeDims dims = checks::concat_time_dims(DType::f32, Device::cuda, a, b, out);
  const std::int64_t batch = dims.batch, ta = dims.ta, tb = dims.tb, d = dims.d;
  if (batch == 0 || d == 0) return;
  const std::size_t row = sizeof(float) * d, out_pitch = row * (ta + tb);
  if (ta > 0) {
    check_cuda(cudaMemcpy2DAsync(out.raw(), out_pitch, a.raw(), row * ta, row * ta, batch, cudaMemcpyDeviceToDevice,
                                 stream_),
               "cudaMemcpy2DAsync(a)", op);
  }
  if (tb > 0) {
    check_cuda(cudaMemcpy2DAsync(out.raw() + row * ta, out_pitch, b.raw(), row * tb, row * tb, batch,
                                 cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpy2DAsync(b)", op);
  }
}

}  // namespace trepro::cuda
