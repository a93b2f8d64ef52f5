// The op x shape grid of `trepro compare-kernels`: every op of core/backend.h, forward and
// backward, at Transformer shapes (tokens x d_model 512, d_ff 2048, 8 heads of 64, sequence
// lengths up to 512, a 37,000-word vocabulary).
#include <cstdint>
#include <string>

#include "experiments/kernel_accuracy/kernel_errors.h"

namespace trepro::kernel_accuracy {
namespace {

using Tensors = std::map<std::string, Tensor>;

std::string dims(std::initializer_list<std::int64_t> values) {
  std::string s;
  for (std::int64_t v : values) s += (s.empty() ? "" : "x") + std::to_string(v);
  return s;
}

std::string activation_name(Activation act) {
  switch (act) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::gelu_tanh: return "gelu_tanh";
  }
  return "?";
}

Tensor labels_host(std::int64_t rows, std::int64_t vocab) {
  Tensor t = Tensor::empty({rows}, DType::i32);
  // Every 7th row is padding (pad id 0).
  for (std::int64_t n = 0; n < rows; ++n) t.set(n, n % 7 == 0 ? 0.0 : static_cast<double>(1 + (n * 7919) % (vocab - 1)));
  return t;
}

void add_linear(std::vector<KernelCase>& cases) {
  struct S { std::int64_t n, k, m; Activation act; };
  for (const S s : {S{256, 512, 512, Activation::none}, S{256, 512, 2048, Activation::relu},
                    S{256, 2048, 512, Activation::none}, S{64, 512, 2048, Activation::gelu}, S{64, 512, 37000, Activation::none}}) {
    cases.push_back({"linear", dims({s.n, s.k, s.m}) + " " + activation_name(s.act),
                     [s](TwinTensors& t) {
                       t.random("x", {s.n, s.k}, 1);
                       t.random("w", {s.m, s.k}, 2, -0.05, 0.05);
                       t.random("b", {s.m}, 3);
                       t.random("dy", {s.n, s.m}, 4);
                       t.empty("y", {s.n, s.m});
                       t.empty("pre", {s.n, s.m});
                       t.empty("dx", {s.n, s.k});
                       t.zeros("dw", {s.m, s.k});
                       t.zeros("db", {s.m});
                     },
                     [s](Backend& b, Tensors& t) {
                       b.linear_forward(t["x"], t["w"], &t["b"], s.act, t["y"], &t["pre"]);
                       b.linear_backward(t["x"], t["w"], &t["pre"], s.act, t["dy"], &t["dx"], t["dw"], &t["db"]);
                     },
                     {{"y", {Op::linear, Direction::forward}, s.k},
                      {"dx", {Op::linear, Direction::backward}, s.m},
                      {"dw", {Op::linear, Direction::backward}, s.n},
                      {"db", {Op::linear, Direction::backward}, s.n}}});
  }
}

void add_elementwise(std::vector<KernelCase>& cases) {
  for (Activation act : {Activation::relu, Activation::gelu, Activation::gelu_tanh}) {
    cases.push_back({"activation", "256x2048 " + activation_name(act),
                     [](TwinTensors& t) {
                       t.random("x", {256, 2048}, 1, -6.0, 6.0);
                       t.random("dy", {256, 2048}, 2);
                       t.empty("y", {256, 2048});
                       t.empty("dx", {256, 2048});
                     },
                     [act](Backend& b, Tensors& t) {
                       b.activation_forward(act, t["x"], t["y"]);
                       b.activation_backward(act, t["x"], t["dy"], t["dx"]);
                     },
                     {{"y", {Op::activation, Direction::forward}, 1},
                      {"dx", {Op::activation, Direction::backward}, 1}}});
  }
  cases.push_back({"swiglu", "256x2048",
                   [](TwinTensors& t) {
                     std::uint64_t seed = 1;
                     for (const char* n : {"gate", "up", "dy"}) t.random(n, {256, 2048}, seed++, -6.0, 6.0);
                     for (const char* n : {"y", "dgate", "dup"}) t.empty(n, {256, 2048});
                   },
                   [](Backend& b, Tensors& t) {
                     b.swiglu_forward(t["gate"], t["up"], t["y"]);
                     b.swiglu_backward(t["gate"], t["up"], t["dy"], t["dgate"], t["dup"]);
                   },
                   {{"y", {Op::swiglu, Direction::forward}, 1},
                    {"dgate", {Op::swiglu, Direction::backward}, 1},
                    {"dup", {Op::swiglu, Direction::backward}, 1}}});
  cases.push_back({"adam", "512x2048",
                   [](TwinTensors& t) {
                     t.random("param", {512, 2048}, 1);
                     t.random("grad", {512, 2048}, 2, -1e-2, 1e-2);
                     t.random("m", {512, 2048}, 3, -1e-3, 1e-3);
                     t.random("v", {512, 2048}, 4, 0.0, 1e-5);
                   },
                   [](Backend& b, Tensors& t) { b.adam_update(t["param"], t["grad"], t["m"], t["v"], 1e-3, 0.9, 0.98, 1e-9, 10); },
                   {{"param", {Op::adam, Direction::forward}, 1},
                    {"m", {Op::adam, Direction::forward}, 1},
                    {"v", {Op::adam, Direction::forward}, 1}}});
}

void add_attention(std::vector<KernelCase>& cases) {
  struct S { std::int64_t batch, tq, tk; bool causal, padded; };
  for (const S s : {S{4, 64, 64, false, true}, S{2, 256, 256, true, false}, S{1, 512, 512, true, false},
                    S{8, 1, 100, true, true}}) {
    const std::int64_t width = 8 * 64;
    cases.push_back({"attention",
                     dims({s.batch, s.tq, s.tk}) + " h8x64" + (s.causal ? " causal" : "") + (s.padded ? " padded" : ""),
                     [s, width](TwinTensors& t) {
                       t.random("q", {s.batch, s.tq, width}, 1);
                       t.random("k", {s.batch, s.tk, width}, 2);
                       t.random("v", {s.batch, s.tk, width}, 3);
                       t.random("dout", {s.batch, s.tq, width}, 4);
                       Tensor padding = Tensor::zeros({s.batch, s.tk}, DType::i32);
                       // The last row's last quarter of keys is padding.
                       if (s.padded) {
                         for (std::int64_t j = 3 * s.tk / 4; j < s.tk; ++j) padding.set((s.batch - 1) * s.tk + j, 1);
                       }
                       t.host("padding", padding);
                       t.empty("out", {s.batch, s.tq, width});
                       t.empty("lse", {s.batch, 8, s.tq});
                       t.empty("dq", {s.batch, s.tq, width});
                       t.empty("dk", {s.batch, s.tk, width});
                       t.empty("dv", {s.batch, s.tk, width});
                     },
                     [s](Backend& b, Tensors& t) {
                       b.attention_forward(t["q"], t["k"], t["v"], 8, &t["padding"], s.causal, 0.125, {}, t["out"], t["lse"]);
                       b.attention_backward(t["q"], t["k"], t["v"], 8, &t["padding"], s.causal, 0.125, {}, t["out"],
                                            t["lse"], t["dout"], t["dq"], t["dk"], t["dv"]);
                     },
                     {{"out", {Op::attention, Direction::forward}, 64 + s.tk},
                      {"lse", {Op::attention, Direction::forward}, 64 + s.tk},
                      {"dq", {Op::attention, Direction::backward}, 128 + s.tq + s.tk},
                      {"dk", {Op::attention, Direction::backward}, 128 + s.tq + s.tk},
                      {"dv", {Op::attention, Direction::backward}, 128 + s.tq + s.tk}}});
  }
}

void add_norms(std::vector<KernelCase>& cases) {
  for (NormKind kind : {NormKind::layer, NormKind::rms}) {
    const bool layer = kind == NormKind::layer;
    const std::string name = layer ? "layernorm" : "rmsnorm";
    cases.push_back({"norm", "1024x512 " + name,
                     [](TwinTensors& t) {
                       t.random("x", {1024, 512}, 1, -3.0, 3.0);
                       t.random("gamma", {512}, 2, 0.5, 1.5);
                       t.random("beta", {512}, 3);
                       t.random("dy", {1024, 512}, 4);
                       for (const char* n : {"y", "dx"}) t.empty(n, {1024, 512});
                       for (const char* n : {"mean", "rstd"}) t.empty(n, {1024});
                       for (const char* n : {"dgamma", "dbeta"}) t.zeros(n, {512});
                     },
                     [kind, layer](Backend& b, Tensors& t) {
                       b.norm_forward(kind, t["x"], t["gamma"], layer ? &t["beta"] : nullptr, 1e-5, t["y"], t["mean"], t["rstd"]);
                       b.norm_backward(kind, t["x"], t["gamma"], t["mean"], t["rstd"], t["dy"], t["dx"], t["dgamma"],
                                       layer ? &t["dbeta"] : nullptr);
                     },
                     {{"y", {Op::norm, Direction::forward}, 512},
                      {"mean", {Op::norm, Direction::forward}, 512},
                      {"rstd", {Op::norm, Direction::forward}, 512},
                      {"dx", {Op::norm, Direction::backward}, 512},
                      {"dgamma", {Op::norm, Direction::backward}, 1024}}});
  }
  cases.push_back({"add_dropout_norm", "1024x512 layernorm p0.1",
                   [](TwinTensors& t) {
                     std::uint64_t seed = 4;
                     for (const char* n : {"residual", "x", "dy"}) t.random(n, {1024, 512}, seed++);
                     t.random("gamma", {512}, 2, 0.5, 1.5);
                     t.random("beta", {512}, 3);
                     for (const char* n : {"sum", "y", "dres", "dx"}) t.empty(n, {1024, 512});
                     for (const char* n : {"mean", "rstd"}) t.empty(n, {1024});
                     for (const char* n : {"dgamma", "dbeta"}) t.zeros(n, {512});
                   },
                   [](Backend& b, Tensors& t) {
                     const DropoutSpec dropout{0.1, {1, 2, 3}};
                     b.add_dropout_norm_forward(NormKind::layer, t["residual"], t["x"], dropout, t["gamma"], &t["beta"], 1e-5,
                                                t["sum"], t["y"], t["mean"], t["rstd"]);
                     b.add_dropout_norm_backward(NormKind::layer, t["sum"], t["gamma"], t["mean"], t["rstd"], dropout,
                                                 t["dy"], t["dres"], t["dx"], t["dgamma"], &t["dbeta"]);
                   },
                   {{"sum", {Op::add_dropout_norm, Direction::forward}, 1},
                    {"y", {Op::add_dropout_norm, Direction::forward}, 512},
                    {"dres", {Op::add_dropout_norm, Direction::backward}, 512},
                    {"dx", {Op::add_dropout_norm, Direction::backward}, 512},
                    {"dgamma", {Op::add_dropout_norm, Direction::backward}, 1024},
                    {"dbeta", {Op::add_dropout_norm, Direction::backward}, 1024}}});
}

void add_embedding_and_loss(std::vector<KernelCase>& cases) {
  cases.push_back({"embedding", "8x128 V37000 d512 sinusoidal",
                   [](TwinTensors& t) {
                     Tensor ids = Tensor::empty({8, 128}, DType::i32);
                     for (std::int64_t n = 0; n < ids.numel(); ++n) ids.set(n, static_cast<double>((n * 7919) % 37000));
                     t.host("ids", ids);
                     t.random("table", {37000, 512}, 1, -0.05, 0.05);
                     t.random("dout", {8, 128, 512}, 2);
                     t.empty("out", {8, 128, 512});
                     t.zeros("dtable", {37000, 512});
                   },
                   [](Backend& b, Tensors& t) {
                     b.embedding_forward(t["ids"], t["table"], 22.627416997969522, Positional::sinusoidal, nullptr, 3, t["out"]);
                     b.embedding_backward(t["ids"], t["dout"], 22.627416997969522, Positional::sinusoidal, 3, t["dtable"], nullptr);
                   },
                   {{"out", {Op::embedding, Direction::forward}, 1},
                    {"dtable", {Op::embedding, Direction::backward}, 8 * 128}}});
  cases.push_back({"rope", "8x128 h8x64 offset 100",
                   [](TwinTensors& t) {
                     t.random("x", {8, 128, 512}, 1);
                     t.empty("y", {8, 128, 512});
                     t.empty("dx", {8, 128, 512});
                   },
                   [](Backend& b, Tensors& t) {
                     b.rope_forward(t["x"], 8, 100, t["y"]);
                     b.rope_backward(t["y"], 8, 100, t["dx"]);
                   },
                   {{"y", {Op::rope, Direction::forward}, 2},
                    {"dx", {Op::rope, Direction::backward}, 2}}});
  for (std::int64_t vocab : {1000, 37000}) {
    cases.push_back({"cross_entropy", dims({256, vocab}) + " eps0.1",
                     [vocab](TwinTensors& t) {
                       t.random("logits", {256, vocab}, 1, -8.0, 8.0);
                       t.host("labels", labels_host(256, vocab));
                       t.empty("lse", {256});
                       t.empty("dlogits", {256, vocab});
                       t.empty("log_probs", {256, vocab});
                       t.empty("loss", {1});
                     },
                     [](Backend& b, Tensors& t) {
                       const double loss = b.cross_entropy_forward(t["logits"], t["labels"], 0, 0.1, SmoothingForm::uniform,
                                                                   t["lse"], nullptr);
                       b.fill(t["loss"], loss);
                       b.cross_entropy_backward(t["logits"], t["labels"], t["lse"], 0, 0.1, SmoothingForm::uniform, 1.0,
                                                t["dlogits"]);
                       b.log_softmax_forward(t["logits"], t["log_probs"]);
                     },
                     {{"loss", {Op::cross_entropy, Direction::forward}, vocab + 256},
                      {"lse", {Op::cross_entropy, Direction::forward}, vocab + 256},
                      {"dlogits", {Op::cross_entropy, Direction::backward}, vocab + 256},
                      {"log_probs", {Op::log_softmax, Direction::forward}, vocab}}});
  }
}

}  // namespace

std::vector<KernelCase> kernel_cases() {
  std::vector<KernelCase> cases;
  add_linear(cases);
  add_elementwise(cases);
  add_attention(cases);
  add_norms(cases);
  add_embedding_and_loss(cases);
  return cases;
}

}  // namespace trepro::kernel_accuracy
