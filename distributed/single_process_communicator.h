// The world of one process: every collective is a copy (or nothing), so training without a
// launcher needs no MPI at run time.
#pragma once

#include "distributed/communicator.h"

namespace trepro {

class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string engine() const override { return "single"; }
  Device memory() const override { return Device::cpu; }
  void allreduce_sum(std::span<float>) override {}
  void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) override;
  void all_to_all(std::span<const std::byte> send, std::span<std::byte> received) override;
  void broadcast(std::span<std::byte>, int root) override;
  void barrier() override {}
  void setup_barrier() override {}
  [[noreturn]] void abort(const std::string& why) override;
};

}  // namespace trepro
