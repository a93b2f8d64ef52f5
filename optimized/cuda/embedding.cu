// embedding_forward / embedding_backward. The ids (B*T int32) are checked on the host, so that
// a bad id is reported by value as the reference does. Backward is deterministic without
// atomics: the (id, position) pairs are sorted by id (CUB radix sort, stable), and one warp per
// run of equal ids sums that run's rows in order into dtable.
#include <cub/device/device_radix_sort.cuh>

#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/embedding_math.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::cuda {

namespace {

// One thread per output element (b, t, c): out = scale table[id, c] + pos(offset + t, c).
struct EmbedElement {
  const std::int32_t* ids;
  const float* table;
  const float* pos_table;  // learned only
  float scale;
  Positional pos;
  std::int64_t time, d, offset;
  float* out;
  __device__ void operator()(std::int64_t i) const {
    const std::int64_t c = i % d, row = i / d, t = row % time, p = offset + t;
    float position = 0;
    if (pos == Positional::sinusoidal) position = static_cast<float>(sinusoidal_position(p, c, d));
    if (pos == Positional::learned) position = pos_table[p * d + c];
    out[i] = scale * table[ids[row] * d + c] + position;
  }
};

// grid: warp_per_row_launch(B*T), block: 256, shared: none. Warp w takes sorted position s; only
// the warp at the start of a run of equal ids works: it sums the run's dout rows, in sorted
// (= original, the sort being stable) order, lane l over columns l, l + 32, ... and adds to
// dtable[id]. Invariant: each dtable row is written by exactly one warp.
__global__ void embedding_table_gradient(const std::int32_t* sorted_ids, const std::int32_t* sorted_rows,
                                         const float* dout, float scale, std::int64_t count, std::int64_t d,
                                         float* dtable) {
  const std::int64_t s = warp_row(blockIdx.x, threadIdx.x);
  if (s >= count || (s > 0 && sorted_ids[s] == sorted_ids[s - 1])) return;
  const std::int32_t id = sorted_ids[s];
  for (std::int64_t c = threadIdx.x % kWarpSize; c < d; c += kWarpSize) {
    float sum = 0;
    for (std::int64_t r = s; r < count && sorted_ids[r] == id; ++r) sum += dout[sorted_rows[r] * d + c];
    dtable[id * d + c] += scale * sum;
  }
}

// One thread per (t, c): dpos_table[offset + t, c] += sum_b dout[b, t, c], b in order.
struct PositionGradient {
  const float* dout;
  std::int64_t batch, time, d, offset;
  float* dpos_table;
  __device__ void operator()(std::int64_t i) const {
    const std::int64_t t = i / d, c = i % d;
    float sum = 0;
    for (std::int64_t b = 0; b < batch; ++b) sum += dout[(b * time + t) * d + c];
    dpos_table[(offset + t) * d + c] += sum;
  }
};

struct Iota {
  std::int32_t* values;
  __device__ void operator()(std::int64_t i) const { values[i] = static_cast<std::int32_t>(i); }
};

}  // namespace

void CudaBackend::embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                                    const Tensor* pos_table, std::int64_t offset, Tensor& out) {
  constexpr const char* op = "embedding_forward";
  const checks::EmbeddingDims dims = checks::embedding_dims(op, DType::f32, Device::cuda, ids, "table", table, "out",
                                                            out, "pos_table", pos_table, pos, offset);
  checks::embedding_values(op, download_indices(ids, op).data(), dims, "pos_table", pos_table, offset);
  const auto [batch, time, vocab, d] = dims;
  launch_for_each(batch * time * d,
                  EmbedElement{ids.data<std::int32_t>(), table.data<float>(), pos_table ? pos_table->data<float>() : nullptr,
                               static_cast<float>(scale), pos, time, d, offset, out.data<float>()},
                  stream_, "embed", op);
}

void CudaBackend::embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos,
                                     std::int64_t offset, Tensor& dtable, Tensor* dpos_table) {
  constexpr const char* op = "embedding_backward";
  const checks::EmbeddingDims dims = checks::embedding_dims(op, DType::f32, Device::cuda, ids, "dtable", dtable,
                                                            "dout", dout, "dpos_table", dpos_table, pos, offset);
  checks::embedding_values(op, download_indices(ids, op).data(), dims, "dpos_table", dpos_table, offset);
  const auto [batch, time, vocab, d] = dims;
  const std::int64_t count = batch * time;
  if (count == 0 || d == 0) return;

  // Sort (id, row) pairs by id: CUB's radix sort is stable, so rows of one id stay in order.
  Tensor rows = empty({count}, DType::i32), sorted_ids = empty({count}, DType::i32), sorted_rows = empty({count}, DType::i32);
  std::int32_t* row_data = rows.data<std::int32_t>();
  launch_for_each(count, Iota{row_data}, stream_, "iota", op);
  std::size_t temp_bytes = 0;
  check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, ids.data<std::int32_t>(), sorted_ids.data<std::int32_t>(),
                                             row_data, sorted_rows.data<std::int32_t>(), count, 0, 32, stream_),
             "cub::DeviceRadixSort::SortPairs(size query)", op);
  Tensor temp = scratch_bytes(temp_bytes);
  check_cuda(cub::DeviceRadixSort::SortPairs(temp.raw(), temp_bytes, ids.data<std::int32_t>(), sorted_ids.data<std::int32_t>(),
                                             row_data, sorted_rows.data<std::int32_t>(), count, 0, 32, stream_),
             "cub::DeviceRadixSort::SortPairs", op);
  const LaunchShape shape = warp_per_row_launch(count);
  embedding_table_gradient<<<grid_of(shape.grid_x), shape.block, 0, stream_>>>(
      sorted_ids.data<std::int32_t>(), sorted_rows.data<std::int32_t>(), dout.data<float>(), static_cast<float>(scale),
      count, d, dtable.data<float>());
  check_launch("embedding_table_gradient", op);
  if (dpos_table) {
    launch_for_each(time * d, PositionGradient{dout.data<float>(), batch, time, d, offset, dpos_table->data<float>()},
                    stream_, "position_gradient", op);
  }
}

}  // namespace trepro::cuda
