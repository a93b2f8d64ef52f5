#include "distributed/gradient_reduction.h"

#include <span>
#include <stdexcept>
#include <string>

#include "distributed/fixed_tree_sum.h"

namespace trepro {

namespace {

std::span<std::byte> bytes(Tensor& t) { return {t.raw(), t.nbytes()}; }
std::span<const std::byte> bytes(const Tensor& t) { return {t.raw(), t.nbytes()}; }

}  // namespace

std::int64_t padded_gradient_size(std::int64_t elements, int ranks) { return (elements + ranks - 1) / ranks * ranks; }

Tensor reduce_shard_gradients(Backend& backend, Communicator& comm, const ShardPlan& plan, std::vector<Tensor>& leaves) {
  const int ranks = comm.size();
  if (ranks != plan.ranks() || static_cast<std::int64_t>(leaves.size()) != plan.shards_per_rank()) {
    throw std::invalid_argument("reduce_shard_gradients: " + std::to_string(leaves.size()) + " leaves on " +
                                rank_name(comm) + ", expected " + std::to_string(plan.shards_per_rank()));
  }
  if (ranks > 1 && comm.memory() != backend.device()) {
    throw std::invalid_argument("data-parallel training: the " + comm.engine() + " engine works on " +
                                std::string(device_name(comm.memory())) + " memory but backend " + backend.name() +
                                " keeps its gradients on " + std::string(device_name(backend.device())));
  }
  const std::int64_t padded = leaves.front().numel();
  const std::int64_t block = padded / ranks;
  // received[l] block r: rank r's leaf l (shard r * shards_per_rank + l), this rank's elements.
  std::vector<Tensor> received;
  if (ranks == 1) {
    received = leaves;
  } else {
    for (Tensor& leaf : leaves) {
      Tensor into = backend.empty({padded}, backend.dtype());
      comm.all_to_all(bytes(leaf), bytes(into));
      received.push_back(into);
    }
  }
  auto merge = [&backend](Tensor& sum, const Tensor& x) { backend.add_inplace(sum, x); };
  FixedTreeSum<Tensor, decltype(merge)> tree(merge);
  for (std::int64_t shard = 0; shard < plan.replicas(); ++shard) {
    const std::int64_t rank = shard / plan.shards_per_rank();
    tree.push(received[static_cast<std::size_t>(shard % plan.shards_per_rank())].rows(rank * block, (rank + 1) * block));
  }
  const Tensor mine = tree.finish();
  if (ranks == 1) return mine;
  Tensor sum = backend.empty({padded}, backend.dtype());
  comm.all_gather(bytes(mine), bytes(sum));
  return sum;
}

}  // namespace trepro
