// Every backend against the float64 reference on random shapes and values: forward and backward
// of attention, linear and norm, within Check::op_vs_reference at each call's longest sum. Both
// sides read identical inputs (the tested backend's, widened exactly to float64).
#include <algorithm>
#include <cmath>

#include "conformance/properties/attention_case.h"
#include "conformance/properties/property_support.h"
#include "conformance/support/backend_fixture.h"

namespace trepro::testing {
namespace {

class CrossBackendPropertyTest : public BackendTest {
 protected:
  void SetUp() override {
    if (backend().name() == reference().name()) GTEST_SKIP() << "the float64 reference is the ground truth";
  }
  Tensor on_reference(const Tensor& x) { return same_values_on(reference(), backend(), x); }
};

TEST_P(CrossBackendPropertyTest, AttentionAgreesWithReference) {
  Backend& b = backend();
  Backend& ref = reference();
  check_property(200, [&] {
    const AttentionCase c = draw_attention_case({});
    const AttentionInputs in = attention_inputs(b, c);
    const AttentionInputs rin = copy_inputs(ref, b, in);
    const AttentionOutputs out = run_attention(b, c, in);
    const AttentionOutputs rout = run_attention(ref, c, rin);
    const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), std::max({c.tq, c.tk, c.dk, c.dv}));
    rc_require(all_close("out", b, out.out, ref, rout.out, tol));
    rc_require(all_close("lse", b, out.lse, ref, rout.lse, tol));

    const Tensor dout = random_tensor(b, out.out.shape(), c.seed + 3);
    auto backward = [&](Backend& on, const AttentionInputs& i, const AttentionOutputs& o, const Tensor& dy) {
      std::vector<Tensor> grads = {on.empty(i.q.shape(), on.dtype()), on.empty(i.k.shape(), on.dtype()),
                                   on.empty(i.v.shape(), on.dtype())};
      on.attention_backward(i.q, i.k, i.v, static_cast<int>(c.heads), i.padding_or_null(), c.causal,
                            c.scale(), DropoutSpec{}, o.out, o.lse, dy, grads[0], grads[1], grads[2]);
      return grads;
    };
    const std::vector<Tensor> grads = backward(b, in, out, dout);
    // The reference backward reads the reference forward's out and lse: each side is consistent.
    const std::vector<Tensor> expected = backward(ref, rin, rout, on_reference(dout));
    rc_require(all_close("dq", b, grads[0], ref, expected[0], tol));
    rc_require(all_close("dk", b, grads[1], ref, expected[1], tol));
    rc_require(all_close("dv", b, grads[2], ref, expected[2], tol));
  });
}

TEST_P(CrossBackendPropertyTest, LinearAgreesWithReference) {
  Backend& b = backend();
  Backend& ref = reference();
  check_property(200, [&] {
    const auto n = *rc::gen::inRange<std::int64_t>(1, 17);
    const auto k = *rc::gen::inRange<std::int64_t>(1, 65);
    const auto m = *rc::gen::inRange<std::int64_t>(1, 33);
    const Activation act =
        *rc::gen::element(Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh);
    const bool bias = *rc::gen::arbitrary<bool>();
    const std::uint32_t seed = *rc::gen::arbitrary<std::uint32_t>();
    const Tensor x = random_tensor(b, {n, k}, seed), w = random_tensor(b, {m, k}, seed + 1);
    const Tensor bvec = random_tensor(b, {m}, seed + 2), dy = random_tensor(b, {n, m}, seed + 3);
    const Tensor rx = on_reference(x), rw = on_reference(w), rb = on_reference(bvec);
    const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), std::max({n, k, m}));

    Tensor y = b.empty({n, m}, b.dtype()), pre = b.empty({n, m}, b.dtype());
    Tensor ry = ref.empty({n, m}, ref.dtype()), rpre = ref.empty({n, m}, ref.dtype());
    b.linear_forward(x, w, bias ? &bvec : nullptr, act, y, act == Activation::none ? nullptr : &pre);
    ref.linear_forward(rx, rw, bias ? &rb : nullptr, act, ry, act == Activation::none ? nullptr : &rpre);
    rc_require(all_close("y", b, y, ref, ry, tol));
    if (act == Activation::relu) {
      // relu' jumps at 0: a pre-activation within rounding distance of 0 may fall on either side.
      const Tensor host = ref.download(rpre);
      for (std::int64_t i = 0; i < host.numel(); ++i) {
        RC_PRE(std::abs(host.at(i)) > tol.atol + tol.rtol * std::abs(host.at(i)));
      }
    }

    Tensor dx = b.empty({n, k}, b.dtype()), dw = b.zeros({m, k}, b.dtype()), db = b.zeros({m}, b.dtype());
    Tensor rdx = ref.empty({n, k}, ref.dtype()), rdw = ref.zeros({m, k}, ref.dtype()),
           rdb = ref.zeros({m}, ref.dtype());
    b.linear_backward(x, w, act == Activation::none ? nullptr : &pre, act, dy, &dx, dw, bias ? &db : nullptr);
    ref.linear_backward(rx, rw, act == Activation::none ? nullptr : &rpre, act, on_reference(dy), &rdx, rdw,
                        bias ? &rdb : nullptr);
    rc_require(all_close("dx", b, dx, ref, rdx, tol));
    rc_require(all_close("dw", b, dw, ref, rdw, tol));
    rc_require(all_close("db", b, db, ref, rdb, tol));
  });
}

// Rows drawn with a spread >= kMinNormSpread (see property_support.h).
TEST_P(CrossBackendPropertyTest, NormAgreesWithReference) {
  Backend& b = backend();
  Backend& ref = reference();
  check_property(200, [&] {
    const NormKind kind = *rc::gen::element(NormKind::layer, NormKind::rms);
    const auto n = *rc::gen::inRange<std::int64_t>(1, 9);
    const auto d = *rc::gen::inRange<std::int64_t>(2, 65);
    const std::uint32_t seed = *rc::gen::arbitrary<std::uint32_t>();
    const Tensor x = random_tensor(b, {n, d}, seed);
    RC_PRE(rows_well_spread(b.download(x), kind));
    const Tensor gamma = random_tensor(b, {d}, seed + 1, 0.5, 1.5), beta = random_tensor(b, {d}, seed + 2);
    const Tensor dy = random_tensor(b, {n, d}, seed + 3);
    const Tensor rx = on_reference(x), rgamma = on_reference(gamma), rbeta = on_reference(beta);
    const Tolerance tol = tolerance(Check::op_vs_reference, b.dtype(), std::max(n, d));
    const bool layer = kind == NormKind::layer;

    Tensor y = b.empty({n, d}, b.dtype()), mean = b.empty({n}, b.dtype()), rstd = b.empty({n}, b.dtype());
    Tensor ry = ref.empty({n, d}, ref.dtype()), rmean = ref.empty({n}, ref.dtype()),
           rrstd = ref.empty({n}, ref.dtype());
    b.norm_forward(kind, x, gamma, layer ? &beta : nullptr, 1e-5, y, mean, rstd);
    ref.norm_forward(kind, rx, rgamma, layer ? &rbeta : nullptr, 1e-5, ry, rmean, rrstd);
    rc_require(all_close("y", b, y, ref, ry, tol));
    rc_require(all_close("mean", b, mean, ref, rmean, tol));
    rc_require(all_close("rstd", b, rstd, ref, rrstd, tol));

    Tensor dx = b.empty({n, d}, b.dtype()), dgamma = b.zeros({d}, b.dtype()), dbeta = b.zeros({d}, b.dtype());
    Tensor rdx = ref.empty({n, d}, ref.dtype()), rdgamma = ref.zeros({d}, ref.dtype()),
           rdbeta = ref.zeros({d}, ref.dtype());
    b.norm_backward(kind, x, gamma, mean, rstd, dy, dx, dgamma, layer ? &dbeta : nullptr);
    ref.norm_backward(kind, rx, rgamma, rmean, rrstd, on_reference(dy), rdx, rdgamma,
                      layer ? &rdbeta : nullptr);
    rc_require(all_close("dx", b, dx, ref, rdx, tol));
    rc_require(all_close("dgamma", b, dgamma, ref, rdgamma, tol));
    rc_require(all_close("dbeta", b, dbeta, ref, rdbeta, tol));
  });
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(CrossBackendPropertyTest);

}  // namespace
}  // namespace trepro::testing
