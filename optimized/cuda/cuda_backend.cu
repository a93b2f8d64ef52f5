// Setup, memory and transfers of the CUDA backend; the ops are in one file each.
#include "optimized/cuda/cuda_backend.h"

#include <stdexcept>

#include "core/backend_checks.h"
#include "optimized/cuda/cuda_backend_impl.h"
#include "optimized/cuda/cuda_call.h"

namespace trepro {

CudaDeviceStatus cuda_device_status() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    return {false, "cudaGetDeviceCount returned " + std::to_string(static_cast<int>(status)) + " (" +
                       cudaGetErrorString(status) + ")"};
  }
  if (count == 0) return {false, "cudaGetDeviceCount returned 0 devices"};
  return {true, std::to_string(count) + " CUDA device(s)"};
}

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<cuda::CudaBackend>(); }

}  // namespace trepro

namespace trepro::cuda {

namespace {

constexpr const char* kSetup = "CudaBackend";

}  // namespace

CudaBackend::CudaBackend() {
  check_cuda(cudaSetDevice(device_), "cudaSetDevice(0)", kSetup);
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", kSetup);
  check_cublas(cublasCreate(&cublas_), "cublasCreate", kSetup);
  check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream", kSetup);
  // float32 means float32: no TF32 tensor-core rounding behind the tolerance table's back.
  check_cublas(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode", kSetup);
  check_cublas(cublasLtCreate(&cublaslt_), "cublasLtCreate", kSetup);
  allocator_ = std::make_shared<CachingAllocator>(
      "cuda backend: device memory",
      [](std::size_t bytes) -> void* {
        void* block = nullptr;
        const cudaError_t status = cudaMalloc(&block, bytes);
        if (status == cudaErrorMemoryAllocation) {
          cudaGetLastError();  // clear the sticky-free error so the retry starts clean
          return nullptr;
        }
        check_cuda(status, "cudaMalloc(" + std::to_string(bytes) + " bytes)", "allocate");
        return block;
      },
      // Called from destructors: an error here (a lost device at exit) cannot be reported.
      [](void* block) { cudaFree(block); });
  lt_workspace_ = allocator_->allocate(kLtWorkspaceBytes);
}

CudaBackend::~CudaBackend() {
  // Tensors may outlive the backend (they share the allocator); queued work must finish first.
  if (stream_) cudaStreamSynchronize(stream_);
  if (lt_workspace_) allocator_->release(lt_workspace_);
  if (cublaslt_) cublasLtDestroy(cublaslt_);
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

Tensor CudaBackend::empty(const Shape& shape, DType dtype) {
  return allocate_tensor(allocator_, shape, dtype, Device::cuda);
}

Tensor CudaBackend::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  check_cuda(cudaMemsetAsync(t.raw(), 0, t.nbytes(), stream_), "cudaMemsetAsync", "zeros");
  return t;
}

Tensor CudaBackend::scratch_bytes(std::size_t bytes) {
  return empty({static_cast<std::int64_t>((bytes + 3) / 4)}, DType::i32);
}

void CudaBackend::synchronize(const char* op) { check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", op); }

Tensor CudaBackend::upload(const Tensor& host) {
  constexpr const char* op = "upload";
  checks::upload_source(host);
  const bool floating = host.dtype() == DType::f32 || host.dtype() == DType::f64;
  // Convert on the host (the reference's rules), then one copy.
  Tensor staged = Tensor::empty(host.shape(), floating ? DType::f32 : DType::i32);
  for (std::int64_t i = 0; i < host.numel(); ++i) staged.set(i, host.at(i));
  Tensor device_tensor = empty(host.shape(), staged.dtype());
  check_cuda(cudaMemcpyAsync(device_tensor.raw(), staged.raw(), staged.nbytes(), cudaMemcpyHostToDevice, stream_),
             "cudaMemcpyAsync(host to device)", op);
  // `staged` is pageable and dies here: wait for the copy.
  synchronize(op);
  return device_tensor;
}

Tensor CudaBackend::download(const Tensor& device_tensor) {
  constexpr const char* op = "download";
  if (device_tensor.device() != Device::cuda) throw std::invalid_argument("download: source is not a cuda tensor");
  Tensor host = Tensor::empty(device_tensor.shape(), device_tensor.dtype());
  check_cuda(cudaMemcpyAsync(host.raw(), device_tensor.raw(), host.nbytes(), cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync(device to host)", op);
  synchronize(op);
  return host;
}

std::vector<std::int32_t> CudaBackend::download_indices(const Tensor& indices, const char* op) {
  std::vector<std::int32_t> values(static_cast<std::size_t>(indices.numel()));
  check_cuda(cudaMemcpyAsync(values.data(), indices.raw(), values.size() * sizeof(std::int32_t),
                             cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync(indices to host)", op);
  synchronize(op);
  return values;
}

}  // namespace trepro::cuda
