// Op goldens: each Backend op, called directly, against PyTorch's forward and input gradients.
#include <gtest/gtest.h>

#include "conformance/golden/golden_case.h"
#include "conformance/support/backend_fixture.h"

namespace trepro::golden {
namespace {

class GoldenOpTest : public testing::BackendTest {};

Activation parse_activation(const std::string& name) {
  if (name == "none") return Activation::none;
  if (name == "relu") return Activation::relu;
  if (name == "gelu") return Activation::gelu;
  if (name == "gelu_tanh") return Activation::gelu_tanh;
  throw std::invalid_argument("unknown activation " + name);
}

// An uninitialized backend tensor shaped like expected tensor `name`.
Tensor like(Backend& b, const SafetensorsFile& f, const std::string& name) {
  return b.empty(f.tensors.at(name).shape(), b.dtype());
}
Tensor zeros_like(Backend& b, const SafetensorsFile& f, const std::string& name) {
  return b.zeros(f.tensors.at(name).shape(), b.dtype());
}

TEST_P(GoldenOpTest, Attention) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("op", "attention")) {
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const int heads = g.params().at("heads");
    const bool causal = g.params().at("causal");
    const double scale = g.params().at("scale");
    Tensor q = upload(b, f, "input.q"), k = upload(b, f, "input.k"), v = upload(b, f, "input.v");
    Tensor padding = g.params().at("key_padding") ? upload(b, f, "input.key_padding") : Tensor();
    const Tensor* key_padding = padding.defined() ? &padding : nullptr;
    Tensor out = like(b, f, "expected.out"), lse = like(b, f, "expected.lse");
    b.attention_forward(q, k, v, heads, key_padding, causal, scale, {}, out, lse);
    EXPECT_TRUE(cmp.check("expected.out", out));
    EXPECT_TRUE(cmp.check("expected.lse", lse));
    Tensor dq = like(b, f, "input.q"), dk = like(b, f, "input.k"), dv = like(b, f, "input.v");
    b.attention_backward(q, k, v, heads, key_padding, causal, scale, {}, out, lse, upload(b, f, "cotangent.out"), dq,
                         dk, dv);
    EXPECT_TRUE(cmp.check("expected.grad.q", dq));
    EXPECT_TRUE(cmp.check("expected.grad.k", dk));
    EXPECT_TRUE(cmp.check("expected.grad.v", dv));
    cmp.report();
  }
}

TEST_P(GoldenOpTest, LayerNorm) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("op", "layer_norm")) {
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const double eps = g.params().at("eps");
    Tensor x = upload(b, f, "input.x"), gamma = upload(b, f, "input.gamma"), beta = upload(b, f, "input.beta");
    Tensor y = like(b, f, "expected.y");
    Tensor mean = b.empty({x.dim(0)}, b.dtype()), rstd = b.empty({x.dim(0)}, b.dtype());
    b.norm_forward(NormKind::layer, x, gamma, &beta, eps, y, mean, rstd);
    EXPECT_TRUE(cmp.check("expected.y", y));
    Tensor dx = like(b, f, "input.x"), dgamma = zeros_like(b, f, "input.gamma"), dbeta = zeros_like(b, f, "input.beta");
    b.norm_backward(NormKind::layer, x, gamma, mean, rstd, upload(b, f, "cotangent.y"), dx, dgamma, &dbeta);
    EXPECT_TRUE(cmp.check("expected.grad.x", dx));
    EXPECT_TRUE(cmp.check("expected.grad.gamma", dgamma));
    EXPECT_TRUE(cmp.check("expected.grad.beta", dbeta));
    cmp.report();
  }
}

TEST_P(GoldenOpTest, Activation) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("op", "activation")) {
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const Activation act = parse_activation(g.params().at("activation"));
    Tensor x = upload(b, f, "input.x"), y = like(b, f, "expected.y"), dx = like(b, f, "input.x");
    b.activation_forward(act, x, y);
    b.activation_backward(act, x, upload(b, f, "cotangent.y"), dx);
    EXPECT_TRUE(cmp.check("expected.y", y));
    EXPECT_TRUE(cmp.check("expected.grad.x", dx));
    cmp.report();
  }
}

TEST_P(GoldenOpTest, Swiglu) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("op", "swiglu")) {
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    Tensor gate = upload(b, f, "input.gate"), up = upload(b, f, "input.up"), y = like(b, f, "expected.y");
    b.swiglu_forward(gate, up, y);
    Tensor dgate = like(b, f, "input.gate"), dup = like(b, f, "input.up");
    b.swiglu_backward(gate, up, upload(b, f, "cotangent.y"), dgate, dup);
    EXPECT_TRUE(cmp.check("expected.y", y));
    EXPECT_TRUE(cmp.check("expected.grad.gate", dgate));
    EXPECT_TRUE(cmp.check("expected.grad.up", dup));
    cmp.report();
  }
}

TEST_P(GoldenOpTest, Linear) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("op", "linear")) {
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const Activation act = parse_activation(g.params().at("activation"));
    Tensor x = upload(b, f, "input.x"), w = upload(b, f, "input.w"), bias = upload(b, f, "input.b");
    Tensor y = like(b, f, "expected.y"), pre = like(b, f, "expected.y");
    Tensor* pre_ptr = act == Activation::none ? nullptr : &pre;
    b.linear_forward(x, w, &bias, act, y, pre_ptr);
    EXPECT_TRUE(cmp.check("expected.y", y));
    Tensor dx = like(b, f, "input.x"), dw = zeros_like(b, f, "input.w"), db = zeros_like(b, f, "input.b");
    b.linear_backward(x, w, pre_ptr, act, upload(b, f, "cotangent.y"), &dx, dw, &db);
    EXPECT_TRUE(cmp.check("expected.grad.x", dx));
    EXPECT_TRUE(cmp.check("expected.grad.w", dw));
    EXPECT_TRUE(cmp.check("expected.grad.b", db));
    cmp.report();
  }
}

TEST_P(GoldenOpTest, CrossEntropy) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("op", "cross_entropy")) {
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const int pad = g.params().at("pad_id");
    const double eps = g.params().at("eps");
    const SmoothingForm form = g.params().at("form") == "fairseq" ? SmoothingForm::fairseq : SmoothingForm::uniform;
    Tensor logits = upload(b, f, "input.logits"), labels = upload(b, f, "input.labels");
    Tensor lse = like(b, f, "expected.lse");
    std::int64_t count = -1;
    const double loss = b.cross_entropy_forward(logits, labels, pad, eps, form, lse, &count);
    EXPECT_TRUE(cmp.check_scalar("expected.loss", loss));
    EXPECT_TRUE(cmp.check("expected.lse", lse));
    EXPECT_EQ(count, g.params().at("count").get<std::int64_t>());
    Tensor dlogits = like(b, f, "input.logits");
    b.cross_entropy_backward(logits, labels, lse, pad, eps, form, 1.0, dlogits);
    EXPECT_TRUE(cmp.check("expected.grad.logits", dlogits));
    cmp.report();
  }
}

TEST_P(GoldenOpTest, Embedding) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("op", "embedding")) {
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const bool learned = g.params().at("positional") == "learned";
    const Positional positional = learned ? Positional::learned : Positional::sinusoidal;
    const std::int64_t offset = g.params().at("offset");
    const double scale = g.params().at("scale");
    Tensor ids = upload(b, f, "input.ids"), table = upload(b, f, "input.table");
    Tensor pos_table = learned ? upload(b, f, "input.pos_table") : Tensor();
    Tensor out = like(b, f, "expected.out");
    b.embedding_forward(ids, table, scale, positional, learned ? &pos_table : nullptr, offset, out);
    EXPECT_TRUE(cmp.check("expected.out", out));
    Tensor dtable = zeros_like(b, f, "input.table");
    Tensor dpos = learned ? zeros_like(b, f, "input.pos_table") : Tensor();
    b.embedding_backward(ids, upload(b, f, "cotangent.out"), scale, positional, offset, dtable,
                         learned ? &dpos : nullptr);
    EXPECT_TRUE(cmp.check("expected.grad.table", dtable));
    if (learned) {
      EXPECT_TRUE(cmp.check("expected.grad.pos_table", dpos));
    }
    cmp.report();
  }
}

TEST_P(GoldenOpTest, Adam) {
  Backend& b = backend();
  for (const GoldenCase& g : cases("op", "adam")) {
    SCOPED_TRACE(g.label());
    const SafetensorsFile f = g.read("tensors");
    Comparison cmp(g, b, f);
    const auto& p = g.params();
    const std::vector<double> lrs = p.at("lr");
    Tensor param = upload(b, f, "input.param");
    Tensor m = zeros_like(b, f, "input.param"), v = zeros_like(b, f, "input.param");
    for (std::size_t step = 1; step <= lrs.size(); ++step) {
      const std::string s = std::to_string(step);
      b.adam_update(param, upload(b, f, "input.grad." + s), m, v, lrs[step - 1], p.at("beta1"), p.at("beta2"),
                    p.at("eps"), static_cast<std::int64_t>(step));
      EXPECT_TRUE(cmp.check("expected.param." + s, param));
    }
    EXPECT_TRUE(cmp.check("expected.m", m));
    EXPECT_TRUE(cmp.check("expected.v", v));
    cmp.report();
  }
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(GoldenOpTest);

}  // namespace
}  // namespace trepro::golden
