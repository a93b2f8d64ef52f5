// A backend of a few ops, written in C++ outside the repository against the installed package's
// plugin ABI (core/plugin_abi.h): activation forward (relu, gelu, gelu_tanh) and swiglu forward,
// float32. Everything else is NULL: "not provided".
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/plugin_abi.h"

namespace {

double activate(std::int64_t act, double x) {
  switch (act) {
    case TREPRO_ACT_RELU: return x > 0.0 ? x : 0.0;
    case TREPRO_ACT_GELU: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case TREPRO_ACT_GELU_TANH: {
      const double k = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    default: return x;
  }
}

std::int64_t elements(const trepro_tensor& t) {
  std::int64_t n = 1;
  for (std::int32_t i = 0; i < t.rank; ++i) n *= t.shape[i];
  return n;
}

// tensors: x, y; ints: act.
int activation_forward(const trepro_call* c) {
  const float* x = static_cast<const float*>(c->tensors[0].data);
  float* y = static_cast<float*>(c->tensors[1].data);
  const std::int64_t act = c->ints[0];
  if (act < TREPRO_ACT_NONE || act > TREPRO_ACT_GELU_TANH) {
    std::snprintf(c->error, c->error_size, "activation_forward: unknown activation %lld", static_cast<long long>(act));
    return 1;
  }
  for (std::int64_t i = 0, n = elements(c->tensors[0]); i < n; ++i) y[i] = static_cast<float>(activate(act, x[i]));
  return 0;
}

// tensors: gate, up, y: y = silu(gate) * up.
int swiglu_forward(const trepro_call* c) {
  const float* gate = static_cast<const float*>(c->tensors[0].data);
  const float* up = static_cast<const float*>(c->tensors[1].data);
  float* y = static_cast<float*>(c->tensors[2].data);
  for (std::int64_t i = 0, n = elements(c->tensors[0]); i < n; ++i) {
    const double g = gate[i];
    y[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
  return 0;
}

trepro_plugin make_table() {
  trepro_plugin table{};
  table.abi_version = TREPRO_PLUGIN_ABI_VERSION;
  table.name = "out-of-tree";
  table.description = "out-of-tree C++ example: activation and swiglu forward, float32";
  table.f32[TREPRO_ACTIVATION_FORWARD] = activation_forward;
  table.f32[TREPRO_SWIGLU_FORWARD] = swiglu_forward;
  return table;
}

}  // namespace

extern "C" const trepro_plugin* trepro_backend_plugin(void) {
  static const trepro_plugin table = make_table();
  return &table;
}
