#include "distributed/mpi_communicator.h"

#include <mpi.h>

#include <climits>
#include <iostream>

namespace trepro {

namespace {

// MPI returns errors instead of ending the process (MPI_ERRORS_RETURN below), so that the
// message names the collective and the rank before the job is aborted.
void check(int status, const char* collective, int rank) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw CommunicatorError(std::string(collective) + " failed on rank " + std::to_string(rank) + ": " +
                          std::string(text, static_cast<std::size_t>(length)));
}

// MPI counts are int: larger buffers would wrap around silently.
int count_of(std::size_t bytes, const char* collective) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw CommunicatorError(std::string(collective) + ": " + std::to_string(bytes) +
                            " bytes exceed MPI's int count (2^31 - 1)");
  }
  return static_cast<int>(bytes);
}

}  // namespace

MpiCommunicator::MpiCommunicator() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) throw CommunicatorError("MpiCommunicator: MPI is already initialized (one per process)");
  MPI_Init(nullptr, nullptr);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiCommunicator::~MpiCommunicator() { MPI_Finalize(); }

void MpiCommunicator::allreduce_sum(std::span<float> data) {
  const int count = count_of(data.size_bytes(), "allreduce_sum") / static_cast<int>(sizeof(float));
  check(MPI_Allreduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "allreduce_sum", rank_);
}

void MpiCommunicator::all_gather(std::span<const std::byte> mine, std::span<std::byte> all) {
  if (all.size() != mine.size() * static_cast<std::size_t>(size_)) {
    throw CommunicatorError("all_gather: " + std::to_string(all.size()) + " bytes to receive, expected " +
                            std::to_string(size_) + " x " + std::to_string(mine.size()));
  }
  const int count = count_of(mine.size(), "all_gather");
  count_of(all.size(), "all_gather");
  check(MPI_Allgather(mine.data(), count, MPI_BYTE, all.data(), count, MPI_BYTE, MPI_COMM_WORLD), "all_gather", rank_);
}

void MpiCommunicator::all_to_all(std::span<const std::byte> send, std::span<std::byte> received) {
  if (send.size() != received.size() || send.size() % static_cast<std::size_t>(size_) != 0) {
    throw CommunicatorError("all_to_all: " + std::to_string(send.size()) + " bytes sent and " +
                            std::to_string(received.size()) + " received: both must be the same multiple of " +
                            std::to_string(size_) + " ranks");
  }
  const int block = count_of(send.size(), "all_to_all") / size_;
  check(MPI_Alltoall(send.data(), block, MPI_BYTE, received.data(), block, MPI_BYTE, MPI_COMM_WORLD), "all_to_all",
        rank_);
}

void MpiCommunicator::broadcast(std::span<std::byte> data, int root) {
  check(MPI_Bcast(data.data(), count_of(data.size(), "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD), "broadcast",
        rank_);
}

void MpiCommunicator::barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "barrier", rank_); }

void MpiCommunicator::abort(const std::string& why) {
  std::cerr << "trepro: " << rank_name(*this) << ": " << why << std::endl;
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; this is for the compiler's [[noreturn]]
}

}  // namespace trepro
