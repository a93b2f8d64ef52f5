#include "distributed/nccl_communicator.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include <cuda_runtime.h>
#include <nccl.h>

namespace trepro {

struct NcclCommunicator::Handles {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

namespace {

void check(ncclResult_t status, const char* collective, int rank) {
  if (status != ncclSuccess) {
    throw CommunicatorError(std::string(collective) + " failed on rank " + std::to_string(rank) + ": " +
                            ncclGetErrorString(status));
  }
}

void check(cudaError_t status, const char* what, int rank) {
  if (status != cudaSuccess) {
    throw CommunicatorError(std::string(what) + " failed on rank " + std::to_string(rank) + ": " +
                            cudaGetErrorString(status));
  }
}

}  // namespace

NcclCommunicator::NcclCommunicator(Communicator& bootstrap)
    : bootstrap_(bootstrap), handles_(std::make_unique<Handles>()), timeout_seconds_(collective_timeout_seconds()) {
  if (bootstrap.memory() != Device::cpu) throw CommunicatorError("NcclCommunicator: the bootstrap must use host memory");
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId", 0);
  bootstrap.broadcast(std::as_writable_bytes(std::span(&id, 1)), 0);
  check(cudaStreamCreateWithFlags(&handles_->stream, cudaStreamNonBlocking), "cudaStreamCreate", rank());
  check(ncclCommInitRank(&handles_->comm, size(), id, rank()), "ncclCommInitRank", rank());
}

NcclCommunicator::~NcclCommunicator() {
  if (handles_->comm != nullptr) ncclCommDestroy(handles_->comm);
  if (handles_->stream != nullptr) cudaStreamDestroy(handles_->stream);
}

// The cuda backend's kernels that wrote the buffers run on its own stream: the device is
// synchronized before a collective starts. The collective's stream is then polled, not
// synchronized: a rank that died or hangs would leave cudaStreamSynchronize waiting forever, so
// past the deadline (or on NCCL's own asynchronous error) the job is aborted, as the MPI engine
// does.
template <class Enqueue>
void NcclCommunicator::run_collective(const char* name, Enqueue enqueue) {
  check(cudaDeviceSynchronize(), name, rank());
  check(enqueue(), name, rank());
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (;;) {
    const cudaError_t state = cudaStreamQuery(handles_->stream);
    if (state == cudaSuccess) return;
    // The others wait in this collective: a device error ends the job at once, not at their deadline.
    if (state != cudaErrorNotReady) abort(std::string(name) + " failed: " + cudaGetErrorString(state));
    ncclResult_t failure = ncclSuccess;
    check(ncclCommGetAsyncError(handles_->comm, &failure), name, rank());
    if (failure != ncclSuccess) abort(std::string(name) + " failed: " + ncclGetErrorString(failure));
    if (std::chrono::duration<double>(Clock::now() - start).count() > timeout_seconds_) {
      abort(collective_timeout_message(name, timeout_seconds_));
    }
    std::this_thread::yield();
  }
}

void NcclCommunicator::allreduce_sum(std::span<float> data) {
  run_collective("allreduce_sum", [&] {
    return ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat, ncclSum, handles_->comm, handles_->stream);
  });
}

void NcclCommunicator::all_gather(std::span<const std::byte> mine, std::span<std::byte> all) {
  if (all.size() != mine.size() * static_cast<std::size_t>(size())) {
    throw CommunicatorError("all_gather: " + std::to_string(all.size()) + " bytes to receive, expected " +
                            std::to_string(size()) + " x " + std::to_string(mine.size()));
  }
  run_collective("all_gather", [&] {
    return ncclAllGather(mine.data(), all.data(), mine.size(), ncclChar, handles_->comm, handles_->stream);
  });
}

void NcclCommunicator::all_to_all(std::span<const std::byte> send, std::span<std::byte> received) {
  const auto ranks = static_cast<std::size_t>(size());
  if (send.size() != received.size() || send.size() % ranks != 0) {
    throw CommunicatorError("all_to_all: " + std::to_string(send.size()) + " bytes sent and " +
                            std::to_string(received.size()) + " received: both must be the same multiple of " +
                            std::to_string(ranks) + " ranks");
  }
  const std::size_t block = send.size() / ranks;
  // NCCL's all-to-all is grouped point-to-point sends and receives (its documented form).
  auto exchange = [&]() {
    ncclResult_t status = ncclGroupStart();
    for (std::size_t r = 0; r < ranks && status == ncclSuccess; ++r) {
      status = ncclSend(send.data() + r * block, block, ncclChar, static_cast<int>(r), handles_->comm, handles_->stream);
      if (status == ncclSuccess) {
        status = ncclRecv(received.data() + r * block, block, ncclChar, static_cast<int>(r), handles_->comm,
                          handles_->stream);
      }
    }
    const ncclResult_t ended = ncclGroupEnd();
    return status != ncclSuccess ? status : ended;
  };
  run_collective("all_to_all", exchange);
}

void NcclCommunicator::broadcast(std::span<std::byte> data, int root) {
  run_collective("broadcast", [&] {
    return ncclBroadcast(data.data(), data.data(), data.size(), ncclChar, root, handles_->comm, handles_->stream);
  });
}

void NcclCommunicator::barrier() { bootstrap_.barrier(); }

void NcclCommunicator::setup_barrier() { bootstrap_.setup_barrier(); }

void NcclCommunicator::abort(const std::string& why) {
  if (handles_->comm != nullptr) ncclCommAbort(handles_->comm);
  handles_->comm = nullptr;
  bootstrap_.abort(why);
  std::abort();  // not reached: GCC does not carry [[noreturn]] through the virtual call above
}

}  // namespace trepro
