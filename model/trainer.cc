#include "model/trainer.h"

#include <cmath>
#include <span>
#include <stdexcept>
#include <string>

#include "distributed/gradient_reduction.h"
#include "distributed/single_process_communicator.h"
#include "model/schedule.h"

namespace trepro {

namespace {

std::unique_ptr<Communicator> single_unless(Communicator* given) {
  return given != nullptr ? nullptr : std::make_unique<SingleProcessCommunicator>();
}

}  // namespace

Trainer::Trainer(Transformer& model, const Config& config, Communicator* comm, Communicator* gradient_comm)
    : model_(model),
      config_(config),
      own_comm_(single_unless(comm)),
      comm_(comm != nullptr ? *comm : *own_comm_),
      gradient_comm_(gradient_comm != nullptr ? *gradient_comm : comm_),
      plan_(config.train.replicas, comm_.size(), comm_.rank()),
      adam_(model.parameters(), model.backend(), config.train.optimizer) {}

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

void Trainer::accumulate_shard(std::int64_t shard, const std::vector<const Batch*>& batches,
                               const std::vector<std::int64_t>& labels, std::int64_t total, std::uint32_t step,
                               std::vector<double>& losses) {
  Backend& backend = model_.backend();
  const TrainConfig& t = config_.train;
  model_.parameters().zero_grad(backend);
  for (const std::int64_t j : plan_.batches_of_shard(shard, static_cast<std::int64_t>(batches.size()))) {
    const Batch& batch = *batches[static_cast<std::size_t>(j)];
    // Keyed by the batch's index in the step, not by shard or rank: unique within the step, and
    // the same whichever rank runs it.
    const DropoutStream dropout{t.seed, step, static_cast<std::uint32_t>(j)};
    model_.forward(batch, true, dropout);
    const double loss = model_.loss(batch.labels, t.label_smoothing, t.label_smoothing_form);
    losses[static_cast<std::size_t>(j)] = loss;
    // A non-finite loss stops the step once every rank knows it (step() throws); an all-pad
    // batch contributes nothing.
    if (!std::isfinite(loss) || labels[static_cast<std::size_t>(j)] == 0) continue;
    // The batch's share n_j / N of the step's labels: the mean over the whole step.
    model_.backward(static_cast<double>(labels[static_cast<std::size_t>(j)]) / static_cast<double>(total));
  }
}

template <typename T>
std::vector<T> Trainer::from_owners(const std::vector<T>& mine) {
  if (comm_.size() == 1) return mine;
  const auto count = static_cast<std::int64_t>(mine.size());
  std::vector<T> every(mine.size() * static_cast<std::size_t>(comm_.size()));
  comm_.all_gather(std::as_bytes(std::span(mine)), std::as_writable_bytes(std::span(every)));
  std::vector<T> owned(mine.size());
  for (std::int64_t j = 0; j < count; ++j) {
    owned[static_cast<std::size_t>(j)] = every[static_cast<std::size_t>(plan_.rank_of_batch(j) * count + j)];
  }
  return owned;
}

std::vector<std::int64_t> Trainer::label_counts(const std::vector<const Batch*>& batches) {
  std::vector<std::int64_t> mine(batches.size(), 0);
  for (std::size_t j = 0; j < batches.size(); ++j) {
    if (!runs_batch(static_cast<std::int64_t>(j))) continue;
    if (batches[j] == nullptr) {
      throw std::invalid_argument("Trainer::step: batch " + std::to_string(j) + " of the step is run by " +
                                  rank_name(comm_) + ", which was not given it");
    }
    mine[j] = count_labels(batches[j]->labels, config_.model.pad_id);
  }
  return from_owners(mine);
}

Tensor Trainer::flat_gradients() {
  Backend& backend = model_.backend();
  Tensor flat = backend.zeros({padded_gradient_size(model_.parameters().count(), comm_.size())}, backend.dtype());
  std::int64_t offset = 0;
  for (const Parameter& p : model_.parameters().all()) {
    Tensor into = flat.rows(offset, offset + p.grad.numel()).view(p.grad.shape());
    backend.add_inplace(into, p.grad);
    offset += p.grad.numel();
  }
  return flat;
}

void Trainer::set_gradients(const Tensor& flat) {
  Backend& backend = model_.backend();
  std::int64_t offset = 0;
  for (Parameter& p : model_.parameters().all()) {
    backend.fill(p.grad, 0.0);
    backend.add_inplace(p.grad, flat.rows(offset, offset + p.grad.numel()).view(p.grad.shape()));
    offset += p.grad.numel();
  }
}

StepResult Trainer::step(const std::vector<Batch>& batches) {
  std::vector<const Batch*> held;
  for (const Batch& batch : batches) held.push_back(&batch);
  return step_over(held);
}

StepResult Trainer::step_sharded(const std::vector<std::optional<Batch>>& batches) {
  std::vector<const Batch*> held;
  for (const std::optional<Batch>& batch : batches) held.push_back(batch ? &*batch : nullptr);
  return step_over(held);
}

StepResult Trainer::step_over(const std::vector<const Batch*>& batches) {
  if (batches.empty()) throw std::invalid_argument("Trainer::step: no batches");
  Backend& backend = model_.backend();
  const TrainConfig& t = config_.train;
  StepResult result;
  result.step = steps_done_ + 1;
  const std::vector<std::int64_t> labels = label_counts(batches);
  for (const std::int64_t n : labels) result.tokens += n;
  const auto step_text = "step " + std::to_string(result.step);
  const auto batch_count = static_cast<std::int64_t>(batches.size());
  std::vector<double> losses(batches.size(), 0.0);
  std::vector<Tensor> leaves;
  for (std::int64_t shard = plan_.first_shard(); shard < plan_.first_shard() + plan_.shards_per_rank(); ++shard) {
    accumulate_shard(shard, batches, labels, result.tokens, static_cast<std::uint32_t>(result.step), losses);
    // One shard in all: its sum already is the gradient, in place.
    if (plan_.replicas() > 1) leaves.push_back(flat_gradients());
  }
  if (plan_.replicas() > 1) set_gradients(reduce_shard_gradients(backend, gradient_comm_, plan_, leaves));
  losses = from_owners(losses);
  for (std::int64_t j = 0; j < batch_count; ++j) {
    const double loss = losses[static_cast<std::size_t>(j)];
    if (!std::isfinite(loss)) {
      throw NonFiniteError(step_text + ": the loss of batch " + std::to_string(j) + " is " + std::to_string(loss));
    }
    const std::int64_t n = labels[static_cast<std::size_t>(j)];
    if (n > 0) result.loss += loss * (static_cast<double>(n) / static_cast<double>(result.tokens));
  }
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
