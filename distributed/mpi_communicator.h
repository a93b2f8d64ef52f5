// The MPI engine (OpenMPI from Debian): host buffers, MPI_COMM_WORLD. Constructing it
// initializes MPI, destroying it finalizes; one per process (make_world_communicator).
#pragma once

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
  [[noreturn]] void abort(const std::string& why) override;

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace trepro
