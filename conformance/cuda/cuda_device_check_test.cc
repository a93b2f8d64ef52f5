// The CUDA backend on this machine. Without a device (or without nvcc at build time) the device
// tests skip with a message saying why and what is not run; the registration rule -- "cuda" is
// listed exactly when a device is usable -- is checked everywhere.
#include <algorithm>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/tensor_testing.h"
#include "registry/registry.h"
#if defined(TR_WITH_CUDA)
#include "optimized/cuda/cuda_backend.h"
#endif

namespace trepro::testing {
namespace {

constexpr const char* kNotRun =
    "not run here: the \"cuda\" instantiations of every conformance suite (ops, model, properties, golden), "
    "which exist only where the backend is registered, and CudaDevice.* below; scripts/gpu-check runs them "
    "on a GPU machine";

bool cuda_listed() {
  const auto backends = available_backends();
  return std::any_of(backends.begin(), backends.end(), [](const BackendInfo& b) { return b.name == "cuda"; });
}

// Why the device tests cannot run here, or "" when they can.
std::string skip_reason() {
#if defined(TR_WITH_CUDA)
  const CudaDeviceStatus status = cuda_device_status();
  if (status.available) return "";
  return "no usable CUDA device (" + status.reason + ")";
#else
  return "built without the CUDA backend (TR_WITH_CUDA is OFF: nvcc not found or disabled)";
#endif
}

TEST(CudaRegistration, ListedExactlyWhenADeviceIsUsable) {
  EXPECT_EQ(cuda_listed(), skip_reason().empty());
  if (!cuda_listed()) {
    // Not "unknown": the project has it, and the message says why this machine cannot run it.
    EXPECT_THAT([] { make_backend("cuda"); },
                ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr(
                    "backend \"cuda\" is not available: this build has the CUDA backend, but no GPU is usable here")));
  }
}

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = skip_reason();
    if (!reason.empty()) GTEST_SKIP() << reason << "; " << kNotRun;
    backend_ = make_backend("cuda");
    reference_ = make_reference_backend(DType::f64);
  }
  std::unique_ptr<Backend> backend_, reference_;
};

TEST_F(CudaDevice, UploadDownloadRoundTrip) {
  Tensor host = random_tensor(*reference_, {3, 5}, 1);
  Tensor device = backend_->upload(host);
  EXPECT_EQ(device.device(), Device::cuda);
  EXPECT_EQ(device.dtype(), DType::f32);
  Tensor back = backend_->download(device);
  for (std::int64_t i = 0; i < host.numel(); ++i) EXPECT_EQ(back.at(i), static_cast<float>(host.at(i)));
}

TEST_F(CudaDevice, ErrorsNameTheOpAndTheValue) {
  Tensor x = backend_->zeros({2, 4}, DType::f32), out = backend_->empty({1, 4}, DType::f32);
  Tensor indices = int_tensor(*backend_, {1}, {5.0});
  EXPECT_THAT([&] { backend_->select_batch(x, indices, out); },
              ::testing::ThrowsMessage<std::out_of_range>(::testing::HasSubstr("select_batch: indices[0] = 5")));
}

TEST_F(CudaDevice, DecodeAndTiledAttentionAgreeWithReference) {
  // Tq == 1 takes the decode kernel, Tq == 3 the tiled one; Tk = 70 leaves a partial key tile.
  for (std::int64_t tq : {1, 3}) {
    const std::int64_t batch = 2, heads = 2, tk = 70, d = 16;
    Tensor q = random_tensor(*reference_, {batch, tq, heads * d}, 1), k = random_tensor(*reference_, {batch, tk, heads * d}, 2);
    Tensor v = random_tensor(*reference_, {batch, tk, heads * d}, 3);
    Tensor out_ref = reference_->empty({batch, tq, heads * d}, DType::f64), lse_ref = reference_->empty({batch, heads, tq}, DType::f64);
    reference_->attention_forward(q, k, v, static_cast<int>(heads), nullptr, true, 0.25, {}, out_ref, lse_ref);
    Tensor out = backend_->empty(out_ref.shape(), DType::f32), lse = backend_->empty(lse_ref.shape(), DType::f32);
    backend_->attention_forward(backend_->upload(q), backend_->upload(k), backend_->upload(v), static_cast<int>(heads),
                                nullptr, true, 0.25, {}, out, lse);
    const Tolerance tol = tolerance(Check::op_vs_reference, DType::f32, d + tk);
    EXPECT_TRUE(all_close("out", *backend_, out, *reference_, out_ref, tol)) << "tq=" << tq;
    EXPECT_TRUE(all_close("lse", *backend_, lse, *reference_, lse_ref, tol)) << "tq=" << tq;
  }
}

}  // namespace
}  // namespace trepro::testing
