// The NCCL engine for the cuda backend: device buffers on the current CUDA device, one rank per
// GPU. It is set up over a host communicator (MPI: rank 0's ncclUniqueId is broadcast), which
// it keeps for barrier and abort. A collective that outlasts $TREPRO_COLLECTIVE_TIMEOUT_S, or
// that NCCL reports failed, aborts the job (collective_timeout_seconds, communicator.h). Built
// where CUDA builds (TR_WITH_NCCL).
#pragma once

#include <memory>

#include "distributed/communicator.h"

namespace trepro {

class NcclCommunicator final : public Communicator {
 public:
  // `bootstrap` must outlive this communicator.
  explicit NcclCommunicator(Communicator& bootstrap);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return bootstrap_.rank(); }
  int size() const override { return bootstrap_.size(); }
  std::string engine() const override { return "nccl"; }
  Device memory() const override { return Device::cuda; }
  void allreduce_sum(std::span<float> data) override;
  void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) override;
  void all_to_all(std::span<const std::byte> send, std::span<std::byte> received) override;
  void broadcast(std::span<std::byte> data, int root) override;
  void barrier() override;
  void setup_barrier() override;
  [[noreturn]] void abort(const std::string& why) override;

 private:
  template <class Enqueue>
  void run_collective(const char* name, Enqueue enqueue);

  struct Handles;
  Communicator& bootstrap_;
  std::unique_ptr<Handles> handles_;
  double timeout_seconds_;
};

}  // namespace trepro
