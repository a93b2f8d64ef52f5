#include <cmath>
#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"

namespace trepro::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Small enough that ids repeat (the gradient rows must sum), d odd (the last sin has no cos).
constexpr std::int64_t kBatch = 3, kTime = 5, kVocab = 6, kWidth = 7, kMaxLen = 12, kOffset = 4;
// Any scale but 1 shows where it applies (the model uses sqrt(d_model)).
constexpr double kScale = 2.5;

std::string name_of(Positional pos) {
  switch (pos) {
    case Positional::sinusoidal:
      return "sinusoidal";
    case Positional::learned:
      return "learned";
    case Positional::rope:
      return "rope";
  }
  return "?";
}

struct Inputs {
  Tensor ids, table, pos_table;  // pos_table is defined for learned positions only
  const Tensor* positions() const { return pos_table.defined() ? &pos_table : nullptr; }
};

Inputs random_inputs(Backend& backend, Positional pos, std::uint64_t seed) {
  Inputs in{random_ids(backend, {kBatch, kTime}, seed, kVocab),
            random_tensor(backend, {kVocab, kWidth}, seed + 1), Tensor()};
  if (pos == Positional::learned) in.pos_table = random_tensor(backend, {kMaxLen, kWidth}, seed + 2);
  return in;
}

// The same values on another backend (float converts to double exactly).
Tensor copy_to(Backend& to, Backend& from, const Tensor& x) { return to.upload(from.download(x)); }
Inputs copy_to(Backend& to, Backend& from, const Inputs& in) {
  return {copy_to(to, from, in.ids), copy_to(to, from, in.table),
          in.pos_table.defined() ? copy_to(to, from, in.pos_table) : Tensor()};
}

Tensor forward(Backend& backend, Positional pos, const Inputs& in) {
  Tensor out = backend.empty({in.ids.dim(0), in.ids.dim(1), in.table.dim(1)}, backend.dtype());
  backend.embedding_forward(in.ids, in.table, kScale, pos, in.positions(), kOffset, out);
  return out;
}

struct Grads {
  Tensor dtable, dpos_table;  // dpos_table is defined for learned positions only
};

// Gradients accumulate, so they start from zeros.
Grads backward(Backend& backend, Positional pos, const Inputs& in, const Tensor& dout) {
  Grads g{backend.zeros(in.table.shape(), backend.dtype()), Tensor()};
  if (pos == Positional::learned) g.dpos_table = backend.zeros(in.pos_table.shape(), backend.dtype());
  backend.embedding_backward(in.ids, dout, kScale, pos, kOffset, g.dtable,
                             g.dpos_table.defined() ? &g.dpos_table : nullptr);
  return g;
}

class EmbeddingTest : public BackendTest {};

// Each output is scale * e + pos: a couple of roundings, no sum.
TEST_P(EmbeddingTest, ForwardMatchesReference) {
  for (const Positional pos : {Positional::sinusoidal, Positional::learned, Positional::rope}) {
    SCOPED_TRACE(name_of(pos));
    const Inputs in = random_inputs(backend(), pos, 1);
    const Tensor expected = forward(reference(), pos, copy_to(reference(), backend(), in));
    EXPECT_TRUE(all_close("out", backend(), forward(backend(), pos, in), reference(), expected,
                          tolerance(Check::op_vs_reference, backend().dtype())));
  }
}

// A table row's gradient sums the rows of dout with that id: at most B*T terms.
TEST_P(EmbeddingTest, BackwardMatchesReference) {
  for (const Positional pos : {Positional::sinusoidal, Positional::learned}) {
    SCOPED_TRACE(name_of(pos));
    const Inputs in = random_inputs(backend(), pos, 2);
    const Tensor dout = random_tensor(backend(), {kBatch, kTime, kWidth}, 3);
    const Grads actual = backward(backend(), pos, in, dout);
    const Grads expected = backward(reference(), pos, copy_to(reference(), backend(), in),
                                    copy_to(reference(), backend(), dout));
    const Tolerance tol = tolerance(Check::op_vs_reference, backend().dtype(), kBatch * kTime);
    EXPECT_TRUE(all_close("dtable", backend(), actual.dtable, reference(), expected.dtable, tol));
    if (pos == Positional::learned) {
      EXPECT_TRUE(
          all_close("dpos_table", backend(), actual.dpos_table, reference(), expected.dpos_table, tol));
    }
  }
}

TEST_P(EmbeddingTest, BackwardAccumulatesIntoTheGradients) {
  Backend& b = backend();
  const Inputs in = random_inputs(b, Positional::learned, 4);
  const Tensor dout = random_tensor(b, {kBatch, kTime, kWidth}, 5);
  const Grads once = backward(b, Positional::learned, in, dout);
  Grads twice{b.zeros(in.table.shape(), b.dtype()), b.zeros(in.pos_table.shape(), b.dtype())};
  for (int call = 0; call < 2; ++call) {
    b.embedding_backward(in.ids, dout, kScale, Positional::learned, kOffset, twice.dtable, &twice.dpos_table);
  }
  b.scale_inplace(twice.dtable, 0.5);
  b.scale_inplace(twice.dpos_table, 0.5);
  const Tolerance tol = tolerance(Check::invariant, b.dtype(), kBatch * kTime);
  EXPECT_TRUE(all_close("dtable", b, twice.dtable, b, once.dtable, tol));
  EXPECT_TRUE(all_close("dpos_table", b, twice.dpos_table, b, once.dpos_table, tol));
}

// With a zero table the output is the encoding itself: PE(p, 2i) = sin(p / 10000^(2i/d)),
// PE(p, 2i+1) = cos(same), interleaved (not sin block then cos block), angle in radians; with
// d odd the last column is a sin.
TEST_P(EmbeddingTest, SinusoidalEncodingIsInterleavedSinCos) {
  Backend& b = backend();
  constexpr std::int64_t d = 7, time = 3;
  for (const std::int64_t offset : {0, 100}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    Tensor out = b.empty({1, time, d}, b.dtype());
    b.embedding_forward(int_tensor(b, {1, time}, {0, 0, 0}), b.zeros({1, d}, b.dtype()), kScale,
                        Positional::sinusoidal, nullptr, offset, out);
    const Tensor pe = b.download(out);
    const auto at = [&](std::int64_t t, std::int64_t i) { return pe.at(t * d + i); };
    const double tol = tolerance(Check::invariant, b.dtype()).atol;
    for (std::int64_t t = 0; t < time; ++t) {
      const auto p = static_cast<double>(offset + t);
      EXPECT_NEAR(at(t, 0), std::sin(p), tol) << "position " << p;
      EXPECT_NEAR(at(t, 1), std::cos(p), tol) << "position " << p;
      EXPECT_NEAR(at(t, 2), std::sin(p / std::pow(10000.0, 2.0 / d)), tol) << "position " << p;
      EXPECT_NEAR(at(t, 3), std::cos(p / std::pow(10000.0, 2.0 / d)), tol) << "position " << p;
      EXPECT_NEAR(at(t, 4), std::sin(p / std::pow(10000.0, 4.0 / d)), tol) << "position " << p;
      EXPECT_NEAR(at(t, 5), std::cos(p / std::pow(10000.0, 4.0 / d)), tol) << "position " << p;
      EXPECT_NEAR(at(t, 6), std::sin(p / std::pow(10000.0, 6.0 / d)), tol) << "position " << p;
    }
    if (offset == 0) {
      for (std::int64_t i = 0; i < d; ++i) {
        EXPECT_EQ(at(0, i), i % 2 == 0 ? 0.0 : 1.0) << "PE(0) column " << i;
      }
      EXPECT_NEAR(at(1, 0), std::sin(1.0), tol);
      EXPECT_NEAR(at(1, 1), std::cos(1.0), tol);
    }
  }
}

// Learned: scale * table[id] + pos_table[offset + t]; rope: scale * table[id] alone.
TEST_P(EmbeddingTest, LearnedAddsItsRowAndRopeAddsNothing) {
  Backend& b = backend();
  for (const Positional pos : {Positional::learned, Positional::rope}) {
    SCOPED_TRACE(name_of(pos));
    const Inputs in = random_inputs(b, pos, 6);
    const Tensor out = b.download(forward(b, pos, in));
    const Tensor ids = b.download(in.ids), table = b.download(in.table);
    const Tensor pos_table = pos == Positional::learned ? b.download(in.pos_table) : Tensor();
    const Tolerance tol = tolerance(Check::invariant, b.dtype());
    for (std::int64_t n = 0; n < kBatch * kTime; ++n) {
      const auto id = static_cast<std::int64_t>(ids.at(n));
      const std::int64_t position = kOffset + n % kTime;
      for (std::int64_t i = 0; i < kWidth; ++i) {
        double expected = kScale * table.at(id * kWidth + i);
        if (pos == Positional::learned) expected += pos_table.at(position * kWidth + i);
        EXPECT_NEAR(out.at(n * kWidth + i), expected, tol.atol + tol.rtol * std::abs(expected))
            << "row " << n;
      }
    }
  }
}

TEST_P(EmbeddingTest, RejectsOutOfRangeIdsAndPositions) {
  Backend& b = backend();
  const Inputs in = random_inputs(b, Positional::learned, 7);
  Tensor out = b.empty({2, 3, kWidth}, b.dtype());
  const Tensor bad_id = int_tensor(b, {2, 3}, {0, 1, 2, 7, 0, 1});
  EXPECT_THAT(
      [&] { b.embedding_forward(bad_id, in.table, 1.0, Positional::rope, nullptr, 0, out); },
      ThrowsMessage<std::out_of_range>(HasSubstr("embedding_forward: ids[1, 0] = 7 is outside [0, 6)")));
  const Tensor negative_id = int_tensor(b, {2, 3}, {0, -1, 2, 3, 0, 1});
  EXPECT_THAT(
      [&] { b.embedding_forward(negative_id, in.table, 1.0, Positional::rope, nullptr, 0, out); },
      ThrowsMessage<std::out_of_range>(HasSubstr("embedding_forward: ids[0, 1] = -1 is outside [0, 6)")));
  const Tensor ids = int_tensor(b, {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_THAT([&] { b.embedding_forward(ids, in.table, 1.0, Positional::learned, &in.pos_table, 10, out); },
              ThrowsMessage<std::out_of_range>(
                  HasSubstr("embedding_forward: position 12 is outside [0, 12) of pos_table")));
  EXPECT_THAT(
      [&] { b.embedding_forward(ids, in.table, 1.0, Positional::sinusoidal, nullptr, -1, out); },
      ThrowsMessage<std::out_of_range>(HasSubstr("embedding_forward: position offset -1 is negative")));

  Tensor dtable = b.zeros(in.table.shape(), b.dtype()), dpos_table = b.zeros(in.pos_table.shape(), b.dtype());
  const Tensor dout = random_tensor(b, {2, 3, kWidth}, 8);
  EXPECT_THAT(
      [&] { b.embedding_backward(bad_id, dout, 1.0, Positional::rope, 0, dtable, nullptr); },
      ThrowsMessage<std::out_of_range>(HasSubstr("embedding_backward: ids[1, 0] = 7 is outside [0, 6)")));
  EXPECT_THAT([&] { b.embedding_backward(ids, dout, 1.0, Positional::learned, 10, dtable, &dpos_table); },
              ThrowsMessage<std::out_of_range>(
                  HasSubstr("embedding_backward: position 12 is outside [0, 12) of dpos_table")));
  // Every backend checks all ids and positions before accumulating anything.
  EXPECT_EQ(b.sum_squares(dtable), 0.0);
  EXPECT_EQ(b.sum_squares(dpos_table), 0.0);
}

TEST_P(EmbeddingTest, RejectsBadShapesNamingTheTensor) {
  Backend& b = backend();
  const Inputs in = random_inputs(b, Positional::learned, 9);
  const Tensor ids = int_tensor(b, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor out = b.empty({2, 3, kWidth}, b.dtype());
  Tensor out_wide = b.empty({2, 3, kWidth + 1}, b.dtype());
  EXPECT_THAT([&] { b.embedding_forward(ids, in.table, 1.0, Positional::rope, nullptr, 0, out_wide); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("embedding_forward: out has shape [2, 3, 8], expected [2, 3, 7]")));
  const Tensor float_ids = random_tensor(b, {2, 3}, 10);
  EXPECT_THAT([&] { b.embedding_forward(float_ids, in.table, 1.0, Positional::rope, nullptr, 0, out); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("embedding_forward: ids has dtype")));
  const Tensor narrow_pos_table = random_tensor(b, {kMaxLen, kWidth - 1}, 11);
  EXPECT_THAT(
      [&] { b.embedding_forward(ids, in.table, 1.0, Positional::learned, &narrow_pos_table, 0, out); },
      ThrowsMessage<std::invalid_argument>(
          HasSubstr("embedding_forward: pos_table has shape [12, 6], expected [12, 7]")));
  EXPECT_THAT([&] { b.embedding_forward(ids, in.table, 1.0, Positional::learned, nullptr, 0, out); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("embedding_forward: pos_table is required for learned positions")));

  Tensor dtable = b.zeros(in.table.shape(), b.dtype());
  const Tensor dout_long = random_tensor(b, {2, 4, kWidth}, 12);
  EXPECT_THAT([&] { b.embedding_backward(ids, dout_long, 1.0, Positional::rope, 0, dtable, nullptr); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("embedding_backward: dout has shape [2, 4, 7], expected [2, 3, 7]")));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(EmbeddingTest);

// Central differences of L = <r, out> for the table and the learned positions.
class EmbeddingGradientTest : public BackendTest {};

TEST_P(EmbeddingGradientTest, BackwardMatchesFiniteDifferences) {
  Backend& b = backend();
  for (const Positional pos : {Positional::sinusoidal, Positional::learned}) {
    SCOPED_TRACE(name_of(pos));
    Inputs in = random_inputs(b, pos, 12);
    const Tensor r = random_tensor(b, {kBatch, kTime, kWidth}, 13);
    const Grads g = backward(b, pos, in, r);
    const auto loss = [&] { return dot(b, r, forward(b, pos, in)); };
    EXPECT_TRUE(check_gradient("dtable", b, in.table, g.dtable, loss, 512));
    if (pos == Positional::learned) {
      EXPECT_TRUE(check_gradient("dpos_table", b, in.pos_table, g.dpos_table, loss, 512));
    }
  }
}

TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(EmbeddingGradientTest);

}  // namespace
}  // namespace trepro::testing
