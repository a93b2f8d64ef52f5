#include "distributed/single_process_communicator.h"

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace trepro {

namespace {

void copy_whole(std::span<const std::byte> from, std::span<std::byte> to, const char* collective) {
  if (from.size() != to.size()) {
    throw CommunicatorError(std::string(collective) + ": " + std::to_string(from.size()) + " bytes sent but " +
                            std::to_string(to.size()) + " expected back with 1 rank");
  }
  if (!from.empty()) std::memcpy(to.data(), from.data(), from.size());
}

}  // namespace

void SingleProcessCommunicator::all_gather(std::span<const std::byte> mine, std::span<std::byte> all) {
  copy_whole(mine, all, "all_gather");
}

void SingleProcessCommunicator::all_to_all(std::span<const std::byte> send, std::span<std::byte> received) {
  copy_whole(send, received, "all_to_all");
}

void SingleProcessCommunicator::broadcast(std::span<std::byte>, int root) {
  if (root != 0) throw CommunicatorError("broadcast: root " + std::to_string(root) + " but the only rank is 0");
}

void SingleProcessCommunicator::abort(const std::string& why) {
  std::cerr << "trepro: " << rank_name(*this) << ": " << why << "\n";
  std::exit(1);
}

}  // namespace trepro
