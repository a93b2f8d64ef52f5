/* A backend plugin in plain C (core/plugin_abi.h): norm forward (LayerNorm and RMSNorm) and
 * log_softmax forward in float32. Every other op is NULL, so the conformance suite reports it as
 * not provided. Built twice (examples/plugin/CMakeLists.txt): as "example-c", and with
 * EXAMPLE_PLUGIN_BROKEN as "example-c-broken", whose log_softmax leaves the row's maximum out of
 * its normalizer: the ctest plugin_conformance shows that exactly that op's tests fail.
 *
 *   TREPRO_BACKEND_PLUGINS=build/release/examples/plugin/libtrepro_example_plugin.so \
 *     build/release/conformance/ops/op_tests --gtest_filter='*example_c_f32'
 */
#include <math.h>
#include <stdio.h>

#include "core/plugin_abi.h"

#ifdef EXAMPLE_PLUGIN_BROKEN
#define EXAMPLE_NAME "example-c-broken"
#else
#define EXAMPLE_NAME "example-c"
#endif

/* tensors: x [n, d], gamma [d], beta [d] (NULL data for rms), y [n, d], mean [n], rstd [n];
 * reals: eps; ints: kind. Sums in double, as a plain implementation would. */
static int norm_forward_f32(const trepro_call* c) {
  const float* x = (const float*)c->tensors[0].data;
  const float* gamma = (const float*)c->tensors[1].data;
  const float* beta = (const float*)c->tensors[2].data;
  float* y = (float*)c->tensors[3].data;
  float* mean_out = (float*)c->tensors[4].data;
  float* rstd_out = (float*)c->tensors[5].data;
  const int64_t n = c->tensors[0].shape[0], d = c->tensors[0].shape[1];
  const double eps = c->reals[0];
  const int layer = c->ints[0] == TREPRO_NORM_LAYER;
  for (int64_t r = 0; r < n; ++r) {
    const float* row = x + r * d;
    double mean = 0.0, var = 0.0;
    if (layer) {
      for (int64_t i = 0; i < d; ++i) mean += row[i];
      mean /= (double)d;
    }
    for (int64_t i = 0; i < d; ++i) var += (row[i] - mean) * (row[i] - mean);
    const double rstd = 1.0 / sqrt(var / (double)d + eps);
    for (int64_t i = 0; i < d; ++i) {
      const double v = (row[i] - mean) * rstd * gamma[i] + (layer ? beta[i] : 0.0);
      y[r * d + i] = (float)v;
    }
    mean_out[r] = (float)mean;
    rstd_out[r] = (float)rstd;
  }
  return 0;
}

/* tensors: x [n, v], y [n, v]: y = x - max - log sum exp(x - max) per row. */
static int log_softmax_forward_f32(const trepro_call* c) {
  const float* x = (const float*)c->tensors[0].data;
  float* y = (float*)c->tensors[1].data;
  const int64_t n = c->tensors[0].shape[0], v = c->tensors[0].shape[1];
  for (int64_t r = 0; r < n; ++r) {
    const float* row = x + r * v;
    double max = row[0], sum = 0.0;
    for (int64_t i = 1; i < v; ++i) max = row[i] > max ? row[i] : max;
    for (int64_t i = 0; i < v; ++i) {
#ifdef EXAMPLE_PLUGIN_BROKEN
      if (row[i] == max) continue; /* the deliberate error: the largest term is left out */
#endif
      sum += exp(row[i] - max);
    }
    if (!(sum > 0.0)) {
      snprintf(c->error, c->error_size, "log_softmax_forward: row %lld sums to %g", (long long)r, sum);
      return 1;
    }
    const double lse = max + log(sum);
    for (int64_t i = 0; i < v; ++i) y[r * v + i] = (float)(row[i] - lse);
  }
  return 0;
}

static const trepro_plugin example_plugin = {
    TREPRO_PLUGIN_ABI_VERSION,
    EXAMPLE_NAME,
    "plain-C example: norm and log_softmax forward, float32",
    {[TREPRO_NORM_FORWARD] = norm_forward_f32, [TREPRO_LOG_SOFTMAX_FORWARD] = log_softmax_forward_f32},
    {0},
};

const trepro_plugin* trepro_backend_plugin(void) { return &example_plugin; }
