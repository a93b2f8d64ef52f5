// Scaled dot-product attention, the readable version: each (batch row, head) materializes its
// [Tq, Tk] score matrix. The optimized backends compute the same thing flash-style.
//
//   q [B, Tq, H*Dk], k [B, Tk, H*Dk], v [B, Tk, H*Dv], out [B, Tq, H*Dv], lse [B, H, Tq]
//   key_padding [B, Tk] int32 (nonzero = masked) or null.
//   Head h of a row is the column slice [h*D, (h+1)*D): no transposes, only a row stride of H*D.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include <Eigen/Dense>

#include "core/backend_checks.h"

namespace trepro::reference {

namespace attention_detail {

template <class T> using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T> using HeadView = Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>>;
template <class T> using ConstHeadView = Eigen::Map<const Matrix<T>, 0, Eigen::OuterStride<>>;
template <class T> using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// Head h of batch row b of x [B, T, H*D], as a [T, D] matrix.
template <class T>
ConstHeadView<T> head(const Tensor& x, std::int64_t b, std::int64_t h, std::int64_t heads) {
  const std::int64_t t = x.dim(1), width = x.dim(2), d = width / heads;
  return ConstHeadView<T>(x.data<T>() + b * t * width + h * d, t, d, Eigen::OuterStride<>(width));
}
template <class T> HeadView<T> head(Tensor& x, std::int64_t b, std::int64_t h, std::int64_t heads) {
  const std::int64_t t = x.dim(1), width = x.dim(2), d = width / heads;
  return HeadView<T>(x.data<T>() + b * t * width + h * d, t, d, Eigen::OuterStride<>(width));
}

// s_ij = scale <q_i, k_j>, and -inf where query i may not see key j: a padded key, or a future
// key under the causal mask. Queries are aligned to the end of the keys (j <= i + Tk - Tq), so
// a decoder step with Tk - Tq cached positions masks exactly what the full computation masks.
template <class T>
Matrix<T> masked_scores(const ConstHeadView<T>& q, const ConstHeadView<T>& k, const std::int32_t* padding,
                        bool causal, T scale) {
  Matrix<T> s = scale * (q * k.transpose());
  const std::int64_t tq = s.rows(), tk = s.cols();
  for (std::int64_t i = 0; i < tq; ++i) {
    for (std::int64_t j = 0; j < tk; ++j) {
      const bool padded = padding != nullptr && padding[j] != 0;
      const bool future = causal && j > i + (tk - tq);
      if (padded || future) s(i, j) = -std::numeric_limits<T>::infinity();
    }
  }
  return s;
}

// keep_ij / (1 - p) for every weight of head (b, h), element index ((b*H + h)*Tq + i)*Tk + j;
// all ones when dropout is off. The mask is drawn, never stored: backward draws it again.
template <class T>
Matrix<T> dropout_factors(const DropoutSpec& dropout, std::int64_t b, std::int64_t h, std::int64_t heads,
                          std::int64_t tq, std::int64_t tk) {
  Matrix<T> factors = Matrix<T>::Ones(tq, tk);
  if (!dropout.active()) return factors;
  const T kept = static_cast<T>(1.0 / (1.0 - dropout.p));
  for (std::int64_t i = 0; i < tq; ++i) {
    for (std::int64_t j = 0; j < tk; ++j) {
      const auto element = static_cast<std::uint64_t>(((b * heads + h) * tq + i) * tk + j);
      factors(i, j) = dropout_keep(dropout.key, dropout.p, element) ? kept : T(0);
    }
  }
  return factors;
}

}  // namespace attention_detail

// For each b, h and query i, over the keys j query i may see:
//   s_j = scale <q_i, k_j>,  m = max_j s_j,  p_j = exp(s_j - m) / sum_j exp(s_j - m)
//   out_i = sum_j p~_j v_j   (p~ = p after inverted dropout; p~ = p when dropout is off)
//   lse_i = m + log sum_j exp(s_j - m)
// A query that sees no key gets out_i = 0 and lse_i = -inf. The statistics are computed in T:
// the float build shows float behaviour.
template <class T>
void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                       const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                       Tensor& out, Tensor& lse) {
  using namespace attention_detail;
  const auto d =
      checks::attention_forward_dims(dtype_of<T>(), Device::cpu, q, k, v, heads, key_padding, dropout, out, lse);
  constexpr T minus_inf = -std::numeric_limits<T>::infinity();
  for (std::int64_t b = 0; b < d.batch; ++b) {
    const std::int32_t* padding = key_padding ? key_padding->data<std::int32_t>() + b * d.tk : nullptr;
    for (std::int64_t h = 0; h < d.heads; ++h) {
      const Matrix<T> s = masked_scores<T>(head<T>(q, b, h, heads), head<T>(k, b, h, heads), padding, causal,
                                           static_cast<T>(scale));
      Matrix<T> p = Matrix<T>::Zero(d.tq, d.tk);
      T* lse_row = lse.data<T>() + (b * d.heads + h) * d.tq;
      for (std::int64_t i = 0; i < d.tq; ++i) {
        const T m = d.tk > 0 ? s.row(i).maxCoeff() : minus_inf;
        if (m == minus_inf) {  // no visible key: p stays 0, so out_i = 0
          lse_row[i] = minus_inf;
          continue;
        }
        // Eigen's vectorized exp clamps its argument at -709.78 in double, so exp(-inf) would be
        // ~1e-309, not 0: a hidden key must weigh exactly 0 (it is not allowed).
        p.row(i) = (s.row(i).array() == minus_inf).select(T(0), (s.row(i).array() - m).exp()).matrix();
        const T sum = p.row(i).sum();
        p.row(i) /= sum;
        lse_row[i] = m + std::log(sum);
      }
      const Matrix<T> p_dropped = p.cwiseProduct(dropout_factors<T>(dropout, b, h, d.heads, d.tq, d.tk));
      head<T>(out, b, h, heads).noalias() = p_dropped * head<T>(v, b, h, heads);
    }
  }
}

// Given dout (shape of out), writes dq, dk, dv (shapes of q, k, v). p is recomputed from the
// scores and the saved lse: p_ij = exp(s_ij - lse_i), 0 for a hidden key or a query with no key.
//   dv_j = sum_i p~_ij dout_i
//   dp~_ij = factor_ij <dout_i, v_j>        (factor = keep / (1 - p_drop), the forward's mask)
//   D_i = <dout_i, out_i> = sum_j p_ij dp~_ij    (delta below)
//   ds_ij = p_ij (dp~_ij - D_i)             (softmax backward)
//   dq_i = scale sum_j ds_ij k_j,  dk_j = scale sum_i ds_ij q_i
template <class T>
void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                        const Tensor* key_padding, bool causal, double scale, const DropoutSpec& dropout,
                        const Tensor& out, const Tensor& lse, const Tensor& dout, Tensor& dq, Tensor& dk,
                        Tensor& dv) {
  using namespace attention_detail;
  const auto d = checks::attention_backward_dims(dtype_of<T>(), Device::cpu, q, k, v, heads, key_padding, dropout, out,
                                                 lse, dout, dq, dk, dv);
  const T scale_t = static_cast<T>(scale);
  for (std::int64_t b = 0; b < d.batch; ++b) {
    const std::int32_t* padding = key_padding ? key_padding->data<std::int32_t>() + b * d.tk : nullptr;
    for (std::int64_t h = 0; h < d.heads; ++h) {
      const auto q_h = head<T>(q, b, h, heads);
      const auto k_h = head<T>(k, b, h, heads);
      const auto v_h = head<T>(v, b, h, heads);
      const auto dout_h = head<T>(dout, b, h, heads);
      const Matrix<T> s = masked_scores<T>(q_h, k_h, padding, causal, scale_t);
      const T* lse_row = lse.data<T>() + (b * d.heads + h) * d.tq;
      Matrix<T> p = Matrix<T>::Zero(d.tq, d.tk);
      for (std::int64_t i = 0; i < d.tq; ++i) {
        // exp(-inf - (-inf)) would be NaN: a query with no visible key keeps p = 0 and so
        // gets zero gradients.
        if (lse_row[i] != -std::numeric_limits<T>::infinity()) {
          p.row(i) = (s.row(i).array() == -std::numeric_limits<T>::infinity())
                         .select(T(0), (s.row(i).array() - lse_row[i]).exp())
                         .matrix();  // hidden keys exactly 0, as in the forward
        }
      }
      const Matrix<T> factors = dropout_factors<T>(dropout, b, h, d.heads, d.tq, d.tk);
      head<T>(dv, b, h, heads).noalias() = p.cwiseProduct(factors).transpose() * dout_h;
      const Matrix<T> dp = (dout_h * v_h.transpose()).cwiseProduct(factors);
      const Vector<T> delta = dout_h.cwiseProduct(head<T>(out, b, h, heads)).rowwise().sum();
      const Matrix<T> ds = p.cwiseProduct((dp.array().colwise() - delta.array()).matrix());
      head<T>(dq, b, h, heads).noalias() = scale_t * (ds * k_h);
      head<T>(dk, b, h, heads).noalias() = scale_t * (ds.transpose() * q_h);
    }
  }
}

}  // namespace trepro::reference
