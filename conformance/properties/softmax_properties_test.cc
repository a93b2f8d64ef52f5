// Softmax rows are probability distributions: log_softmax exponentiates to rows summing to 1,
// and so do attention weights, read off as the output for one-hot values. Large scores must
// not overflow (the max is subtracted first).
#include <cmath>

#include "conformance/properties/attention_case.h"
#include "conformance/properties/property_support.h"
#include "conformance/support/backend_fixture.h"

namespace trepro::testing {
namespace {

class SoftmaxPropertyTest : public BackendTest {};

// exp(y) summed in double: each y_v is off by ~u |y_v| and log-sum-exp by ~u (|lse| + V), with
// |x| <= 1 so |lse| <= 1 + log V: within Check::invariant at length V.
TEST_P(SoftmaxPropertyTest, LogSoftmaxRowsExponentiateToOne) {
  Backend& b = backend();
  check_property(200, [&] {
    const auto rows = *rc::gen::inRange<std::int64_t>(1, 6);
    const auto vocab = *rc::gen::inRange<std::int64_t>(1, 65);
    const Tensor x = random_tensor(b, {rows, vocab}, *rc::gen::arbitrary<std::uint32_t>());
    Tensor y = b.empty({rows, vocab}, b.dtype());
    b.log_softmax_forward(x, y);
    const Tensor host = b.download(y);
    const Tolerance tol = tolerance(Check::invariant, b.dtype(), vocab);
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0.0;
      for (std::int64_t v = 0; v < vocab; ++v) sum += std::exp(host.at(r * vocab + v));
      RC_ASSERT(std::abs(sum - 1.0) <= tol.atol + tol.rtol);
    }
  });
}

// Logits around +-10^4 overflow exp in float and double unless the row max is subtracted; every
// log-probability must come out finite and <= 0, the row's largest logit at the largest value.
TEST_P(SoftmaxPropertyTest, LogSoftmaxOfLargeLogitsIsFinite) {
  Backend& b = backend();
  check_property(100, [&] {
    const auto rows = *rc::gen::inRange<std::int64_t>(1, 4);
    const auto vocab = *rc::gen::inRange<std::int64_t>(2, 33);
    const double offset =
        static_cast<double>(*rc::gen::inRange(100, 10001)) * (*rc::gen::arbitrary<bool>() ? 1 : -1);
    const Tensor x =
        random_tensor(b, {rows, vocab}, *rc::gen::arbitrary<std::uint32_t>(), offset - 10, offset + 10);
    Tensor y = b.empty({rows, vocab}, b.dtype());
    b.log_softmax_forward(x, y);
    const Tensor hx = b.download(x), hy = b.download(y);
    for (std::int64_t r = 0; r < rows; ++r) {
      std::int64_t top = r * vocab;
      for (std::int64_t v = r * vocab; v < (r + 1) * vocab; ++v) {
        RC_ASSERT(std::isfinite(hy.at(v)));
        RC_ASSERT(hy.at(v) <= 0.0);
        if (hx.at(v) > hx.at(top)) top = v;
      }
      for (std::int64_t v = r * vocab; v < (r + 1) * vocab; ++v) RC_ASSERT(hy.at(v) <= hy.at(top));
    }
  });
}

// With v one-hot (head h's value j is e_j, Dv = Tk), out_i is query i's weight vector p_i.
// Each p_i is normalized by the sum of the very exponentials it holds, so the sum is 1 within
// Check::invariant at length Tk even for scores of +-2000 (q, k up to 32 in size); hidden keys
// weigh exactly 0 (they are not allowed, core/backend.h); a query with no visible key gets 0.
TEST_P(SoftmaxPropertyTest, AttentionWeightsAreDistributionsOverVisibleKeys) {
  Backend& b = backend();
  check_property(200, [&] {
    AttentionCase c = draw_attention_case({});
    c.dv = c.tk;
    c.magnitude = std::ldexp(1.0, *rc::gen::inRange(0, 6));
    AttentionInputs in = attention_inputs(b, c);
    Tensor one_hot = Tensor::zeros({c.batch, c.tk, c.heads * c.tk}, DType::f64);
    for (std::int64_t row = 0; row < c.batch; ++row) {
      for (std::int64_t j = 0; j < c.tk; ++j) {
        for (std::int64_t h = 0; h < c.heads; ++h)
          one_hot.set((row * c.tk + j) * c.heads * c.tk + h * c.tk + j, 1.0);
      }
    }
    in.v = b.upload(one_hot);
    const Tensor p = b.download(run_attention(b, c, in).out);
    const Tolerance tol = tolerance(Check::invariant, b.dtype(), c.tk);
    for (std::int64_t row = 0; row < c.batch; ++row) {
      for (std::int64_t h = 0; h < c.heads; ++h) {
        for (std::int64_t i = 0; i < c.tq; ++i) {
          double sum = 0.0;
          bool any_visible = false;
          for (std::int64_t j = 0; j < c.tk; ++j) {
            const double weight = p.at((row * c.tq + i) * c.heads * c.tk + h * c.tk + j);
            RC_ASSERT(weight >= 0.0);
            if (!c.visible(row, i, j)) RC_ASSERT(weight == 0.0);
            any_visible = any_visible || c.visible(row, i, j);
            sum += weight;
          }
          RC_ASSERT(std::abs(sum - (any_visible ? 1.0 : 0.0)) <= tol.atol + tol.rtol);
        }
      }
    }
  });
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(SoftmaxPropertyTest);

}  // namespace
}  // namespace trepro::testing
