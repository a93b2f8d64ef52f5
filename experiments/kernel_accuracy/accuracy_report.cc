#include "experiments/kernel_accuracy/accuracy_report.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <memory>
#include <sstream>

#include "experiments/kernel_accuracy/bf16_emulation.h"
#include "experiments/kernel_accuracy/kernel_errors.h"
#include "model/transformer.h"
#include "registry/registry.h"

namespace trepro::kernel_accuracy {
namespace {

constexpr const char* kEmulated = "bf16-emulated";

// The tolerance the op's conformance test holds an output to (tolerances.h): op_vs_reference in
// the backend's dtype, or bf16_tolerance for the bf16 rows (linear only).
testing::Tolerance output_tolerance(const Backend& backend, const std::string& precision, const CaseOutput& output) {
  if (precision == "float32") return testing::tolerance(testing::Check::op_vs_reference, backend.dtype(), output.accumulation);
  return testing::bf16_tolerance(testing::Check::op_vs_reference, output.accumulation);
}

// Appends a row per case of `op_filter` (every op when empty), labelled with `precision`. An
// output of an op x direction the backend does not provide (Backend::provides) is "not provided":
// what computed it was another backend's.
void compare_ops(Backend& backend, Backend& reference, const std::string& precision, const std::string& op_filter,
                 nlohmann::json& ops) {
  for (const KernelCase& c : kernel_cases()) {
    if (!op_filter.empty() && c.op != op_filter) continue;
    TwinTensors twins(backend, reference);
    c.inputs(twins);
    c.run(backend, twins.side(false));
    c.run(reference, twins.side(true));
    nlohmann::json outputs;
    for (const CaseOutput& output : c.outputs) {
      if (!backend.provides(output.op)) {
        outputs[output.name] = {{"verdict", "not_provided"}};
        continue;
      }
      outputs[output.name] = compare(backend.download(twins.side(false).at(output.name)),
                                     reference.download(twins.side(true).at(output.name)),
                                     output_tolerance(backend, precision, output))
                                 .to_json();
    }
    ops.push_back({{"op", c.op}, {"shape", c.shape}, {"precision", precision}, {"outputs", outputs}});
  }
}

// A 2+2-layer model of width 256 (8 heads), dropout off, on the same weights (the backend's,
// rounded to its dtype, copied into the reference) and the same batch.
nlohmann::json compare_model(Backend& backend, Backend& reference) {
  ModelConfig config;
  config.vocab_size = 1000;
  config.d_model = 256;
  config.heads = 8;
  config.encoder_layers = 2;
  config.decoder_layers = 2;
  config.d_ff = 1024;
  config.dropout = 0.0;
  Transformer fast(config, backend), exact(config, reference);
  fast.initialize(1);
  for (Parameter& p : exact.parameters().all()) {
    const Tensor value = reference.upload(backend.download(fast.parameters().at(p.spec.name).value));
    std::memcpy(p.value.data<double>(), value.data<double>(), static_cast<std::size_t>(value.numel()) * sizeof(double));
  }
  Batch batch{Tensor::empty({4, 48}, DType::i32), Tensor::empty({4, 40}, DType::i32), Tensor::empty({4, 40}, DType::i32)};
  for (std::int64_t i = 0; i < batch.src.numel(); ++i) batch.src.set(i, i % 48 >= 44 ? 0 : 1 + (i * 7919) % 999);
  for (std::int64_t i = 0; i < batch.tgt.numel(); ++i) {
    batch.tgt.set(i, 1 + (i * 104729) % 999);
    batch.labels.set(i, i % 40 >= 36 ? 0 : 1 + (i * 1299709) % 999);
  }
  const Tensor logits = fast.forward(batch), logits_exact = exact.forward(batch);
  const double loss = fast.loss(batch.labels, 0.1, SmoothingForm::uniform);
  const double loss_exact = exact.loss(batch.labels, 0.1, SmoothingForm::uniform);
  fast.backward();
  exact.backward();
  ErrorStats loss_error, gradients;
  loss_error.add(loss, loss_exact, 0.0);
  // One floor for every gradient, from the largest of them all: some are exactly 0 in exact
  // arithmetic (the key bias: softmax ignores a constant added to every score) and are only
  // rounding noise on both sides.
  double largest = 0.0;
  for (const Parameter& p : exact.parameters().all()) largest = std::max(largest, max_magnitude(reference.download(p.grad)));
  for (const Parameter& p : exact.parameters().all()) {
    gradients.merge(compare(backend.download(fast.parameters().at(p.spec.name).grad), reference.download(p.grad), 1e-3 * largest));
  }
  return {{"config", "encoder_decoder 2+2 layers, d_model 256, 8 heads, d_ff 1024, V 1000, Post-LN, relu, sinusoidal, "
                     "tied, dropout 0; batch 4 x (48 source, 40 target) with padding"},
          {"logits", compare(backend.download(logits), reference.download(logits_exact)).to_json()},
          {"loss", loss_error.to_json()},
          {"gradients", gradients.to_json()}};
}

std::string number(double x) {
  std::ostringstream s;
  s << std::setprecision(3) << x;
  return s.str();
}

}  // namespace

std::string accuracy_markdown(const nlohmann::json& report) {
  std::ostringstream s;
  s << "# Kernel accuracy: " << report["backend"].get<std::string>() << " vs reference-f64\n\n"
    << "Generated by `trepro compare-kernels`; ulp = float32 spacing at the reference value; relative\n"
    << "errors and ulps are taken at max(|reference|, 1e-3 max |reference| of the tensor).\n"
    << "Precision " << report["precision"].get<std::string>() << ": the backend as measured. Precision " << kEmulated
    << ": " << report["bf16_emulation"].get<std::string>() << "\n\n"
    << "Tolerance: the conformance suite's for the op (conformance/support/tolerances.cc, atol + rtol |expected|\n"
    << "at the output's accumulation length); ratio = the worst error / allowed, pass when <= 1. The whole model\n"
    << "has no verdict here: the suite checks models on tiny configurations (model_vs_reference_test.cc).\n\n"
    << "| op | shape | precision | output | max abs | max rel | mean ulp | max ulp | tolerance (atol, rtol) | ratio | verdict |\n"
    << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  const auto row = [&](const std::string& op, const std::string& shape, const std::string& precision,
                       const std::string& output, const nlohmann::json& e) {
    s << "| " << op << " | " << shape << " | " << precision << " | " << output << " | ";
    if (e.value("verdict", "") == "not_provided") {
      s << "| | | | | | not provided |\n";
      return;
    }
    s << number(e["max_abs"]) << " | " << number(e["max_rel"]) << " | " << number(e["mean_ulp"]) << " | "
      << number(e["max_ulp"]) << " | ";
    if (e.contains("tolerance")) {
      s << number(e["tolerance"]["atol"]) << ", " << number(e["tolerance"]["rtol"]) << " | "
        << (e["ratio"].is_number() ? number(e["ratio"]) : std::string("inf")) << " | " << e["verdict"].get<std::string>();
    } else {
      s << " | | ";
    }
    s << " |\n";
  };
  for (const auto& op : report["ops"]) {
    for (const auto& [name, e] : op["outputs"].items()) row(op["op"], op["shape"], op["precision"], name, e);
  }
  for (const auto& [key, precision] : {std::pair{"model", report["precision"].get<std::string>()},
                                       std::pair{"model_bf16_emulated", std::string(kEmulated)}}) {
    for (const char* what : {"logits", "loss", "gradients"}) row("model", "2+2 layers d256", precision, what, report[key][what]);
  }
  return s.str();
}

nlohmann::json accuracy_report(Backend& backend, const std::string& precision) {
  std::unique_ptr<Backend> reference = make_reference_backend(DType::f64);
  std::unique_ptr<Backend> host = make_backend("cpu");
  const std::string host_name = host->name();
  std::unique_ptr<Backend> emulated = make_bf16_emulation(std::move(host));
  nlohmann::json report = {{"backend", backend.name()},
                           {"dtype", std::string(dtype_name(backend.dtype()))},
                           {"precision", precision},
                           {"reference", reference->name()},
                           {"bf16_emulation", "the linear layers' GEMM operands rounded to bfloat16 (the cuda "
                                              "kernels' float_to_bf16) and multiplied in float32 on " +
                                                  host_name + ", as the cuda backend's bf16 mode"}};
  report["ops"] = nlohmann::json::array();
  compare_ops(backend, *reference, precision, "", report["ops"]);
  compare_ops(*emulated, *reference, kEmulated, "linear", report["ops"]);
  report["model"] = compare_model(backend, *reference);
  report["model_bf16_emulated"] = compare_model(*emulated, *reference);
  return report;
}

}  // namespace trepro::kernel_accuracy
