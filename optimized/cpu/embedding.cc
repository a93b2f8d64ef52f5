// Embedding + positions of the optimized CPU backend (core/backend.h). Forward: every id and
// position is checked before anything is written; the sinusoidal rows are computed once per
// call per time step (in double, rounded once, exactly the reference's values) and shared by
// the batch. Backward scatters into the table split by column blocks, each column adding the
// tokens in order, so repeated ids never race and the sums do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/backend_checks.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/cpu/embedding.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "optimized/cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// out = scale * row + position (position may be null: rope adds none).
void embed_row(const float* row, const float* position, float scale, float* out, std::size_t d) {
  const auto s = hn::Set(FloatTag(), scale);
  if (position != nullptr) {
    map_vectors<2, 1>(d, {row, position}, {out}, [&](const FloatVec* v, FloatVec* y) { y[0] = hn::MulAdd(s, v[0], v[1]); });
  } else {
    map_vectors<1, 1>(d, {row}, {out}, [&](const FloatVec* v, FloatVec* y) { y[0] = hn::Mul(s, v[0]); });
  }
}

// acc += scale * g over n floats.
void accumulate_row(float* acc, const float* g, float scale, std::size_t n) {
  const auto s = hn::Set(FloatTag(), scale);
  map_vectors<2, 1>(n, {acc, g}, {acc}, [&](const FloatVec* v, FloatVec* y) { y[0] = hn::MulAdd(s, v[1], v[0]); });
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::cpu {

HWY_EXPORT(embed_row);
HWY_EXPORT(accumulate_row);

namespace {

// PE(offset + t) for t < time, [time, d], exactly the reference's sinusoidal_position values.
void sinusoidal_rows(const CpuContext& ctx, std::int64_t offset, std::int64_t time, std::int64_t d, float* rows) {
  ctx.pool.parallel_for(0, time, std::max<std::int64_t>(1, 512 / std::max<std::int64_t>(d, 1)),
                        [&](std::int64_t lo, std::int64_t hi) {
                          for (std::int64_t t = lo; t < hi; ++t) {
                            const auto position = static_cast<double>(offset + t);
                            float* row = rows + t * d;
                            for (std::int64_t i = 0; 2 * i < d; ++i) {
                              const double angle = position / std::pow(10000.0, static_cast<double>(2 * i) / d);
                              row[2 * i] = static_cast<float>(std::sin(angle));
                              if (2 * i + 1 < d) row[2 * i + 1] = static_cast<float>(std::cos(angle));
                            }
                          }
                        });
}

}  // namespace

void CpuBackend::embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                                   const Tensor* pos_table, std::int64_t offset, Tensor& out) {
  constexpr const char* op = "embedding_forward";
  const checks::EmbeddingDims dims = checks::embedding_dims(op, DType::f32, Device::cpu, ids, "table", table, "out", out,
                                                            "pos_table", pos_table, pos, offset);
  checks::embedding_values(op, ids.data<std::int32_t>(), dims, "pos_table", pos_table, offset);
  const auto [batch, time, vocab, d] = dims;

  const float* positions = nullptr;  // row t at positions + t * d
  if (pos == Positional::sinusoidal) {
    float* rows = context_.workspace.floats(0, Slot::op_scratch, static_cast<std::size_t>(time * d));
    sinusoidal_rows(context_, offset, time, d, rows);
    positions = rows;
  } else if (pos == Positional::learned) {
    positions = pos_table->data<float>() + offset * d;
  }
  const auto kernel = for_target(HWY_DISPATCH_TABLE(embed_row), context_.target);
  const std::int32_t* id = ids.data<std::int32_t>();
  context_.pool.parallel_for(0, batch * time, std::max<std::int64_t>(1, 8192 / std::max<std::int64_t>(d, 1)),
                             [&](std::int64_t lo, std::int64_t hi) {
                               for (std::int64_t n = lo; n < hi; ++n) {
                                 kernel(table.data<float>() + static_cast<std::int64_t>(id[n]) * d,
                                        positions != nullptr ? positions + (n % time) * d : nullptr,
                                        static_cast<float>(scale), out.data<float>() + n * d,
                                        static_cast<std::size_t>(d));
                               }
                             });
}

void CpuBackend::embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos,
                                    std::int64_t offset, Tensor& dtable, Tensor* dpos_table) {
  constexpr const char* op = "embedding_backward";
  const checks::EmbeddingDims dims = checks::embedding_dims(op, DType::f32, Device::cpu, ids, "dtable", dtable, "dout",
                                                            dout, "dpos_table", dpos_table, pos, offset);
  checks::embedding_values(op, ids.data<std::int32_t>(), dims, "dpos_table", dpos_table, offset);
  const auto [batch, time, vocab, d] = dims;

  const auto kernel = for_target(HWY_DISPATCH_TABLE(accumulate_row), context_.target);
  const std::int32_t* id = ids.data<std::int32_t>();
  // Blocks of 64 columns: a split never cuts a vector, so every column runs the same code.
  const std::int64_t blocks = (d + 63) / 64;
  context_.pool.parallel_for(0, blocks, std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(batch * time * 64, 1)),
                             [&](std::int64_t lo, std::int64_t hi) {
                               const std::int64_t c0 = lo * 64, width = std::min(d, hi * 64) - c0;
                               for (std::int64_t n = 0; n < batch * time; ++n) {
                                 const float* g = dout.data<float>() + n * d + c0;
                                 kernel(dtable.data<float>() + static_cast<std::int64_t>(id[n]) * d + c0, g,
                                        static_cast<float>(scale), static_cast<std::size_t>(width));
                                 if (dpos_table != nullptr) {
                                   kernel(dpos_table->data<float>() + (offset + n % time) * d + c0, g, 1.0f,
                                          static_cast<std::size_t>(width));
                                 }
                               }
                             });
}

}  // namespace trepro::cpu
#endif  // HWY_ONCE
