#include "distributed/shard_plan.h"

#include <stdexcept>
#include <string>

namespace trepro {

ShardPlan::ShardPlan(std::int64_t replicas, int ranks, int rank) : replicas_(replicas), ranks_(ranks), rank_(rank) {
  if (replicas < 1 || ranks < 1 || replicas % ranks != 0) {
    throw std::invalid_argument("train.replicas " + std::to_string(replicas) + " is not a multiple of the " +
                                std::to_string(ranks) + " ranks of this job (the ranks must divide the virtual shards)");
  }
  if (rank < 0 || rank >= ranks) throw std::invalid_argument("ShardPlan: rank " + std::to_string(rank) + " of " + std::to_string(ranks));
}

std::vector<std::int64_t> ShardPlan::batches_of_shard(std::int64_t shard, std::int64_t batch_count) const {
  std::vector<std::int64_t> batches;
  for (std::int64_t j = shard; j < batch_count; j += replicas_) batches.push_back(j);
  return batches;
}

}  // namespace trepro
