// The MPI engine (OpenMPI from Debian): host buffers, MPI_COMM_WORLD. Constructing it
// initializes MPI, destroying it finalizes; one per process (make_world_communicator).
// Collectives are started non-blocking and polled against a deadline: a rank that hangs (or is
// stopped) ends the job after $TREPRO_COLLECTIVE_TIMEOUT_S seconds (default 600, longer than
// rank 0's validations and checkpoints, during which the others wait) instead of never.
#pragma once

#include <mpi.h>

#include "distributed/communicator.h"

namespace trepro {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string engine() const override { return "mpi"; }
  Device memory() const override { return Device::cpu; }
  void allreduce_sum(std::span<float> data) override;
  void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) override;
  void all_to_all(std::span<const std::byte> send, std::span<std::byte> received) override;
  void broadcast(std::span<std::byte> data, int root) override;
  void barrier() override;
  void setup_barrier() override;
  [[noreturn]] void abort(const std::string& why) override;

 private:
  // Polls `request` until it completes; aborts the job, naming the collective, at the deadline.
  void wait(MPI_Request& request, const char* collective);

  double timeout_seconds_ = 600.0;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace trepro
