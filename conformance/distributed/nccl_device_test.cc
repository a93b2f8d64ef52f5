// The NCCL communicator on this machine's GPU, one rank (bootstrapped by the single process):
// each collective moves device memory as the interface says. Skips, naming why, without a
// device or without NCCL in the build. Several ranks need several GPUs: not tested anywhere yet.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#if defined(TR_WITH_NCCL)
#include <cuda_runtime.h>

#include "distributed/nccl_communicator.h"
#include "distributed/single_process_communicator.h"
#include "optimized/cuda/cuda_backend.h"
#endif

namespace trepro::testing {
namespace {

#if defined(TR_WITH_NCCL)
// A device buffer holding `values`, read back with host().
class DeviceFloats {
 public:
  explicit DeviceFloats(const std::vector<float>& values) : count_(values.size()) {
    EXPECT_EQ(cudaMalloc(&data_, count_ * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data_, values.data(), count_ * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(data_); }
  std::span<float> floats() { return {static_cast<float*>(data_), count_}; }
  std::span<std::byte> bytes() { return std::as_writable_bytes(floats()); }
  std::vector<float> host() const {
    std::vector<float> values(count_);
    EXPECT_EQ(cudaMemcpy(values.data(), data_, count_ * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return values;
  }

 private:
  void* data_ = nullptr;
  std::size_t count_;
};

TEST(NcclOneRank, CollectivesMoveDeviceMemory) {
  const CudaDeviceStatus status = cuda_device_status();
  if (!status.available) {
    GTEST_SKIP() << "no usable CUDA device (" << status.reason
                 << "): the NCCL communicator compiled but its collectives did not run here";
  }
  SingleProcessCommunicator bootstrap;
  NcclCommunicator nccl(bootstrap);
  EXPECT_EQ(nccl.size(), 1);
  DeviceFloats data({1.5f, -2.0f, 3.25f});
  nccl.allreduce_sum(data.floats());
  EXPECT_EQ(data.host(), (std::vector<float>{1.5f, -2.0f, 3.25f}));
  DeviceFloats gathered({0.0f, 0.0f, 0.0f});
  nccl.all_gather(data.bytes(), gathered.bytes());
  EXPECT_EQ(gathered.host(), data.host());
  DeviceFloats exchanged({0.0f, 0.0f, 0.0f});
  nccl.all_to_all(data.bytes(), exchanged.bytes());
  EXPECT_EQ(exchanged.host(), data.host());
  nccl.broadcast(data.bytes(), 0);
  nccl.barrier();
  EXPECT_EQ(data.host(), (std::vector<float>{1.5f, -2.0f, 3.25f}));
}
#else
TEST(NcclOneRank, CollectivesMoveDeviceMemory) {
  GTEST_SKIP() << "built without NCCL (TR_WITH_NCCL is off: no nvcc, or no nccl.h / libnccl beside CUDA): "
                  "the NCCL communicator is neither compiled nor run";
}
#endif

}  // namespace
}  // namespace trepro::testing
