// How one optimizer step's batches (after train.update_freq) are dealt to train.replicas = W
// virtual shards, and the shards to the N ranks of the job: batch j goes to shard j mod W, and
// rank r computes the W / N consecutive shards from r * W / N. The plan is a function over the
// step's batch list, so it composes with any data source. A batch's dropout masks are keyed by
// its index j in the step (model/context.h), never by the rank, so they do not depend on N.
#pragma once

#include <cstdint>
#include <vector>

namespace trepro {

class ShardPlan {
 public:
  // Throws naming train.replicas when `ranks` does not divide it.
  ShardPlan(std::int64_t replicas, int ranks, int rank);

  std::int64_t replicas() const { return replicas_; }
  int ranks() const { return ranks_; }
  std::int64_t shards_per_rank() const { return replicas_ / ranks_; }
  std::int64_t first_shard() const { return rank_ * shards_per_rank(); }  // this rank's
  int rank_of_batch(std::int64_t batch) const { return static_cast<int>(batch % replicas_ / shards_per_rank()); }
  // The indices of shard `shard`'s batches among a step's `batch_count`, ascending: the order
  // in which its gradient is accumulated.
  std::vector<std::int64_t> batches_of_shard(std::int64_t shard, std::int64_t batch_count) const;

 private:
  std::int64_t replicas_;
  int ranks_;
  int rank_;
};

}  // namespace trepro
