// The ranks of a data-parallel job and the collectives training needs, over a real engine: MPI
// for CPU ranks (mpi_communicator.h), NCCL for GPU ranks (nccl_communicator.h), or one process
// alone (single_process_communicator.h, the default: no MPI at run time).
//
// Buffers live where the engine works (memory()): host memory for MPI and the single process,
// the current CUDA device for NCCL. Every collective must be called by every rank, in the same
// order, with the same sizes; a failure throws CommunicatorError naming the collective.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>

#include "core/dtype.h"

namespace trepro {

struct CommunicatorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string engine() const = 0;  // "single", "mpi", "nccl"
  virtual Device memory() const = 0;

  // Sums `data` over the ranks, in place on every rank. The order of the additions is the
  // engine's and may differ with the number of ranks: training's gradients go through
  // reduce_shard_gradients (gradient_reduction.h) instead, which fixes it.
  virtual void allreduce_sum(std::span<float> data) = 0;
  // `all` gets every rank's `mine` (the same size on every rank), in rank order.
  virtual void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) = 0;
  // `send` holds size() blocks of equal size, block r for rank r; `received` gets, in rank order,
  // the block each rank sent to this one.
  virtual void all_to_all(std::span<const std::byte> send, std::span<std::byte> received) = 0;
  // Every rank's `data` becomes `root`'s.
  virtual void broadcast(std::span<std::byte> data, int root) = 0;
  virtual void barrier() = 0;
  // A barrier without the collective deadline, for the job's setup: rank 0 training the
  // vocabulary and encoding the corpus while the others wait, then theirs while it waits, takes
  // as long as the corpus needs (WMT14's 4.5M pairs: half an hour), which no deadline knows. A
  // rank that dies meanwhile still ends the job through the launcher.
  virtual void setup_barrier() = 0;
  // Ends every rank of the job now (a rank that fails must not leave the others waiting in a
  // collective). `why` is printed first, naming this rank.
  [[noreturn]] virtual void abort(const std::string& why) = 0;
};

// How long a rank waits in a collective before it ends the job: $TREPRO_COLLECTIVE_TIMEOUT_S,
// default 600 s (longer than rank 0's validations and checkpoints, during which the others
// wait). Throws CommunicatorError for a value that is not seconds > 0.
double collective_timeout_seconds();
// What a rank prints when `collective` outlasted it.
std::string collective_timeout_message(const std::string& collective, double seconds);

// "rank 1 of 4" (error messages name the rank).
inline std::string rank_name(const Communicator& comm) {
  return "rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size());
}

}  // namespace trepro
