// The attention op's masks and symmetry on random shapes: a query never reads a key it may not
// see, and self-attention without positions commutes with permuting the sequence.
//
// A hidden key weighs exactly 0 (core/backend.h: it is not allowed), so changing its key or
// value leaves every sum bitwise the same: those comparisons are exact.
#include "conformance/properties/attention_case.h"
#include "conformance/properties/property_support.h"
#include "conformance/support/backend_fixture.h"

namespace trepro::testing {
namespace {

constexpr Tolerance kExact{0.0, 0.0};

class AttentionMaskingPropertyTest : public BackendTest {};

// Changing k and v at every key after query `last`'s horizon leaves queries 0..last unchanged.
TEST_P(AttentionMaskingPropertyTest, CausalQueriesIgnoreLaterKeys) {
  Backend& b = backend();
  check_property(200, [&] {
    AttentionDraw draw;
    draw.causal = false;  // set below: the property is about the causal mask
    AttentionCase c = draw_attention_case(draw);
    c.causal = true;
    const auto last = *rc::gen::inRange<std::int64_t>(0, c.tq);
    const AttentionInputs in = attention_inputs(b, c);
    const AttentionOutputs before = run_attention(b, c, in);
    auto later = [&](std::int64_t, std::int64_t j) { return j > last + (c.tk - c.tq); };
    AttentionInputs changed = in;
    changed.k = with_rows_replaced(b, in.k, later, c.seed + 10);
    changed.v = with_rows_replaced(b, in.v, later, c.seed + 11);
    const AttentionOutputs after = run_attention(b, c, changed);
    // Queries 0..last of each batch row: the first (last + 1) rows of out, the first columns of lse.
    const Tensor out_before = b.download(before.out), out_after = b.download(after.out);
    const Tensor lse_before = b.download(before.lse), lse_after = b.download(after.lse);
    for (std::int64_t row = 0; row < c.batch; ++row) {
      for (std::int64_t i = 0; i <= last; ++i) {
        for (std::int64_t x = 0; x < c.heads * c.dv; ++x) {
          const std::int64_t at = (row * c.tq + i) * c.heads * c.dv + x;
          RC_ASSERT(out_after.at(at) == out_before.at(at));
        }
        for (std::int64_t h = 0; h < c.heads; ++h) {
          const std::int64_t at = (row * c.heads + h) * c.tq + i;
          RC_ASSERT(lse_after.at(at) == lse_before.at(at));
        }
      }
    }
  });
}

// Changing k and v at padded keys leaves every output unchanged.
TEST_P(AttentionMaskingPropertyTest, PaddedKeysAreNeverRead) {
  Backend& b = backend();
  check_property(200, [&] {
    AttentionDraw draw;
    draw.padding = false;  // drawn below: the property needs a mask
    AttentionCase c = draw_attention_case(draw);
    c.padding = *rc::gen::container<std::vector<std::int32_t>>(static_cast<std::size_t>(c.batch * c.tk),
                                                               rc::gen::inRange<std::int32_t>(0, 2));
    const AttentionInputs in = attention_inputs(b, c);
    const AttentionOutputs before = run_attention(b, c, in);
    auto padded = [&](std::int64_t row, std::int64_t j) {
      return c.padding[static_cast<std::size_t>(row * c.tk + j)] != 0;
    };
    AttentionInputs changed = in;
    changed.k = with_rows_replaced(b, in.k, padded, c.seed + 10);
    changed.v = with_rows_replaced(b, in.v, padded, c.seed + 11);
    const AttentionOutputs after = run_attention(b, c, changed);
    rc_require(all_close("out", b, after.out, b, before.out, kExact));
    rc_require(all_close("lse", b, after.lse, b, before.lse, kExact));
  });
}

// Host [B, T, W] with row t of each batch row taken from row perm[t].
Tensor permuted(Backend& backend, const Tensor& x, const std::vector<std::int64_t>& perm) {
  const Tensor host = backend.download(x);
  Tensor out = host.clone();
  const std::int64_t length = x.dim(1), width = x.numel() / (x.dim(0) * length);
  for (std::int64_t row = 0; row < x.dim(0); ++row) {
    for (std::int64_t t = 0; t < length; ++t) {
      for (std::int64_t i = 0; i < width; ++i) {
        out.set((row * length + t) * width + i,
                host.at((row * length + perm[static_cast<std::size_t>(t)]) * width + i));
      }
    }
  }
  return backend.upload(out);
}

// Self-attention without a causal mask: permuting the rows of q, k, v (and the key padding with
// them) permutes the output rows. The sums over keys run in another order: Check::invariant at
// length T; lse [B, H, T] is permuted along its last axis.
TEST_P(AttentionMaskingPropertyTest, SelfAttentionIsPermutationEquivariant) {
  Backend& b = backend();
  check_property(200, [&] {
    AttentionDraw draw;
    draw.self_attention = true;
    draw.causal = false;
    const AttentionCase c = draw_attention_case(draw);
    std::vector<std::int64_t> perm(static_cast<std::size_t>(c.tq));
    for (std::size_t t = 0; t < perm.size(); ++t) perm[t] = static_cast<std::int64_t>(t);
    // Fisher-Yates, each swap drawn (and shrunk) by RapidCheck.
    for (std::size_t t = perm.size(); t > 1; --t) {
      std::swap(perm[t - 1], perm[static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, t))]);
    }
    const AttentionInputs in = attention_inputs(b, c);
    AttentionCase pc = c;
    AttentionInputs pin;
    pin.q = permuted(b, in.q, perm);
    pin.k = permuted(b, in.k, perm);
    pin.v = permuted(b, in.v, perm);
    if (!c.padding.empty()) {
      for (std::int64_t row = 0; row < c.batch; ++row) {
        for (std::int64_t t = 0; t < c.tk; ++t) {
          pc.padding[static_cast<std::size_t>(row * c.tk + t)] =
              c.padding[static_cast<std::size_t>(row * c.tk + perm[static_cast<std::size_t>(t)])];
        }
      }
      pin.padding = int_tensor(b, {c.batch, c.tk}, std::vector<double>(pc.padding.begin(), pc.padding.end()));
    }
    const AttentionOutputs expected = run_attention(b, c, in);
    const AttentionOutputs actual = run_attention(b, pc, pin);
    const Tolerance tol = tolerance(Check::invariant, b.dtype(), c.tk);
    rc_require(all_close("out", b, actual.out, b, permuted(b, expected.out, perm), tol));
    const Tensor lse = expected.lse.view({c.batch * c.heads, c.tq, 1});
    rc_require(all_close("lse", b, actual.lse, b, permuted(b, lse, perm).view(actual.lse.shape()), tol));
  });
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(AttentionMaskingPropertyTest);

}  // namespace
}  // namespace trepro::testing
