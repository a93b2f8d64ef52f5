// The Backend interface: every op of the Transformer, forward and backward.
//
// The model, the training loop and every conformance test are written once against Backend&.
// Implementations: reference/ (Eigen, float and double), optimized/cpu/ (Highway SIMD),
// optimized/cuda/. An op `x` is implemented under the same name in each.
//
// Conventions, for every op:
// - Floating tensors have the backend's dtype(); index tensors (token ids, labels, key padding)
//   are int32 on the backend's device. Outputs are allocated by the caller with the documented
//   shape; a backend checks shapes with the helpers in core/backend_checks.h and throws
//   std::invalid_argument naming the op and the tensor on a mismatch.
// - Gradients of inputs are written (overwritten); gradients of parameters (dw, db, dgamma,
//   dbeta, dtable) are accumulated (+=), so that a tied weight used in several places sums
//   its gradients without extra copies.
// - Row-major layouts. Activations are [N, d] with N = batch * time; attention takes q, k, v
//   as [B, T, H * d_head] (the natural output of a linear), so no transposes are needed.
#pragma once

#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/philox.h"
#include "core/tensor.h"

namespace trepro {

enum class Activation { none, relu, gelu, gelu_tanh };
enum class NormKind { layer, rms };
enum class SmoothingForm { uniform, fairseq };

// Inverted dropout: an element is kept with probability 1 - p and then scaled by 1 / (1 - p).
// The mask is a pure function of (key, element index), so no mask is stored: backward draws it
// again. p == 0 means "off" (identity).
struct DropoutSpec {
  double p = 0.0;
  PhiloxKey key;
  bool active() const { return p > 0.0; }
};

// Positions added to (or, for "rope", rotated into) the token representations.
enum class Positional { sinusoidal, learned, rope };

// The training precision (config train.precision). float32: every op in the backend's dtype.
// bf16: the operands of the linear layers' GEMMs are rounded to bfloat16 (round to nearest even)
// and multiplied on tensor cores with float32 accumulation; every stored result, the weights and
// Adam's moments stay in the backend's dtype (float32 master weights).
enum class Precision { float32, bf16 };

// The ops of this interface, each under its one name (x_forward / x_backward below). Memory and
// the elementwise helpers are not among them: every backend has those (a plugin's are its
// adapter's, on the host), and the tests of every op need them to set up.
enum class Op {
  linear, activation, swiglu, attention, norm, dropout, add_dropout, add_dropout_norm, embedding, rope,
  cross_entropy, log_softmax, adam, concat_time, select_batch
};
// An op with one call (add_dropout_forward, log_softmax_forward, adam_update, concat_time,
// select_batch) is forward.
enum class Direction { forward, backward };
struct OpDirection {
  Op op;
  Direction direction;
  auto operator<=>(const OpDirection&) const = default;
};
// Every op x direction this interface has, in declaration order.
std::vector<OpDirection> every_op_direction();
const char* op_name(Op op);
const char* direction_name(Direction direction);
// "norm backward": how messages and reports name an op x direction.
std::string describe(OpDirection op);

// Thrown where an op a backend does not provide (Backend::provides) must not run: the
// conformance suite's guard refuses it so that a test of it is reported as not provided rather
// than judged on another backend's work. The message starts with "not provided: ".
class NotProvided : public std::logic_error {
 public:
  NotProvided(OpDirection op, const std::string& backend);
};

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // "reference-f64", "cpu-avx3", "cuda": unique among available_backends().
  virtual std::string name() const = 0;
  // The floating dtype of every activation, weight and gradient this backend works with.
  virtual DType dtype() const = 0;
  virtual Device device() const = 0;
  // Host threads the ops compute with (the reference: Eigen's OpenMP threads; cpu: its pool).
  virtual int threads() const = 0;
  // Whether this backend computes `op` in `direction` itself, in dtype(): what it is credited with.
  // The conformance suite reports a test of an op a backend does not provide as "not provided",
  // never as passed. The backends of this project provide every op; a plugin (core/plugin_abi.h)
  // the ops it has functions for; a partial ForwardingBackend the ops it lists.
  virtual bool provides(OpDirection op) const {
    static_cast<void>(op);
    return true;
  }
  // Switches the precision (train.precision) before any op runs. Only a backend with
  // reduced-precision GEMMs (cuda) overrides this; the others compute every op in dtype() and
  // refuse bf16 rather than silently ignore it.
  virtual void set_precision(Precision precision) {
    if (precision != Precision::float32) {
      throw std::invalid_argument("backend " + name() + " has no bf16 mode (only cuda has one)");
    }
  }
  // Between begin_constant_weights() and the matching end_constant_weights() (they nest; use
  // ConstantWeights below), the caller promises that no tensor passed to linear_forward as `w`
  // is written or freed. A backend may then keep each weight arranged for its GEMM instead of
  // arranging it at every call (the cpu backend packs it once). Decoding holds such a scope;
  // training never does, since the optimizer writes the weights at every step. Results are the
  // same bits either way.
  virtual void begin_constant_weights() {}
  virtual void end_constant_weights() {}

  // ---- Memory -------------------------------------------------------------------------------
  virtual Tensor empty(const Shape& shape, DType dtype) = 0;
  virtual Tensor zeros(const Shape& shape, DType dtype) = 0;
  // Copies a host tensor to this backend's device, converting floating values to dtype()
  // (integer tensors are converted to int32, with a range check).
  virtual Tensor upload(const Tensor& host) = 0;
  // Copies to a host tensor of the same dtype.
  virtual Tensor download(const Tensor& device_tensor) = 0;

  // ---- Elementwise helpers ------------------------------------------------------------------
  // x[i] = value
  virtual void fill(Tensor& x, double value) = 0;
  // acc[i] += x[i]            (same shapes)
  virtual void add_inplace(Tensor& acc, const Tensor& x) = 0;
  // x[i] *= factor
  virtual void scale_inplace(Tensor& x, double factor) = 0;
  // sum_i x[i]^2, accumulated in double (for gradient norms)
  virtual double sum_squares(const Tensor& x) = 0;
  // true when every element is finite (NaN/Inf detection in training)
  virtual bool all_finite(const Tensor& x) = 0;

  // ---- layout -------------------------------------------------------------------------------
  // out [B, Ta + Tb, d] = a [B, Ta, d] followed by b [B, Tb, d] along time (appending to a
  // key/value cache in incremental decoding).
  virtual void concat_time(const Tensor& a, const Tensor& b, Tensor& out) = 0;
  // out[i] = x[indices[i]] along the first dimension: x [B, ...], indices [B'] int32 in [0, B),
  // out [B', ...] (reordering beams and their caches in beam search).
  virtual void select_batch(const Tensor& x, const Tensor& indices, Tensor& out) = 0;

  // ---- linear -------------------------------------------------------------------------------
  // x [N, K], w [M, K] (torch.nn.Linear layout), b [M] or null, y [N, M]:
  //   pre = x w^T + b,  y = act(pre).
  // pre [N, M] is written when act != none (backward needs it) and may be null otherwise.
  virtual void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act,
                              Tensor& y, Tensor* pre) = 0;
  // dpre = dy * act'(pre)  (dpre = dy when act == none),
  //   dx [N, K] = dpre w         (written; skipped when dx is null)
  //   dw [M, K] += dpre^T x
  //   db [M]    += sum_n dpre[n]  (skipped when db is null)
  virtual void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act,
                               const Tensor& dy, Tensor* dx, Tensor& dw, Tensor* db) = 0;

  // ---- activations --------------------------------------------------------------------------
  // y = act(x), elementwise, any shape:
  //   relu(x)      = max(0, x)
  //   gelu(x)      = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))
  //   gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  virtual void activation_forward(Activation act, const Tensor& x, Tensor& y) = 0;
  // dx = act'(x) * dy  (relu'(0) = 0, as PyTorch)
  virtual void activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) = 0;
  // SwiGLU gate (Shazeer 2020): y = silu(gate) * up, silu(g) = g * sigmoid(g); all [N, F].
  virtual void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) = 0;
  // dgate = dy * up * silu'(gate), silu'(g) = s (1 + g (1 - s)) with s = sigmoid(g);
  // dup = dy * silu(gate).
  virtual void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy,
                               Tensor& dgate, Tensor& dup) = 0;

  // ---- attention ----------------------------------------------------------------------------
  // Scaled dot-product attention over `heads` heads.
  //   q [B, Tq, H*Dk], k [B, Tk, H*Dk], v [B, Tk, H*Dv], out [B, Tq, H*Dv], lse [B, H, Tq].
  //   For each b, h, query i: s_j = scale * <q_i, k_j> over allowed keys j,
  //     p = softmax(s) (computed with the running max subtracted),  out_i = sum_j p_j v_j,
  //     lse_i = log sum_j exp(s_j)  (saved so backward recomputes p without storing it).
  //   Key j is not allowed when key_padding[b, j] != 0 (key_padding [B, Tk] int32, may be
  //   null) or, when causal, when j > i + (Tk - Tq): queries are aligned to the end of the
  //   keys, so incremental decoding with a cache of Tk - Tq earlier positions is the same
  //   computation. A query with no allowed key gets out_i = 0 and lse_i = -inf.
  //   With attention dropout active, p_j is dropped (inverted) before the sum, the element
  //   index being ((b * H + h) * Tq + i) * Tk + j.
  virtual void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                 const Tensor* key_padding, bool causal, double scale,
                                 const DropoutSpec& dropout, Tensor& out, Tensor& lse) = 0;
  // Given dout [B, Tq, H*Dv] and the forward's out and lse, writes dq, dk, dv (shapes of q, k, v):
  //   dv_j = sum_i p~_ij dout_i;  dp_ij = <dout_i, v_j>;  (p~ = p with dropout applied)
  //   ds_ij = p_ij (dp~_ij - D_i) with D_i = <dout_i, out_i>, dp~ the dropout-masked dp;
  //   dq_i = scale sum_j ds_ij k_j;  dk_j = scale sum_i ds_ij q_i.
  virtual void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                                  const Tensor* key_padding, bool causal, double scale,
                                  const DropoutSpec& dropout, const Tensor& out, const Tensor& lse,
                                  const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) = 0;

  // ---- normalization ------------------------------------------------------------------------
  // x [N, d], gamma [d], beta [d] (layer; null for rms), y [N, d], mean [N], rstd [N]:
  //   layer: mean_n = avg_i x_ni, rstd_n = 1 / sqrt(avg_i (x_ni - mean_n)^2 + eps),
  //          y = (x - mean) rstd gamma + beta      (biased variance, as torch.nn.LayerNorm)
  //   rms:   mean_n = 0, rstd_n = 1 / sqrt(avg_i x_ni^2 + eps),  y = x rstd gamma
  virtual void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta,
                            double eps, Tensor& y, Tensor& mean, Tensor& rstd) = 0;
  // With xhat = (x - mean) rstd and g = dy gamma:
  //   dx = rstd (g - avg(g) - xhat avg(g xhat))   (layer)
  //   dx = rstd (g - xhat avg(g xhat))            (rms)
  //   dgamma += sum_n dy xhat;  dbeta += sum_n dy  (layer only)
  virtual void norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                             const Tensor& rstd, const Tensor& dy, Tensor& dx, Tensor& dgamma,
                             Tensor* dbeta) = 0;

  // ---- dropout and residuals ----------------------------------------------------------------
  // y = dropout(x): y_i = keep_i x_i / (1 - p); any shape; element index = flat index.
  virtual void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) = 0;
  // dx_i = keep_i dy_i / (1 - p)  (the same mask, drawn again)
  virtual void dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) = 0;
  // out = residual + dropout(x)          (Pre-LN residual; all [N, d])
  // Backward is dresidual = dout and dx = dropout_backward(dout).
  virtual void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                   Tensor& out) = 0;
  // Post-LN sub-layer end, fused: sum = residual + dropout(x); y = norm(sum) as norm_forward.
  virtual void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x,
                                        const DropoutSpec& dropout, const Tensor& gamma,
                                        const Tensor* beta, double eps, Tensor& sum, Tensor& y,
                                        Tensor& mean, Tensor& rstd) = 0;
  // dsum = norm_backward(dy) (dgamma, dbeta accumulated); dresidual = dsum;
  // dx = dropout_backward(dsum).
  virtual void add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma,
                                         const Tensor& mean, const Tensor& rstd,
                                         const DropoutSpec& dropout, const Tensor& dy,
                                         Tensor& dresidual, Tensor& dx, Tensor& dgamma,
                                         Tensor* dbeta) = 0;

  // ---- embedding ----------------------------------------------------------------------------
  // ids [B, T] int32 in [0, V), table [V, d], out [B, T, d]:
  //   out[b, t] = scale * table[ids[b, t]] + pos(offset + t)
  //   sinusoidal: pos(p)[2i] = sin(p / 10000^(2i/d)), pos(p)[2i+1] = cos(p / 10000^(2i/d))
  //   learned:    pos(p) = pos_table[p]  (pos_table [max_len, d])
  //   rope:       pos(p) = 0 (positions are rotated into q and k by rope_forward instead)
  // An id outside [0, V) or a position >= max_len (learned) throws std::out_of_range.
  virtual void embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos,
                                 const Tensor* pos_table, std::int64_t offset, Tensor& out) = 0;
  // dtable[ids[b, t]] += scale * dout[b, t];  dpos_table[offset + t] += dout[b, t] (learned only)
  virtual void embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos,
                                  std::int64_t offset, Tensor& dtable, Tensor* dpos_table) = 0;

  // ---- rotary positions (RoFormer, Su et al. 2021) ------------------------------------------
  // x, y [B, T, H*D], D even. For head h, position p = offset + t, pair i < D/2
  // (rotate-half layout, as GPT-NeoX and LLaMA):
  //   theta = p / 10000^(2i/D),  (y_i, y_{i+D/2}) = R(theta) (x_i, x_{i+D/2})
  virtual void rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) = 0;
  // dx = R(-theta) dy
  virtual void rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) = 0;

  // ---- loss ---------------------------------------------------------------------------------
  // logits [N, V], labels [N] int32, lse [N] (written: log sum_v exp(logits_n)).
  // For the rows with labels[n] != pad_id (count C), with target distribution q_n:
  //   uniform (PyTorch): q = (1 - eps) onehot(label) + eps / V
  //   fairseq:           q = (1 - eps) onehot(label) + eps / (V - 1) on every other class
  //   loss = (1 / C) sum_n sum_v -q_n(v) log softmax(logits_n)(v)
  // Returns the loss (0 when C == 0) and writes the count C into *count when not null.
  virtual double cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id,
                                       double eps, SmoothingForm form, Tensor& lse,
                                       std::int64_t* count) = 0;
  // dlogits_n = dloss / C (softmax(logits_n) - q_n) for non-pad rows, 0 for pad rows.
  virtual void cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse,
                                      int pad_id, double eps, SmoothingForm form, double dloss,
                                      Tensor& dlogits) = 0;
  // y [N, V] = log softmax(x) per row (max subtracted); decoding only, no backward.
  virtual void log_softmax_forward(const Tensor& x, Tensor& y) = 0;

  // ---- optimizer ----------------------------------------------------------------------------
  // Adam (Kingma & Ba 2015) with bias correction, step t >= 1; all tensors of one parameter:
  //   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
  //   param -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
  virtual void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr,
                           double beta1, double beta2, double eps, std::int64_t step) = 0;
};

// A scope of constant weights (Backend::begin_constant_weights) on `backend`.
class ConstantWeights {
 public:
  explicit ConstantWeights(Backend& backend) : backend_(backend) { backend_.begin_constant_weights(); }
  ~ConstantWeights() { backend_.end_constant_weights(); }
  ConstantWeights(const ConstantWeights&) = delete;
  ConstantWeights& operator=(const ConstantWeights&) = delete;

 private:
  Backend& backend_;
};

}  // namespace trepro
