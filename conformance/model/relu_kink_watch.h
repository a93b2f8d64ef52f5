// A Backend that forwards every op to another one (ForwardingBackend) and watches the inputs of
// ReLU. Central differences across ReLU's kink measure a chord, not the slope: a false alarm of a
// gradient check. The watch records the sign pattern of one reference forward and counts the elements
// of every later forward (the perturbed ones of a finite-difference check) whose sign differs
// from it: zero crossings means every difference quotient saw the same linear piece.
#pragma once

#include <cstdint>
#include <vector>

#include "core/forwarding_backend.h"

namespace trepro::testing {

class ReluKinkWatch final : public ForwardingBackend {
 public:
  explicit ReluKinkWatch(Backend& inner) : ForwardingBackend(inner, Decorates::whole_backend) {}

  // The ReLU inputs of the forward run between these two calls become the reference pattern.
  void start_reference() {
    reference_.clear();
    recording_ = true;
  }
  void stop_reference() {
    recording_ = false;
    next_ = 0;
  }
  // Elements of later forwards whose ReLU input is on the other side of 0 than in the reference.
  std::int64_t kink_crossings() const { return crossings_; }

  void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Activation act, Tensor& y,
                      Tensor* pre) override {
    ForwardingBackend::linear_forward(x, w, b, act, y, pre);
    if (act == Activation::relu) record(*pre);
  }
  void activation_forward(Activation act, const Tensor& x, Tensor& y) override {
    ForwardingBackend::activation_forward(act, x, y);
    if (act == Activation::relu) record(x);
  }

 private:
  // Forwards call ReLU in the same order every time: call i of a later forward is compared with
  // call i mod n of the reference.
  void record(const Tensor& x) {
    Tensor host = inner().download(x);
    if (recording_) {
      reference_.push_back(std::move(host));
      return;
    }
    if (reference_.empty()) return;
    const Tensor& expected = reference_[next_++ % reference_.size()];
    for (std::int64_t i = 0; i < host.numel(); ++i) crossings_ += (host.at(i) > 0) != (expected.at(i) > 0);
  }

  bool recording_ = false;
  std::vector<Tensor> reference_;
  std::size_t next_ = 0;
  std::int64_t crossings_ = 0;
};

}  // namespace trepro::testing
