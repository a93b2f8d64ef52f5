// cross_entropy_forward / cross_entropy_backward: label-smoothed cross-entropy fused with the
// softmax over the vocabulary (one read of the logits each way), over cross_entropy_math.h.
// The N labels are checked and counted on the host (a bad label is reported by value, and C is
// needed on the host anyway for the returned loss).
#include <cub/device/device_reduce.cuh>

#include "core/backend_checks.h"
#include "optimized/cuda/cross_entropy_math.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/softmax_rows.cuh"

namespace trepro::cuda {

namespace {

// grid: block_per_row_launch(N), block: 256, shared: 96 bytes static (block_row_statistics).
// Block n owns row n: lse[n], and row_loss[n] (0 for a pad row). Invariant: labels are in range
// (checked on the host before the launch).
__global__ void cross_entropy_rows(const float* logits, const std::int32_t* labels, int pad_id, std::int64_t vocab,
                                   SmoothedTarget q, float* lse, float* row_loss) {
  const std::int64_t n = blockIdx.x;
  const float* row = logits + n * vocab;
  const RowStatistics stats = block_row_statistics(row, vocab);
  if (threadIdx.x != 0) return;
  const float row_lse = softmax_lse(stats.softmax);
  lse[n] = row_lse;
  const std::int32_t label = labels[n];
  row_loss[n] = label == pad_id ? 0.0f : cross_entropy_row_loss(row_lse, row[label], stats.sum, vocab, q);
}

// One thread per logit (grid-stride over N * V).
struct CrossEntropyGradient {
  const float* logits;
  const std::int32_t* labels;
  const float* lse;
  int pad_id;
  std::int64_t vocab;
  SmoothedTarget q;
  float g;
  float* dlogits;
  __device__ void operator()(std::int64_t i) const {
    const std::int64_t n = i / vocab, v = i % vocab;
    const std::int32_t label = labels[n];
    dlogits[i] = label == pad_id ? 0.0f : cross_entropy_gradient(logits[i], lse[n], v == label, q, g);
  }
};

struct ToDouble {
  __device__ double operator()(float x) const { return x; }
};
struct Plus {
  __device__ double operator()(double a, double b) const { return a + b; }
};

}  // namespace

double CudaBackend::cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps,
                                          SmoothingForm form, Tensor& lse, std::int64_t* count) {
  constexpr const char* op = "cross_entropy_forward";
  const checks::CrossEntropyDims dims =
      checks::cross_entropy_forward_dims(DType::f32, Device::cuda, logits, labels, eps, form, lse);
  const std::int64_t rows = dims.rows, vocab = dims.vocab;
  const std::int64_t c = checks::cross_entropy_values(op, download_indices(labels, op).data(), dims, pad_id);
  if (count) *count = c;
  if (rows == 0) return 0.0;
  Tensor row_loss = empty({rows}, DType::f32);
  const LaunchShape shape = block_per_row_launch(rows);
  cross_entropy_rows<<<grid_of(shape.grid_x), shape.block, 0, stream_>>>(
      logits.data<float>(), labels.data<std::int32_t>(), pad_id, vocab, smoothed_target(eps, form, vocab),
      lse.data<float>(), row_loss.data<float>());
  check_launch("cross_entropy_rows", op);
  // The sum over rows in double (CUB), then divided by C on the host.
  Tensor total = scratch_bytes(sizeof(double));
  auto* out = reinterpret_cast<double*>(total.raw());
  std::size_t temp_bytes = 0;
  check_cuda(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, row_loss.data<float>(), out, rows, Plus{},
                                                ToDouble{}, 0.0, stream_),
             "cub::DeviceReduce::TransformReduce(size query)", op);
  Tensor temp = scratch_bytes(temp_bytes);
  check_cuda(cub::DeviceReduce::TransformReduce(temp.raw(), temp_bytes, row_loss.data<float>(), out, rows, Plus{},
                                                ToDouble{}, 0.0, stream_),
             "cub::DeviceReduce::TransformReduce", op);
  double loss_sum = 0;
  check_cuda(cudaMemcpyAsync(&loss_sum, out, sizeof(double), cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync(loss to host)", op);
  synchronize(op);
  return c == 0 ? 0.0 : loss_sum / static_cast<double>(c);
}

void CudaBackend::cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id,
                                         double eps, SmoothingForm form, double dloss, Tensor& dlogits) {
  constexpr const char* op = "cross_entropy_backward";
  const checks::CrossEntropyDims dims =
      checks::cross_entropy_backward_dims(DType::f32, Device::cuda, logits, labels, lse, eps, form, dlogits);
  const std::int64_t rows = dims.rows, vocab = dims.vocab;
  const std::int64_t c = checks::cross_entropy_values(op, download_indices(labels, op).data(), dims, pad_id);
  if (c == 0) {
    check_cuda(cudaMemsetAsync(dlogits.raw(), 0, dlogits.nbytes(), stream_), "cudaMemsetAsync(dlogits)", op);
    return;
  }
  const CrossEntropyGradient gradient{logits.data<float>(), labels.data<std::int32_t>(), lse.data<float>(), pad_id,
                                      vocab, smoothed_target(eps, form, vocab),
                                      static_cast<float>(dloss / static_cast<double>(c)), dlogits.data<float>()};
  launch_for_each(rows * vocab, gradient, stream_, "cross_entropy_gradient", op);
}

}  // namespace trepro::cuda
