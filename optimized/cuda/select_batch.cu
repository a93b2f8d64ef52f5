// select_batch: out[i] = x[indices[i]] along the first dimension (beam reordering). The few
// indices are checked on the host (a bad one is reported by value), then one copy per row.

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/cuda_call.h"

namespace trepro::cuda {

void CudaBackend::select_batch(const Tensor& x, const Tensor& indices, Tensor& out) {
  constexpr const char* op = "select_batch";
  checks::select_batch_dims(DType::f32, Device::cuda, x, indices, out);
  const std::vector<std::int32_t> sources = download_indices(indices, op);
  checks::select_batch_values(sources.data(), indices.dim(0), x.dim(0));
  const std::size_t row_bytes = x.dim(0) == 0 ? 0 : x.nbytes() / static_cast<std::size_t>(x.dim(0));
  for (std::size_t i = 0; i < sources.size(); ++i) {
    check_cuda(cudaMemcpyAsync(out.raw() + i * row_bytes, x.raw() + sources[i] * row_bytes, row_bytes,
                               cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpyAsync(row)", op);
  }
}

}  // namespace trepro::cuda
