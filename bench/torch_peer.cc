#include "bench/torch_peer.h"

#include <cblas.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "bench/bench_support.h"

namespace trepro::bench {
namespace {

namespace nn = torch::nn;

// sinusoid[pos, 2i] = sin(pos / 10000^(2i/d)), sinusoid[pos, 2i+1] = cos(...), as in ours.
torch::Tensor sinusoid_table(std::int64_t positions, std::int64_t d) {
  const torch::Tensor pos = torch::arange(positions, torch::kFloat64).unsqueeze(1);
  const torch::Tensor rate = torch::exp(torch::arange(0, d, 2, torch::kFloat64) * (-std::log(10000.0) / d));
  torch::Tensor table = torch::zeros({positions, d}, torch::kFloat64);
  table.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, d, 2)}, torch::sin(pos * rate));
  table.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, d, 2)}, torch::cos(pos * rate));
  return table.to(torch::kFloat32);
}

// The stacks of torch::nn::Transformer, built by hand so that they end without a LayerNorm.
nn::AnyModule encoder_stack(const ModelConfig& m) {
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(m.d_model, m.heads).dim_feedforward(m.d_ff).dropout(m.dropout));
  layer->self_attn->options.dropout(m.attention_dropout);
  for (nn::LayerNorm* norm : {&layer->norm1, &layer->norm2}) (*norm)->options.eps(m.layer_norm_eps);
  return nn::AnyModule(nn::TransformerEncoder(nn::TransformerEncoderOptions(layer, m.encoder_layers)));
}

nn::AnyModule decoder_stack(const ModelConfig& m) {
  nn::TransformerDecoderLayer layer(
      nn::TransformerDecoderLayerOptions(m.d_model, m.heads).dim_feedforward(m.d_ff).dropout(m.dropout));
  layer->self_attn->options.dropout(m.attention_dropout);
  layer->multihead_attn->options.dropout(m.attention_dropout);
  for (nn::LayerNorm* norm : {&layer->norm1, &layer->norm2, &layer->norm3}) (*norm)->options.eps(m.layer_norm_eps);
  return nn::AnyModule(nn::TransformerDecoder(nn::TransformerDecoderOptions(layer, m.decoder_layers)));
}

struct PeerModelImpl : nn::Module {
  explicit PeerModelImpl(const ModelConfig& m)
      : scale(std::sqrt(static_cast<double>(m.d_model))),
        embed(register_module("embed", nn::Embedding(m.vocab_size, m.d_model))),
        dropout(register_module("dropout", nn::Dropout(m.dropout))),
        transformer(register_module("transformer", nn::Transformer(nn::TransformerOptions(m.d_model, m.heads)
                                                                        .dim_feedforward(m.d_ff)
                                                                        .dropout(m.dropout)
                                                                        .custom_encoder(encoder_stack(m))
                                                                        .custom_decoder(decoder_stack(m))))),
        positions(register_buffer("positions", sinusoid_table(m.max_len, m.d_model))) {}

  // src [B, S], tgt [B, T] int64 -> logits [B*T, V]
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& tgt) {
    const std::int64_t t = tgt.size(1);
    const torch::Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(t);
    const torch::Tensor h = transformer->forward(embedded(src), embedded(tgt), {}, mask);  // [T, B, d]
    return torch::matmul(h.transpose(0, 1).reshape({-1, h.size(2)}), embed->weight.t());
  }

  // [L, B, d], the time-major layout of torch::nn::Transformer.
  torch::Tensor embedded(const torch::Tensor& ids) {
    const std::int64_t length = ids.size(1);
    return dropout(embed(ids) * scale + positions.slice(0, 0, length)).transpose(0, 1);
  }

  double scale;
  nn::Embedding embed;
  nn::Dropout dropout;
  nn::Transformer transformer;
  torch::Tensor positions;
};
TORCH_MODULE(PeerModel);

torch::Tensor ids_to_torch(const Tensor& ids) {
  if (ids.shape().size() != 2) throw std::invalid_argument("torch peer: token ids must be [B, L]");
  std::vector<std::int64_t> values(static_cast<std::size_t>(ids.numel()));
  for (std::int64_t i = 0; i < ids.numel(); ++i) values[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(ids.at(i));
  return torch::tensor(values, torch::kInt64).reshape({ids.shape()[0], ids.shape()[1]});
}

void use_threads(const TorchThreads& threads) {
  at::set_num_threads(threads.intra_op);
  openblas_set_num_threads(threads.blas);
}

// Times `call` with OpenBLAS on every core and each intra-op thread count up to `cores`, and
// keeps the fastest.
template <class Call>
TorchTiming fastest(int cores, Call&& call) {
  TorchTiming best;
  for (int intra_op = 1; intra_op <= cores; ++intra_op) {
    const TorchThreads threads{intra_op, cores};
    use_threads(threads);
    const double seconds = seconds_per_call(call);
    if (best.seconds == 0.0 || seconds < best.seconds) best = {seconds, threads};
  }
  return best;
}

}  // namespace

std::string torch_version() { return std::string("libtorch ") + TORCH_VERSION + " (CPU)"; }

std::string TorchThreads::name() const {
  return "intra_op=" + std::to_string(intra_op) + ",blas=" + std::to_string(blas);
}

TorchTiming torch_forward_seconds(const Config& config, const Batch& batch, int cores) {
  torch::manual_seed(static_cast<std::uint64_t>(config.train.seed));
  PeerModel model(config.model);
  model->eval();
  const torch::Tensor src = ids_to_torch(batch.src), tgt = ids_to_torch(batch.tgt);
  return fastest(cores, [&] {
    torch::NoGradGuard no_grad;
    const torch::Tensor logits = model->forward(src, tgt);
    benchmark::DoNotOptimize(logits.data_ptr());
  });
}

TorchTiming torch_train_step_seconds(const Config& config, const Batch& batch, int cores) {
  torch::manual_seed(static_cast<std::uint64_t>(config.train.seed));
  PeerModel model(config.model);
  model->train();
  const OptimizerConfig& o = config.train.optimizer;
  torch::optim::Adam adam(model->parameters(),
                          torch::optim::AdamOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps));
  const torch::Tensor src = ids_to_torch(batch.src), tgt = ids_to_torch(batch.tgt);
  const torch::Tensor labels = ids_to_torch(batch.labels).reshape({-1});
  const auto loss_options = nn::functional::CrossEntropyFuncOptions()
                                .ignore_index(config.model.pad_id)
                                .label_smoothing(config.train.label_smoothing);
  return fastest(cores, [&] {
    adam.zero_grad();
    const torch::Tensor loss = nn::functional::cross_entropy(model->forward(src, tgt), labels, loss_options);
    loss.backward();
    adam.step();
    benchmark::DoNotOptimize(loss.item<float>());
  });
}

}  // namespace trepro::bench
