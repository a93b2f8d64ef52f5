// trepro forward: the interop contract of the golden tests and outside users. Reads a config,
// weights and token ids (safetensors), writes logits, the loss and optionally every gradient.
#include <iostream>

#include "core/config.h"
#include "core/safetensors.h"
#include "core/token_ids.h"
#include "experiments/commands/backend_choice.h"
#include "experiments/commands/commands.h"
#include "experiments/training/checkpoint.h"
#include "model/transformer.h"

namespace trepro::cli {

namespace {

struct ForwardOptions {
  std::string config, weights, src, tgt, labels, out;
  bool grads = false;
  BackendChoice backend;
};

void check_inputs(const ModelConfig& model, const ForwardOptions& o) {
  const bool wants_src = model.architecture != Architecture::decoder_only;
  const bool wants_tgt = model.architecture != Architecture::encoder_only;
  const std::string arch = to_string(model.architecture);
  if (wants_src && o.src.empty()) throw std::invalid_argument("--src is required for an " + arch + " model");
  if (!wants_src && !o.src.empty()) throw std::invalid_argument("--src is not used by a decoder_only model");
  if (wants_tgt && o.tgt.empty()) throw std::invalid_argument("--tgt is required for an " + arch + " model");
  if (!wants_tgt && !o.tgt.empty()) throw std::invalid_argument("--tgt is not used by an encoder_only model");
  if (o.grads && o.labels.empty()) throw std::invalid_argument("--grads needs --labels (gradients of the loss)");
}

void run_forward(const ForwardOptions& o) {
  const Config config = load_config(o.config);
  check_inputs(config.model, o);
  std::unique_ptr<Backend> backend = o.backend.make();
  Transformer model(config.model, *backend);
  if (o.weights.empty()) {
    model.initialize(config.train.seed);
  } else {
    model.parameters().load(*backend, without_optimizer_state(read_safetensors(o.weights)), o.weights);
  }
  Batch batch{read_token_ids(o.src, "src"), read_token_ids(o.tgt, "tgt"), read_token_ids(o.labels, "labels")};
  const Tensor& positions = config.model.architecture == Architecture::encoder_only ? batch.src : batch.tgt;
  if (batch.labels.defined() && batch.labels.shape() != positions.shape()) {
    throw std::invalid_argument(o.labels + ": labels have shape " + shape_string(batch.labels.shape()) + ", expected " +
                                shape_string(positions.shape()) + " (the shape of the predicted positions)");
  }
  Tensor logits = model.forward(batch);
  std::map<std::string, Tensor> out;
  out["logits"] = backend->download(logits).view({positions.dim(0), positions.dim(1), config.model.vocab_size});
  if (batch.labels.defined()) {
    const double loss = model.loss(batch.labels, config.train.label_smoothing, config.train.label_smoothing_form);
    out["loss"] = Tensor::from_values({}, backend->dtype(), {loss});
    if (o.grads) {
      model.parameters().zero_grad(*backend);
      model.backward();
      for (auto& [name, grad] : model.parameters().grads(*backend)) out["grad." + name] = grad;
    }
  }
  write_safetensors(o.out, out,
                    {{"backend", backend->name()},
                     {"config_hash", config_hash(config)},
                     {"label_smoothing_form", to_string(config.train.label_smoothing_form)}});
}

}  // namespace

void add_forward_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "forward", "Run the model on token ids; write logits, loss and gradients",
      "trepro forward --config experiments/configs/copy_tiny.json --src src.safetensors --tgt tgt.safetensors --labels labels.safetensors --out logits.safetensors");
  auto o = std::make_shared<ForwardOptions>();
  cmd->add_option("--config", o->config, "config JSON")->required();
  cmd->add_option("--weights", o->weights, "safetensors with every parameter, or a training checkpoint (its Adam moments ignored; default: initialise from train.seed)");
  cmd->add_option("--src", o->src, "safetensors holding one int32/int64 [B, S] tensor");
  cmd->add_option("--tgt", o->tgt, "safetensors holding one int32/int64 [B, T] tensor: the decoder input");
  cmd->add_option("--labels", o->labels, "safetensors holding one int32/int64 [B, T] tensor");
  cmd->add_flag("--grads", o->grads, "also write grad.<parameter> for every parameter");
  cmd->add_option("--out", o->out, "output safetensors")->required();
  o->backend.default_is_fastest = false;
  o->backend.add_options(*cmd);
  cmd->callback([o] { run_forward(*o); });
}

}  // namespace trepro::cli
