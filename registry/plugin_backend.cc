#include "registry/plugin_backend.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>

#include "core/backend_checks.h"
#include "core/forwarding_backend.h"
#include "registry/registry.h"

namespace trepro {

namespace {

const trepro_op_fn* functions(const trepro_plugin& table, DType dtype) {
  return dtype == DType::f32 ? table.f32 : table.f64;
}

bool has_any(const trepro_plugin& table, DType dtype) {
  const trepro_op_fn* f = functions(table, dtype);
  return std::any_of(f, f + TREPRO_OP_COUNT, [](trepro_op_fn fn) { return fn != nullptr; });
}

bool valid_name(const char* name) {
  if (!name || !*name) return false;
  for (const char* c = name; *c; ++c) {
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-')) return false;
  }
  return true;
}

std::int64_t key_int(std::uint64_t v) { return static_cast<std::int64_t>(v); }

// The plugin's functions of one dtype; the ops without one, memory and the elementwise helpers
// are the reference backend's (ForwardingBackend), which provides() does not credit it with.
class PluginBackend final : public ForwardingBackend {
 public:
  PluginBackend(std::shared_ptr<const Plugin> plugin, DType dtype, std::unique_ptr<Backend> reference)
      : ForwardingBackend(*reference, own_ops(*plugin, dtype)),
        plugin_(std::move(plugin)),
        reference_(std::move(reference)),
        fn_(functions(plugin_->table(), dtype)) {}

  std::string name() const override { return plugin_backend_name(*plugin_, dtype()); }
  void set_precision(Precision precision) override { Backend::set_precision(precision); }

  void concat_time(const Tensor& a, const Tensor& b, Tensor& out) override {
    if (!fn_[TREPRO_CONCAT_TIME]) return ForwardingBackend::concat_time(a, b, out);
    checks::concat_time_dims(dtype(), device(), a, b, out);
    call(TREPRO_CONCAT_TIME, {&a, &b, &out}, {}, {});
  }
  void select_batch(const Tensor& x, const Tensor& indices, Tensor& out) override {
    if (!fn_[TREPRO_SELECT_BATCH]) return ForwardingBackend::select_batch(x, indices, out);
    checks::select_batch_dims(dtype(), device(), x, indices, out);
    checks::select_batch_values(indices.data<std::int32_t>(), indices.numel(), x.dim(0));
    call(TREPRO_SELECT_BATCH, {&x, &indices, &out}, {}, {});
  }

  void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                      Tensor* pre) override {
    if (!fn_[TREPRO_LINEAR_FORWARD]) return ForwardingBackend::linear_forward(x, w, b, act, y, pre);
    checks::linear_forward_dims(dtype(), device(), x, w, b, act, y, pre);
    call(TREPRO_LINEAR_FORWARD, {&x, &w, b, &y, pre}, {}, {static_cast<std::int64_t>(act)});
  }
  void linear_backward(const Tensor& x, const Tensor& w, const Tensor* pre, Activation act, const Tensor& dy,
                       Tensor* dx, Tensor& dw, Tensor* db) override {
    if (!fn_[TREPRO_LINEAR_BACKWARD]) return ForwardingBackend::linear_backward(x, w, pre, act, dy, dx, dw, db);
    checks::linear_backward_dims(dtype(), device(), x, w, pre, act, dy, dx, dw, db);
    call(TREPRO_LINEAR_BACKWARD, {&x, &w, pre, &dy, dx, &dw, db}, {}, {static_cast<std::int64_t>(act)});
  }

  void activation_forward(Activation act, const Tensor& x, Tensor& y) override {
    if (!fn_[TREPRO_ACTIVATION_FORWARD]) return ForwardingBackend::activation_forward(act, x, y);
    checks::activation_forward_dims(dtype(), device(), x, y);
    call(TREPRO_ACTIVATION_FORWARD, {&x, &y}, {}, {static_cast<std::int64_t>(act)});
  }
  void activation_backward(Activation act, const Tensor& x, const Tensor& dy, Tensor& dx) override {
    if (!fn_[TREPRO_ACTIVATION_BACKWARD]) return ForwardingBackend::activation_backward(act, x, dy, dx);
    checks::activation_backward_dims(dtype(), device(), x, dy, dx);
    call(TREPRO_ACTIVATION_BACKWARD, {&x, &dy, &dx}, {}, {static_cast<std::int64_t>(act)});
  }
  void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) override {
    if (!fn_[TREPRO_SWIGLU_FORWARD]) return ForwardingBackend::swiglu_forward(gate, up, y);
    checks::swiglu_forward_dims(dtype(), device(), gate, up, y);
    call(TREPRO_SWIGLU_FORWARD, {&gate, &up, &y}, {}, {});
  }
  void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) override {
    if (!fn_[TREPRO_SWIGLU_BACKWARD]) return ForwardingBackend::swiglu_backward(gate, up, dy, dgate, dup);
    checks::swiglu_backward_dims(dtype(), device(), gate, up, dy, dgate, dup);
    call(TREPRO_SWIGLU_BACKWARD, {&gate, &up, &dy, &dgate, &dup}, {}, {});
  }

  void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                         bool causal, double scale, const DropoutSpec& dropout, Tensor& out, Tensor& lse) override {
    if (!fn_[TREPRO_ATTENTION_FORWARD]) {
      return ForwardingBackend::attention_forward(q, k, v, heads, key_padding, causal, scale, dropout, out, lse);
    }
    checks::attention_forward_dims(dtype(), device(), q, k, v, heads, key_padding, dropout, out, lse);
    call(TREPRO_ATTENTION_FORWARD, {&q, &k, &v, key_padding, &out, &lse}, {scale, dropout.p},
         {heads, causal, key_int(dropout.key.seed), key_int(dropout.key.stream), dropout.key.site});
  }
  void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, int heads, const Tensor* key_padding,
                          bool causal, double scale, const DropoutSpec& dropout, const Tensor& out, const Tensor& lse,
                          const Tensor& dout, Tensor& dq, Tensor& dk, Tensor& dv) override {
    if (!fn_[TREPRO_ATTENTION_BACKWARD]) {
      return ForwardingBackend::attention_backward(q, k, v, heads, key_padding, causal, scale, dropout, out, lse, dout,
                                                   dq, dk, dv);
    }
    checks::attention_backward_dims(dtype(), device(), q, k, v, heads, key_padding, dropout, out, lse, dout, dq, dk, dv);
    call(TREPRO_ATTENTION_BACKWARD, {&q, &k, &v, key_padding, &out, &lse, &dout, &dq, &dk, &dv}, {scale, dropout.p},
         {heads, causal, key_int(dropout.key.seed), key_int(dropout.key.stream), dropout.key.site});
  }

  void norm_forward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor* beta, double eps, Tensor& y,
                    Tensor& mean, Tensor& rstd) override {
    if (!fn_[TREPRO_NORM_FORWARD]) return ForwardingBackend::norm_forward(kind, x, gamma, beta, eps, y, mean, rstd);
    checks::norm_forward_dims("norm_forward", dtype(), device(), kind, "x", x, gamma, beta, eps, y, mean, rstd);
    call(TREPRO_NORM_FORWARD, {&x, &gamma, beta, &y, &mean, &rstd}, {eps}, {static_cast<std::int64_t>(kind)});
  }
  void norm_backward(NormKind kind, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                     const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor* dbeta) override {
    if (!fn_[TREPRO_NORM_BACKWARD]) {
      return ForwardingBackend::norm_backward(kind, x, gamma, mean, rstd, dy, dx, dgamma, dbeta);
    }
    checks::norm_backward_dims("norm_backward", dtype(), device(), kind, "x", x, gamma, mean, rstd, dy, "dx", dx, dgamma,
                               dbeta);
    call(TREPRO_NORM_BACKWARD, {&x, &gamma, &mean, &rstd, &dy, &dx, &dgamma, dbeta}, {},
         {static_cast<std::int64_t>(kind)});
  }

  void dropout_forward(const Tensor& x, const DropoutSpec& dropout, Tensor& y) override {
    if (!fn_[TREPRO_DROPOUT_FORWARD]) return ForwardingBackend::dropout_forward(x, dropout, y);
    checks::dropout_dims("dropout_forward", dtype(), device(), "x", x, dropout, "y", y);
    call(TREPRO_DROPOUT_FORWARD, {&x, &y}, {dropout.p}, key_ints(dropout));
  }
  void dropout_backward(const Tensor& dy, const DropoutSpec& dropout, Tensor& dx) override {
    if (!fn_[TREPRO_DROPOUT_BACKWARD]) return ForwardingBackend::dropout_backward(dy, dropout, dx);
    checks::dropout_dims("dropout_backward", dtype(), device(), "dy", dy, dropout, "dx", dx);
    call(TREPRO_DROPOUT_BACKWARD, {&dy, &dx}, {dropout.p}, key_ints(dropout));
  }
  void add_dropout_forward(const Tensor& residual, const Tensor& x, const DropoutSpec& dropout, Tensor& out) override {
    if (!fn_[TREPRO_ADD_DROPOUT_FORWARD]) return ForwardingBackend::add_dropout_forward(residual, x, dropout, out);
    checks::add_dropout_forward_dims(dtype(), device(), residual, x, dropout, out);
    call(TREPRO_ADD_DROPOUT_FORWARD, {&residual, &x, &out}, {dropout.p}, key_ints(dropout));
  }
  void add_dropout_norm_forward(NormKind kind, const Tensor& residual, const Tensor& x, const DropoutSpec& dropout,
                                const Tensor& gamma, const Tensor* beta, double eps, Tensor& sum, Tensor& y,
                                Tensor& mean, Tensor& rstd) override {
    if (!fn_[TREPRO_ADD_DROPOUT_NORM_FORWARD]) {
      return ForwardingBackend::add_dropout_norm_forward(kind, residual, x, dropout, gamma, beta, eps, sum, y, mean,
                                                         rstd);
    }
    checks::add_dropout_norm_forward_dims(dtype(), device(), kind, residual, x, dropout, gamma, beta, eps, sum, y, mean,
                                          rstd);
    call(TREPRO_ADD_DROPOUT_NORM_FORWARD, {&residual, &x, &gamma, beta, &sum, &y, &mean, &rstd}, {dropout.p, eps},
         with_kind(kind, dropout));
  }
  void add_dropout_norm_backward(NormKind kind, const Tensor& sum, const Tensor& gamma, const Tensor& mean,
                                 const Tensor& rstd, const DropoutSpec& dropout, const Tensor& dy, Tensor& dresidual,
                                 Tensor& dx, Tensor& dgamma, Tensor* dbeta) override {
    if (!fn_[TREPRO_ADD_DROPOUT_NORM_BACKWARD]) {
      return ForwardingBackend::add_dropout_norm_backward(kind, sum, gamma, mean, rstd, dropout, dy, dresidual, dx,
                                                          dgamma, dbeta);
    }
    checks::add_dropout_norm_backward_dims(dtype(), device(), kind, sum, gamma, mean, rstd, dropout, dy, dresidual, dx,
                                           dgamma, dbeta);
    call(TREPRO_ADD_DROPOUT_NORM_BACKWARD, {&sum, &gamma, &mean, &rstd, &dy, &dresidual, &dx, &dgamma, dbeta},
         {dropout.p}, with_kind(kind, dropout));
  }

  void embedding_forward(const Tensor& ids, const Tensor& table, double scale, Positional pos, const Tensor* pos_table,
                         std::int64_t offset, Tensor& out) override {
    if (!fn_[TREPRO_EMBEDDING_FORWARD]) {
      return ForwardingBackend::embedding_forward(ids, table, scale, pos, pos_table, offset, out);
    }
    const checks::EmbeddingDims dims = checks::embedding_dims("embedding_forward", dtype(), device(), ids, "table", table,
                                                              "out", out, "pos_table", pos_table, pos, offset);
    checks::embedding_values("embedding_forward", ids.data<std::int32_t>(), dims, "pos_table", pos_table, offset);
    call(TREPRO_EMBEDDING_FORWARD, {&ids, &table, pos_table, &out}, {scale}, {static_cast<std::int64_t>(pos), offset});
  }
  void embedding_backward(const Tensor& ids, const Tensor& dout, double scale, Positional pos, std::int64_t offset,
                          Tensor& dtable, Tensor* dpos_table) override {
    if (!fn_[TREPRO_EMBEDDING_BACKWARD]) {
      return ForwardingBackend::embedding_backward(ids, dout, scale, pos, offset, dtable, dpos_table);
    }
    const checks::EmbeddingDims dims = checks::embedding_dims("embedding_backward", dtype(), device(), ids, "dtable",
                                                              dtable, "dout", dout, "dpos_table", dpos_table, pos, offset);
    checks::embedding_values("embedding_backward", ids.data<std::int32_t>(), dims, "dpos_table", dpos_table, offset);
    call(TREPRO_EMBEDDING_BACKWARD, {&ids, &dout, &dtable, dpos_table}, {scale},
         {static_cast<std::int64_t>(pos), offset});
  }

  void rope_forward(const Tensor& x, int heads, std::int64_t offset, Tensor& y) override {
    if (!fn_[TREPRO_ROPE_FORWARD]) return ForwardingBackend::rope_forward(x, heads, offset, y);
    checks::rope_dims("rope_forward", dtype(), device(), "x", x, heads, offset, "y", y);
    call(TREPRO_ROPE_FORWARD, {&x, &y}, {}, {heads, offset});
  }
  void rope_backward(const Tensor& dy, int heads, std::int64_t offset, Tensor& dx) override {
    if (!fn_[TREPRO_ROPE_BACKWARD]) return ForwardingBackend::rope_backward(dy, heads, offset, dx);
    checks::rope_dims("rope_backward", dtype(), device(), "dy", dy, heads, offset, "dx", dx);
    call(TREPRO_ROPE_BACKWARD, {&dy, &dx}, {}, {heads, offset});
  }

  double cross_entropy_forward(const Tensor& logits, const Tensor& labels, int pad_id, double eps, SmoothingForm form,
                               Tensor& lse, std::int64_t* count) override {
    if (!fn_[TREPRO_CROSS_ENTROPY_FORWARD]) {
      return ForwardingBackend::cross_entropy_forward(logits, labels, pad_id, eps, form, lse, count);
    }
    const checks::CrossEntropyDims dims = checks::cross_entropy_forward_dims(dtype(), device(), logits, labels, eps, form, lse);
    const std::int64_t c = checks::cross_entropy_values("cross_entropy_forward", labels.data<std::int32_t>(), dims, pad_id);
    double loss = 0.0;
    call(TREPRO_CROSS_ENTROPY_FORWARD, {&logits, &labels, &lse}, {eps}, {pad_id, static_cast<std::int64_t>(form)}, &loss);
    if (count) *count = c;
    return loss;
  }
  void cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& lse, int pad_id, double eps,
                              SmoothingForm form, double dloss, Tensor& dlogits) override {
    if (!fn_[TREPRO_CROSS_ENTROPY_BACKWARD]) {
      return ForwardingBackend::cross_entropy_backward(logits, labels, lse, pad_id, eps, form, dloss, dlogits);
    }
    const checks::CrossEntropyDims dims =
        checks::cross_entropy_backward_dims(dtype(), device(), logits, labels, lse, eps, form, dlogits);
    checks::cross_entropy_values("cross_entropy_backward", labels.data<std::int32_t>(), dims, pad_id);
    call(TREPRO_CROSS_ENTROPY_BACKWARD, {&logits, &labels, &lse, &dlogits}, {eps, dloss},
         {pad_id, static_cast<std::int64_t>(form)});
  }
  void log_softmax_forward(const Tensor& x, Tensor& y) override {
    if (!fn_[TREPRO_LOG_SOFTMAX_FORWARD]) return ForwardingBackend::log_softmax_forward(x, y);
    checks::log_softmax_forward_dims(dtype(), device(), x, y);
    call(TREPRO_LOG_SOFTMAX_FORWARD, {&x, &y}, {}, {});
  }

  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, double lr, double beta1, double beta2,
                   double eps, std::int64_t step) override {
    if (!fn_[TREPRO_ADAM_UPDATE]) return ForwardingBackend::adam_update(param, grad, m, v, lr, beta1, beta2, eps, step);
    checks::adam_update_dims(dtype(), device(), param, grad, m, v, beta1, beta2, step);
    call(TREPRO_ADAM_UPDATE, {&param, &grad, &m, &v}, {lr, beta1, beta2, eps}, {step});
  }

 private:
  static std::vector<OpDirection> own_ops(const Plugin& plugin, DType dtype) {
    const std::vector<OpDirection> all = every_op_direction();
    if (all.size() != TREPRO_OP_COUNT) throw std::logic_error("core/plugin_abi.h lists another set of ops than core/backend.h");
    std::vector<OpDirection> own;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (functions(plugin.table(), dtype)[i]) own.push_back(all[i]);
    }
    return own;
  }
  static std::vector<std::int64_t> key_ints(const DropoutSpec& dropout) {
    return {key_int(dropout.key.seed), key_int(dropout.key.stream), dropout.key.site};
  }
  static std::vector<std::int64_t> with_kind(NormKind kind, const DropoutSpec& dropout) {
    std::vector<std::int64_t> ints = {static_cast<std::int64_t>(kind)};
    for (std::int64_t i : key_ints(dropout)) ints.push_back(i);
    return ints;
  }

  void call(int op, std::initializer_list<const Tensor*> tensors, std::vector<double> reals, std::vector<std::int64_t> ints,
            double* result = nullptr) {
    std::vector<trepro_tensor> args;
    for (const Tensor* t : tensors) {
      if (!t) {
        args.push_back({nullptr, nullptr, 0, 0});
        continue;
      }
      const int32_t code = t->dtype() == DType::f32 ? TREPRO_F32 : t->dtype() == DType::f64 ? TREPRO_F64 : TREPRO_I32;
      // The plugin writes the outputs; the inputs' constness is the ABI's documentation.
      args.push_back({const_cast<std::byte*>(t->raw()), t->shape().data(), t->rank(), code});
    }
    char error[512] = "";
    const trepro_call c{args.data(), static_cast<int32_t>(args.size()), reals.data(), static_cast<int32_t>(reals.size()),
                        ints.data(), static_cast<int32_t>(ints.size()), result, error, sizeof(error)};
    if (fn_[op](&c) != 0) {
      error[sizeof(error) - 1] = '\0';
      throw std::runtime_error(describe(every_op_direction()[op]) + " of plugin " + plugin_->path() + " failed: " +
                               (error[0] ? error : "(no message)"));
    }
  }

  std::shared_ptr<const Plugin> plugin_;
  std::unique_ptr<Backend> reference_;
  const trepro_op_fn* fn_;
};

}  // namespace

std::shared_ptr<const Plugin> Plugin::load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw std::invalid_argument("backend plugin " + path + ": cannot be loaded (" + (why ? why : "dlopen failed") +
                                "); expected a shared library implementing core/plugin_abi.h");
  }
  auto refuse = [&](const std::string& why) {
    dlclose(handle);
    return std::invalid_argument("backend plugin " + path + ": " + why);
  };
  auto entry = reinterpret_cast<trepro_plugin_entry_fn>(dlsym(handle, TREPRO_PLUGIN_ENTRY));
  if (!entry) throw refuse("has no symbol " TREPRO_PLUGIN_ENTRY "; expected a function returning const trepro_plugin* (core/plugin_abi.h)");
  const trepro_plugin* table = entry();
  if (!table) throw refuse(TREPRO_PLUGIN_ENTRY "() returned NULL; expected its trepro_plugin table");
  if (table->abi_version != TREPRO_PLUGIN_ABI_VERSION) {
    throw refuse("has ABI version " + std::to_string(table->abi_version) + "; this trepro reads version " +
                 std::to_string(TREPRO_PLUGIN_ABI_VERSION) + " (core/plugin_abi.h): rebuild it against that header");
  }
  if (!valid_name(table->name)) throw refuse("name must be lower-case letters, digits and '-', and not empty");
  if (!table->description) throw refuse("description is NULL; expected one line saying what it is");
  if (!has_any(*table, DType::f32) && !has_any(*table, DType::f64)) {
    throw refuse("provides no function in f32 or f64; expected at least one");
  }
  return std::shared_ptr<const Plugin>(new Plugin(path, handle, table));
}

Plugin::~Plugin() { dlclose(handle_); }

std::vector<DType> Plugin::dtypes() const {
  std::vector<DType> out;
  for (DType dtype : {DType::f32, DType::f64}) {
    if (has_any(*table_, dtype)) out.push_back(dtype);
  }
  return out;
}

std::vector<std::string> plugin_paths() {
  std::vector<std::string> paths;
  const char* list = std::getenv("TREPRO_BACKEND_PLUGINS");
  std::string rest = list ? list : "";
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    std::string path = rest.substr(0, colon);
    if (!path.empty()) paths.push_back(path);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  }
  return paths;
}

void add_plugin_path(const std::string& path) {
  const char* list = std::getenv("TREPRO_BACKEND_PLUGINS");
  const std::string joined = list && *list ? std::string(list) + ":" + path : path;
  setenv("TREPRO_BACKEND_PLUGINS", joined.c_str(), 1);
}

std::string plugin_backend_name(const Plugin& plugin, DType dtype) {
  return std::string(plugin.table().name) + (dtype == DType::f32 ? "-f32" : "-f64");
}

std::unique_ptr<Backend> make_plugin_backend(std::shared_ptr<const Plugin> plugin, DType dtype) {
  return std::make_unique<PluginBackend>(std::move(plugin), dtype, make_reference_backend(dtype));
}

}  // namespace trepro
