#include "conformance/properties/attention_case.h"

#include <cmath>

#include <rapidcheck.h>

#include "conformance/support/tensor_testing.h"
#include "core/philox.h"

namespace trepro::testing {

double AttentionCase::scale() const { return 1.0 / std::sqrt(static_cast<double>(dk)); }

bool AttentionCase::visible(std::int64_t b, std::int64_t i, std::int64_t j) const {
  if (!padding.empty() && padding[static_cast<std::size_t>(b * tk + j)] != 0) return false;
  return !causal || j <= i + (tk - tq);
}

AttentionCase draw_attention_case(const AttentionDraw& draw) {
  AttentionCase c;
  c.batch = *rc::gen::inRange<std::int64_t>(1, 4);
  c.tq = *rc::gen::inRange<std::int64_t>(1, 9);
  c.tk = draw.self_attention ? c.tq : *rc::gen::inRange<std::int64_t>(1, 9);
  c.heads = *rc::gen::inRange<std::int64_t>(1, 4);
  c.dk = *rc::gen::inRange<std::int64_t>(1, 9);
  c.dv = *rc::gen::inRange<std::int64_t>(1, 9);
  c.causal = draw.causal && *rc::gen::arbitrary<bool>();
  if (draw.padding && *rc::gen::arbitrary<bool>()) {
    c.padding = *rc::gen::container<std::vector<std::int32_t>>(static_cast<std::size_t>(c.batch * c.tk),
                                                               rc::gen::inRange<std::int32_t>(0, 2));
  }
  c.seed = *rc::gen::arbitrary<std::uint32_t>();
  return c;
}

AttentionInputs attention_inputs(Backend& backend, const AttentionCase& c) {
  AttentionInputs in;
  in.q = random_tensor(backend, {c.batch, c.tq, c.heads * c.dk}, c.seed, -c.magnitude, c.magnitude);
  in.k = random_tensor(backend, {c.batch, c.tk, c.heads * c.dk}, c.seed + 1, -c.magnitude, c.magnitude);
  in.v = random_tensor(backend, {c.batch, c.tk, c.heads * c.dv}, c.seed + 2);
  if (!c.padding.empty()) {
    in.padding =
        int_tensor(backend, {c.batch, c.tk}, std::vector<double>(c.padding.begin(), c.padding.end()));
  }
  return in;
}

AttentionInputs copy_inputs(Backend& to, Backend& from, const AttentionInputs& inputs) {
  AttentionInputs out;
  out.q = to.upload(from.download(inputs.q));
  out.k = to.upload(from.download(inputs.k));
  out.v = to.upload(from.download(inputs.v));
  if (inputs.padding.defined()) out.padding = to.upload(from.download(inputs.padding));
  return out;
}

AttentionOutputs run_attention(Backend& backend, const AttentionCase& c, const AttentionInputs& inputs) {
  AttentionOutputs result;
  result.out = backend.empty({c.batch, c.tq, c.heads * c.dv}, backend.dtype());
  result.lse = backend.empty({c.batch, c.heads, c.tq}, backend.dtype());
  backend.attention_forward(inputs.q, inputs.k, inputs.v, static_cast<int>(c.heads), inputs.padding_or_null(),
                            c.causal, c.scale(), DropoutSpec{}, result.out, result.lse);
  return result;
}

Tensor with_rows_replaced(Backend& backend, const Tensor& x,
                          const std::function<bool(std::int64_t, std::int64_t)>& replace,
                          std::uint64_t seed) {
  Tensor host = backend.download(x);
  const std::int64_t rows = x.dim(0), length = x.dim(1), width = x.dim(2);
  const PhiloxKey key{seed, 0, 0x4e57};
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t t = 0; t < length; ++t) {
      if (!replace(b, t)) continue;
      for (std::int64_t i = 0; i < width; ++i) {
        const std::int64_t at = (b * length + t) * width + i;
        host.set(at, 2.0 * philox_uniform(key, static_cast<std::uint64_t>(at)) - 1.0);
      }
    }
  }
  return backend.upload(host);
}

}  // namespace trepro::testing
