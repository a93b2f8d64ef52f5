// The CUDA backend's class, for the op files (one per op: linear.cu, attention.cu, norm.cu, ...)
// that define its members. float32 on device 0 (in the bf16 precision the linear layers' GEMM
// operands are rounded to bfloat16, linear_gemm.cuh), everything queued on one stream owned by the
// backend; device memory from the backend's caching allocator; cuBLAS and cuBLASLt handles bound
// to that stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/backend.h"
#include "core/caching_allocator.h"

namespace trepro::cuda {

class CudaBackend final : public Backend {
 public:
  CudaBackend();
  ~CudaBackend() override;

  std::string name() const override { return "cuda"; }
  DType dtype() const override { return DType::f32; }
  int threads() const override { return 1; }  // one host thread enqueues on one stream
  Device device() const override { return Device::cuda; }
  void set_precision(Precision precision) override { precision_ = precision; }

  Tensor empty(const Shape& shape, DType dtype) override;
  Tensor zeros(const Shape& shape, DType dtype) override;
  Tensor upload(const Tensor& host) override;
  Tensor download(const Tensor& device_tensor) override;

  void fill(Tensor& x, double value) override;
  void add_inplace(Tensor& acc, const Tensor& x) override;
  void scale_inplace(Tensor& x, double factor) override;
  double sum_squares(const Tensor& x) override;
  bool all_finite(const Tensor& x) override;

  void concat_time(const Tensor& a, const Tensor& b, Tensor& out) override;
  void select_batch(const Tensor& x, const Tensor& indices, Tensor& out) override;

  void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                      Tensor* pre) override;
  void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                       Tensor* dx, Tensor& dw, Tensor* db) override;

  void activation_forward(Activation act, const Tensor& x, Tensor& y) override;
  void activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) override;
  void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) override;
  void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate,
                       Tensor& dup) override;

  void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                         bool causal, double scale, const DropoutSpec& dropout, Tensor& out, Tensor& lse) override;
  void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                          bool causal, double scale, const DropoutSpec& dropout, const Tensor& out,
                          const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) override;

  void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps, Tensor& y,
                    Tensor& mean, Tensor& rstd) override;
  void norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                     const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) override;

  void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) override;
  void dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) override;
  void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                           Tensor& out) override;
  void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                const Tensor& gamma, const Tensor* beta, double eps, Tensor& sum, Tensor& y,
                                Tensor& mean, Tensor& rstd) override;
  void add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                                 const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy,
                                 Tensor& dresidual, Tensor& dx, Tensor& dgamma, Tensor* dbeta) override;

  void embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                         const Tensor* pos_table, std::int64_t offset, Tensor& out) override;
  void embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos, std::int64_t offset,
                          Tensor& dtable, Tensor* dpos_table) override;

  void rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) override;
  void rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) override;

  double cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps,
                               SmoothingForm form, Tensor& lse, std::int64_t* count) override;
  void cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id,
                              double eps, SmoothingForm form, double dloss, Tensor& dlogits) override;
  void log_softmax_forward(const Tensor& x, Tensor& y) override;

  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1, double beta2,
                   double eps, std::int64_t step) override;

  // ---- for the op files -----------------------------------------------------------------------
  Precision precision() const { return precision_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cublasLtHandle_t cublaslt() const { return cublaslt_; }
  // cuBLASLt's workspace, allocated once.
  void* lt_workspace() const { return lt_workspace_; }
  static constexpr std::size_t kLtWorkspaceBytes = 32u << 20;
  // Uninitialized device bytes for temporaries (CUB temp storage, partial sums), freed with
  // the returned tensor.
  Tensor scratch_bytes(std::size_t bytes);
  // The int32 values of a small device index tensor (ids, labels, indices), for the range checks
  // that report the offending value; synchronizes the stream.
  std::vector<std::int32_t> download_indices(const Tensor& indices, const char* op);
  // Waits for the stream; errors of queued kernels surface here, named after `op`.
  void synchronize(const char* op);

 private:
  int device_ = 0;
  Precision precision_ = Precision::float32;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t cublaslt_ = nullptr;
  std::shared_ptr<CachingAllocator> allocator_;
  void* lt_workspace_ = nullptr;
};

}  // namespace trepro::cuda
