#include "model/trainer.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "model/schedule.h"

namespace trepro {

Trainer::Trainer(Transformer& model, const Config& config)
    : model_(model), config_(config), adam_(model.parameters(), model.backend(), config.train.optimizer) {}

StepResult Trainer::step(const Batch& batch) { return step(std::vector<Batch>{batch}); }

namespace {

// Non-pad labels of a host tensor (known before any forward, so every batch's share n_j / N of
// the accumulated gradient is known when its backward runs).
std::int64_t count_labels(const Tensor& labels, std::int64_t pad_id) {
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < labels.numel(); ++i) count += static_cast<std::int64_t>(labels.at(i)) != pad_id;
  return count;
}

}  // namespace

StepResult Trainer::step(const std::vector<Batch>& batches) {
  if (batches.empty()) throw std::invalid_argument("Trainer::step: no batches");
  Backend& backend = model_.backend();
  const ModelConfig& m = config_.model;
  const TrainConfig& t = config_.train;
  StepResult result;
  result.step = steps_done_ + 1;
  for (const Batch& batch : batches) result.tokens += count_labels(batch.labels, m.pad_id);
  const auto step_text = "step " + std::to_string(result.step);
  model_.parameters().zero_grad(backend);
  double weighted_loss = 0.0;
  for (std::size_t j = 0; j < batches.size(); ++j) {
    const Batch& batch = batches[j];
    const DropoutStream dropout{t.seed, static_cast<std::uint32_t>(result.step), static_cast<std::uint32_t>(j)};
    const Tensor logits = model_.forward(batch, true, dropout);
    const Tensor labels = model_.upload_ids(batch.labels, "labels");
    const Tensor flat_labels = labels.view({labels.numel()});
    Tensor lse = backend.empty({logits.dim(0)}, backend.dtype());
    std::int64_t tokens = 0;
    const double loss = backend.cross_entropy_forward(logits, flat_labels, static_cast<int>(m.pad_id),
                                                      t.label_smoothing, t.label_smoothing_form, lse, &tokens);
    if (!std::isfinite(loss)) {
      throw NonFiniteError(step_text + ": the loss of batch " + std::to_string(j) + " is " + std::to_string(loss));
    }
    if (tokens == 0) continue;  // an all-pad batch contributes nothing
    const double share = static_cast<double>(tokens) / static_cast<double>(result.tokens);
    weighted_loss += loss * share;
    Tensor dlogits = backend.empty(logits.shape(), backend.dtype());
    backend.cross_entropy_backward(logits, flat_labels, lse, static_cast<int>(m.pad_id), t.label_smoothing,
                                   t.label_smoothing_form, share, dlogits);
    model_.backward_from_logits(dlogits);
  }
  result.loss = weighted_loss;
  double squares = 0.0;
  for (const Parameter& p : model_.parameters().all()) {
    if (!backend.all_finite(p.grad)) {
      throw NonFiniteError(step_text + ": the gradient of " + p.spec.name + " is not finite");
    }
    squares += backend.sum_squares(p.grad);
  }
  result.grad_norm = std::sqrt(squares);
  if (t.clip_norm > 0 && result.grad_norm > t.clip_norm) {
    const double factor = t.clip_norm / result.grad_norm;
    for (Parameter& p : model_.parameters().all()) backend.scale_inplace(p.grad, factor);
  }
  result.learning_rate = learning_rate(config_, result.step);
  adam_.update(result.learning_rate, result.step);
  steps_done_ = result.step;
  return result;
}

}  // namespace trepro
