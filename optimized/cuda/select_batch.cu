// select_batch: out[i] = x[indices[i]] along the first dimension (beam reordering). The few
// indices are checked on the host (a bad one is reported by value), then one copy per row.
#include <stdexcept>
#include <string>

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/cuda_call.h"

namespace trepro::cuda {

void CudaBackend::select_batch(const Tensor& x, const Tensor& indices, Tensor& out) {
  constexpr const char* op = "select_batch";
  checks::require(x.rank() >= 1, op, "x must have a batch dimension");
  checks::expect_rank(op, "indices", indices, 1);
  Shape out_shape = x.shape();
  out_shape[0] = indices.dim(0);
  checks::expect(op, "x", x, x.shape(), DType::f32, Device::cuda);
  checks::expect(op, "indices", indices, {indices.dim(0)}, DType::i32, Device::cuda);
  checks::expect(op, "out", out, out_shape, DType::f32, Device::cuda);
  const std::vector<std::int32_t> sources = download_indices(indices, op);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (sources[i] < 0 || sources[i] >= x.dim(0)) {
      throw std::out_of_range(std::string(op) + ": indices[" + std::to_string(i) + "] = " +
                              std::to_string(sources[i]) + " is outside [0, " + std::to_string(x.dim(0)) + ")");
    }
  }
  const std::size_t row_bytes = x.dim(0) == 0 ? 0 : x.nbytes() / static_cast<std::size_t>(x.dim(0));
  for (std::size_t i = 0; i < sources.size(); ++i) {
    check_cuda(cudaMemcpyAsync(out.raw() + i * row_bytes, x.raw() + sources[i] * row_bytes, row_bytes,
                               cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpyAsync(row)", op);
  }
}

}  // namespace trepro::cuda
