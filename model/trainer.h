// The training step of the paper: forward with dropout, label-smoothed loss, backward, Adam
// (model/optimizer.h) at the scheduled learning rate, with gradient accumulation and clipping.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/config.h"
#include "distributed/communicator.h"
#include "distributed/shard_plan.h"
#include "model/optimizer.h"
#include "model/transformer.h"

namespace trepro {

struct StepResult {
  std::int64_t step = 0;     // the optimizer step just taken, from 1
  double loss = 0.0;         // label-smoothed, mean over the non-pad target tokens of all batches
  double learning_rate = 0.0;
  double grad_norm = 0.0;    // L2 norm over every parameter's gradient, before clipping and the update
  std::int64_t tokens = 0;   // non-pad target tokens of all batches
};

struct NonFiniteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Trainer {
 public:
  // `comm`: the ranks of a data-parallel job (every rank constructs its Trainer and calls step
  // with the same batches); null: this process alone. Throws when its size does not divide
  // train.replicas. `gradient_comm`: the same ranks over the memory the backend keeps its
  // gradients in (NCCL for cuda, distributed/world.h); null: `comm`.
  Trainer(Transformer& model, const Config& config, Communicator* comm = nullptr,
          Communicator* gradient_comm = nullptr);

  // Zeroes the gradients, runs forward (dropout keyed by (seed, step, micro-batch 0)), loss,
  // backward and one Adam update. Throws NonFiniteError naming the step when the loss or a
  // gradient is NaN/Inf, before the parameters are touched.
  StepResult step(const Batch& batch);
  // Gradient accumulation (train.update_freq): one optimizer step over several batches. The
  // loss is normalised by the total non-pad target tokens N of all of them, so the step equals
  // one taken on their union:
  //   loss = sum_j n_j loss_j / N,   grad = sum_j (n_j / N) grad_j
  // where batch j has n_j tokens and its mean loss_j (dropout of batch j keyed by (seed, step, j)).
  // With train.clip_norm > 0 the gradient is scaled by min(1, clip_norm / |g|) before Adam.
  // With train.replicas W > 1 the batches are dealt to W shards (distributed/shard_plan.h); each
  // rank accumulates its shards' sums_j over batches in index order, the W sums are added in the
  // fixed tree of distributed/gradient_reduction.h, and every rank takes the same Adam step:
  // the weights are the same bits for any number of ranks dividing W.
  StepResult step(const std::vector<Batch>& batches);
  // The same step as one rank of a job holds it: batch j is needed only where runs_batch(j), and
  // may be absent elsewhere (a rank materializes only its shards' batches); each batch's label
  // count comes from the rank that runs it.
  StepResult step_sharded(const std::vector<std::optional<Batch>>& batches);
  // Whether this rank runs batch j of a step (distributed/shard_plan.h).
  bool runs_batch(std::int64_t j) const { return plan_.rank_of_batch(j) == comm_.rank(); }
  // For resuming: the next step() takes step `steps + 1`.
  void set_steps_done(std::int64_t steps) { steps_done_ = steps; }
  std::int64_t steps_done() const { return steps_done_; }
  Adam& optimizer() { return adam_; }

 private:
  // One shard's batches accumulated into the parameters' gradients (zeroed first); fills the
  // loss of each batch it runs into `losses`.
  // `batches`: the step's, null where this rank does not hold them.
  StepResult step_over(const std::vector<const Batch*>& batches);
  void accumulate_shard(std::int64_t shard, const std::vector<const Batch*>& batches,
                        const std::vector<std::int64_t>& labels, std::int64_t total, std::uint32_t step,
                        std::vector<double>& losses);
  // Every batch's non-pad label count, from the rank that runs it.
  std::vector<std::int64_t> label_counts(const std::vector<const Batch*>& batches);
  // Every batch's value from the rank that runs it; `mine` holds this rank's.
  template <typename T>
  std::vector<T> from_owners(const std::vector<T>& mine);
  Tensor flat_gradients();
  void set_gradients(const Tensor& flat);

  Transformer& model_;
  Config config_;
  std::unique_ptr<Communicator> own_comm_;  // the single process when none is given
  Communicator& comm_;
  Communicator& gradient_comm_;
  ShardPlan plan_;
  Adam adam_;
  std::int64_t steps_done_ = 0;
};

}  // namespace trepro
