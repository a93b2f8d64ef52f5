// Attention backward against central differences of the forward on random shapes and masks
// (float64 backends): for the scalar L = <w, out> with random w, dL/dq, dL/dk, dL/dv are what
// attention_backward returns for dout = w.
#include "conformance/properties/attention_case.h"
#include "conformance/properties/property_support.h"
#include "conformance/support/backend_fixture.h"

namespace trepro::testing {
namespace {

// Elements checked per input tensor: each costs two forwards.
constexpr std::int64_t kElements = 12;

class AttentionGradientPropertyTest : public BackendTest {};

TEST_P(AttentionGradientPropertyTest, BackwardMatchesCentralDifferences) {
  Backend& b = backend();
  check_property(100, [&] {
    const AttentionCase c = draw_attention_case({});
    AttentionInputs in = attention_inputs(b, c);
    const AttentionOutputs out = run_attention(b, c, in);
    const Tensor w = random_tensor(b, out.out.shape(), c.seed + 3);
    Tensor dq = b.empty(in.q.shape(), b.dtype()), dk = b.empty(in.k.shape(), b.dtype());
    Tensor dv = b.empty(in.v.shape(), b.dtype());
    b.attention_backward(in.q, in.k, in.v, static_cast<int>(c.heads), in.padding_or_null(), c.causal,
                         c.scale(), DropoutSpec{}, out.out, out.lse, w, dq, dk, dv);
    // Reads the current q, k, v: check_gradient perturbs them in place.
    auto loss = [&] { return dot(b, run_attention(b, c, in).out, w); };
    rc_require(check_gradient("dq", b, in.q, b.download(dq), loss, kElements));
    rc_require(check_gradient("dk", b, in.k, b.download(dk), loss, kElements));
    rc_require(check_gradient("dv", b, in.v, b.download(dv), loss, kElements));
  });
}

TR_INSTANTIATE_FOR_DOUBLE_BACKENDS(AttentionGradientPropertyTest);

}  // namespace
}  // namespace trepro::testing
