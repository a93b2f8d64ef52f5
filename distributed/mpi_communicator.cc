#include "distributed/mpi_communicator.h"

#include <chrono>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <thread>

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

MpiCommunicator::MpiCommunicator() : timeout_seconds_(collective_timeout_seconds()) {
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
  MPI_Request request;
  check(MPI_Iallreduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request), "allreduce_sum",
        rank_);
  wait(request, "allreduce_sum");
}

void MpiCommunicator::all_gather(std::span<const std::byte> mine, std::span<std::byte> all) {
  if (all.size() != mine.size() * static_cast<std::size_t>(size_)) {
    throw CommunicatorError("all_gather: " + std::to_string(all.size()) + " bytes to receive, expected " +
                            std::to_string(size_) + " x " + std::to_string(mine.size()));
  }
  const int count = count_of(mine.size(), "all_gather");
  count_of(all.size(), "all_gather");
  MPI_Request request;
  check(MPI_Iallgather(mine.data(), count, MPI_BYTE, all.data(), count, MPI_BYTE, MPI_COMM_WORLD, &request),
        "all_gather", rank_);
  wait(request, "all_gather");
}

void MpiCommunicator::all_to_all(std::span<const std::byte> send, std::span<std::byte> received) {
  if (send.size() != received.size() || send.size() % static_cast<std::size_t>(size_) != 0) {
    throw CommunicatorError("all_to_all: " + std::to_string(send.size()) + " bytes sent and " +
                            std::to_string(received.size()) + " received: both must be the same multiple of " +
                            std::to_string(size_) + " ranks");
  }
  const int block = count_of(send.size(), "all_to_all") / size_;
  MPI_Request request;
  check(MPI_Ialltoall(send.data(), block, MPI_BYTE, received.data(), block, MPI_BYTE, MPI_COMM_WORLD, &request),
        "all_to_all", rank_);
  wait(request, "all_to_all");
}

void MpiCommunicator::broadcast(std::span<std::byte> data, int root) {
  MPI_Request request;
  check(MPI_Ibcast(data.data(), count_of(data.size(), "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD, &request),
        "broadcast", rank_);
  wait(request, "broadcast");
}

void MpiCommunicator::barrier() {
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "barrier", rank_);
  wait(request, "barrier");
}

void MpiCommunicator::setup_barrier() {
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "setup barrier", rank_);
  // No deadline; and a rank here may wait for minutes, so it sleeps between tests, leaving its
  // core to the ranks still encoding.
  for (;;) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "setup barrier", rank_);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void MpiCommunicator::wait(MPI_Request& request, const char* collective) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (;;) {
    int done = 0;
    // Each test also advances the collective (MPI progresses non-blocking operations inside
    // calls), so the loop never sleeps; yielding lets a rank still computing on the same core go
    // first (2 ranks on 2 cores).
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), collective, rank_);
    if (done) return;
    std::this_thread::yield();
    if (std::chrono::duration<double>(Clock::now() - start).count() > timeout_seconds_) {
      abort(collective_timeout_message(collective, timeout_seconds_));
    }
  }
}

void MpiCommunicator::abort(const std::string& why) {
  std::cerr << "trepro: " << rank_name(*this) << ": " << why << std::endl;
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; this is for the compiler's [[noreturn]]
}

}  // namespace trepro
