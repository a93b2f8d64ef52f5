/* The plain-C interface of a backend plugin: a shared library that computes any subset of the ops
 * of core/backend.h, in float32 and/or float64, without C++. trepro loads it with dlopen (the
 * paths in TREPRO_BACKEND_PLUGINS, colon-separated, or a `--plugin PATH` option) and lists it beside
 * its own backends as "<name>-f32" / "<name>-f64" (registry/plugin_backend.h): every conformance
 * binary, compare-kernels and `trepro forward` then run on it unchanged.
 *
 * The library exports one function, TREPRO_PLUGIN_ENTRY, returning a static description. trepro
 * reads abi_version first and refuses any other version than the one it was built with, naming the
 * file and both versions; a later version may change everything after abi_version.
 *
 * A function per op x direction x dtype; NULL means "not provided": the conformance suite reports
 * that op's tests as not provided (never as passed), and a model run on the plugin computes it
 * with the reference backend of the same dtype instead (Backend::provides says which is which).
 *
 * A function receives the arguments of the Backend member of the same name, in that member's
 * order, split by kind:
 *   tensors  every Tensor argument, inputs and outputs alike; an optional one that is absent
 *            (a null Tensor*) has data NULL;
 *   reals    every double (eps, scale, lr, beta1, beta2, dloss, a DropoutSpec's p);
 *   ints     every integer, bool and enum (heads, offset, pad_id, step, causal, the enums below,
 *            a DropoutSpec's seed, stream and site in that order).
 * Arguments are checked before the call (core/backend_checks.h: shapes, dtypes, ids, labels,
 * indices), so a function may assume them valid. Floating tensors have the table's dtype,
 * index tensors are int32, all contiguous, row-major and in host memory. Outputs follow the
 * member's documentation: gradients of inputs are written, gradients of parameters accumulated.
 * cross_entropy_forward stores its loss in *result. A function returns 0, or nonzero after
 * writing a message (NUL-terminated, at most error_size bytes) into error.
 */
#ifndef TREPRO_CORE_PLUGIN_ABI_H
#define TREPRO_CORE_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TREPRO_PLUGIN_ABI_VERSION 1u
#define TREPRO_PLUGIN_ENTRY "trepro_backend_plugin"

enum trepro_dtype { TREPRO_F32 = 0, TREPRO_F64 = 1, TREPRO_I32 = 2 };
/* The enums of core/backend.h, as ints. */
enum trepro_activation { TREPRO_ACT_NONE = 0, TREPRO_ACT_RELU = 1, TREPRO_ACT_GELU = 2, TREPRO_ACT_GELU_TANH = 3 };
enum trepro_norm_kind { TREPRO_NORM_LAYER = 0, TREPRO_NORM_RMS = 1 };
enum trepro_positional { TREPRO_POS_SINUSOIDAL = 0, TREPRO_POS_LEARNED = 1, TREPRO_POS_ROPE = 2 };
enum trepro_smoothing { TREPRO_SMOOTHING_UNIFORM = 0, TREPRO_SMOOTHING_FAIRSEQ = 1 };

/* The op x directions, in the order of core/backend.h (every_op_direction()). */
enum trepro_op {
  TREPRO_LINEAR_FORWARD, TREPRO_LINEAR_BACKWARD,
  TREPRO_ACTIVATION_FORWARD, TREPRO_ACTIVATION_BACKWARD,
  TREPRO_SWIGLU_FORWARD, TREPRO_SWIGLU_BACKWARD,
  TREPRO_ATTENTION_FORWARD, TREPRO_ATTENTION_BACKWARD,
  TREPRO_NORM_FORWARD, TREPRO_NORM_BACKWARD,
  TREPRO_DROPOUT_FORWARD, TREPRO_DROPOUT_BACKWARD,
  TREPRO_ADD_DROPOUT_FORWARD,
  TREPRO_ADD_DROPOUT_NORM_FORWARD, TREPRO_ADD_DROPOUT_NORM_BACKWARD,
  TREPRO_EMBEDDING_FORWARD, TREPRO_EMBEDDING_BACKWARD,
  TREPRO_ROPE_FORWARD, TREPRO_ROPE_BACKWARD,
  TREPRO_CROSS_ENTROPY_FORWARD, TREPRO_CROSS_ENTROPY_BACKWARD,
  TREPRO_LOG_SOFTMAX_FORWARD,
  TREPRO_ADAM_UPDATE,
  TREPRO_CONCAT_TIME,
  TREPRO_SELECT_BATCH,
  TREPRO_OP_COUNT
};

typedef struct trepro_tensor {
  void* data; /* NULL: an optional tensor that is absent */
  const int64_t* shape;
  int32_t rank;
  int32_t dtype; /* enum trepro_dtype */
} trepro_tensor;

typedef struct trepro_call {
  trepro_tensor* tensors;
  int32_t tensor_count;
  const double* reals;
  int32_t real_count;
  const int64_t* ints;
  int32_t int_count;
  double* result; /* cross_entropy_forward's loss; NULL otherwise */
  char* error;
  size_t error_size;
} trepro_call;

typedef int (*trepro_op_fn)(const trepro_call* call);

typedef struct trepro_plugin {
  uint32_t abi_version; /* TREPRO_PLUGIN_ABI_VERSION: first, whatever the version */
  const char* name;     /* lower case, digits and '-': the backends are <name>-f32, <name>-f64 */
  const char* description;
  trepro_op_fn f32[TREPRO_OP_COUNT]; /* all NULL: no float32 backend */
  trepro_op_fn f64[TREPRO_OP_COUNT]; /* all NULL: no float64 backend */
} trepro_plugin;

/* The symbol a plugin exports (TREPRO_PLUGIN_ENTRY). */
typedef const trepro_plugin* (*trepro_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
