// The deterministic sum of a step's W shard gradients over the ranks: every element of the
// result is FixedTreeSum over the W leaves in shard order, whatever the number of ranks N.
// Engines' own allreduce adds in an order that depends on N, so it is built from collectives
// that move bytes only: each rank sends element block k of each of its leaves to rank k
// (all_to_all), rank k sums its block of all W leaves in the fixed tree, and the summed blocks
// are gathered (all_gather). Traffic per rank is that of a ring allreduce when each rank holds
// one shard.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend.h"
#include "distributed/communicator.h"
#include "distributed/shard_plan.h"

namespace trepro {

// Elements of a flat gradient of `elements`, rounded up so that it splits into `ranks` blocks.
std::int64_t padded_gradient_size(std::int64_t elements, int ranks);

// `leaves`: this rank's shards' flat gradients (tensors of `backend`, padded_gradient_size
// elements each), in shard order from plan.first_shard(); they are overwritten. Returns the sum
// of all W, the same on every rank.
Tensor reduce_shard_gradients(Backend& backend, Communicator& comm, const ShardPlan& plan, std::vector<Tensor>& leaves);

}  // namespace trepro
