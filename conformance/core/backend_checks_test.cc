// core/backend_checks: the one implementation of every op's argument checks, called by every
// backend (reference, cpu, cuda). These tests pin the messages and what each check returns on
// host tensors, with the CUDA backend's device as well, so that checks a GPU-less machine never
// runs on a device still run here.
#include "core/backend_checks.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/exception_message.h"

namespace trepro::checks {
namespace {

using ::testing::HasSubstr;
using trepro::testing::message_of;

Tensor f32(const Shape& shape) { return Tensor::zeros(shape, DType::f32); }
Tensor i32(const Shape& shape) { return Tensor::zeros(shape, DType::i32); }

constexpr DType kF32 = DType::f32;
constexpr Device kCpu = Device::cpu;

TEST(BackendChecks, ElementwiseNamesTheOpAndTheDtype) {
  Tensor x = Tensor::zeros({2}, DType::f64);
  EXPECT_THAT(message_of<std::invalid_argument>([&] { elementwise_dims("scale_inplace", kF32, kCpu, x); }),
              HasSubstr("scale_inplace: x has dtype"));
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              add_inplace_dims(kF32, kCpu, f32({3, 4}), f32({4, 3}));
            }),
            "add_inplace: x has shape [4, 3], expected [3, 4]");
}

TEST(BackendChecks, AWrongDeviceIsNamed) {
  EXPECT_EQ(message_of<std::invalid_argument>([&] { activation_forward_dims(kF32, Device::cuda, f32({2}), f32({2})); }),
            "activation_forward: x is on " + std::string(device_name(Device::cpu)) + ", expected " +
                std::string(device_name(Device::cuda)));
}

TEST(BackendChecks, ConcatTimeReturnsItsDims) {
  const ConcatTimeDims d = concat_time_dims(kF32, kCpu, f32({2, 3, 4}), f32({2, 1, 4}), f32({2, 4, 4}));
  EXPECT_EQ(d.batch, 2);
  EXPECT_EQ(d.ta, 3);
  EXPECT_EQ(d.tb, 1);
  EXPECT_EQ(d.d, 4);
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              concat_time_dims(kF32, kCpu, f32({2, 3, 4}), f32({2, 1, 4}), f32({2, 3, 4}));
            }),
            "concat_time: out has shape [2, 3, 4], expected [2, 4, 4]");
}

TEST(BackendChecks, SelectBatchIndicesAreInRange) {
  select_batch_dims(kF32, kCpu, f32({3, 4}), i32({2}), f32({2, 4}));
  const std::vector<std::int32_t> good = {2, 0}, bad = {0, 3};
  select_batch_values(good.data(), 2, 3);
  EXPECT_EQ(message_of<std::out_of_range>([&] { select_batch_values(bad.data(), 2, 3); }),
            "select_batch: indices[1] = 3 is outside [0, 3)");
}

TEST(BackendChecks, LinearNeedsPreForAnActivation) {
  const LinearDims d =
      linear_forward_dims(kF32, kCpu, f32({3, 4}), f32({5, 4}), nullptr, Activation::none, f32({3, 5}), nullptr);
  EXPECT_EQ(d.n, 3);
  EXPECT_EQ(d.k, 4);
  EXPECT_EQ(d.m, 5);
  EXPECT_EQ(
      message_of<std::invalid_argument>([&] {
        linear_forward_dims(kF32, kCpu, f32({3, 4}), f32({5, 4}), nullptr, Activation::relu, f32({3, 5}), nullptr);
      }),
      "linear_forward: pre is required when the activation is not none");
  Tensor dx = f32({3, 4});
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              linear_backward_dims(kF32, kCpu, f32({3, 4}), f32({5, 4}), nullptr, Activation::none, f32({3, 5}), &dx,
                                   f32({4, 5}), nullptr);
            }),
            "linear_backward: dw has shape [4, 5], expected [5, 4]");
}

TEST(BackendChecks, SwigluNeedsRank2) {
  EXPECT_EQ(message_of<std::invalid_argument>([&] { swiglu_forward_dims(kF32, kCpu, f32({6}), f32({6}), f32({6})); }),
            "swiglu_forward: gate has shape [6], expected rank 2");
}

TEST(BackendChecks, AttentionChecksItsOutputsAndDropout) {
  const Tensor q = f32({2, 3, 8}), k = f32({2, 4, 8}), v = f32({2, 4, 6});
  const AttentionDims d =
      attention_forward_dims(kF32, kCpu, q, k, v, 2, nullptr, DropoutSpec{}, f32({2, 3, 6}), f32({2, 2, 3}));
  EXPECT_EQ(d.dk, 4);
  EXPECT_EQ(d.dv, 3);
  DropoutSpec one;
  one.p = 1.0;
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              attention_forward_dims(kF32, kCpu, q, k, v, 2, nullptr, one, f32({2, 3, 6}), f32({2, 2, 3}));
            }),
            "attention_forward: dropout p must be in [0, 1)");
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              attention_backward_dims(kF32, kCpu, q, k, v, 2, nullptr, DropoutSpec{}, f32({2, 3, 6}), f32({2, 2, 3}),
                                      f32({2, 3, 6}), f32({2, 3, 8}), f32({2, 3, 8}), f32({2, 4, 6}));
            }),
            "attention_backward: dk has shape [2, 3, 8], expected [2, 4, 8]");
}

TEST(BackendChecks, NormBiasFollowsTheKind) {
  const Tensor x = f32({2, 4}), gamma = f32({4}), beta = f32({4}), y = f32({2, 4}), stat = f32({2});
  const NormDims d =
      norm_forward_dims("norm_forward", kF32, kCpu, NormKind::layer, "x", x, gamma, &beta, 1e-5, y, stat, stat);
  EXPECT_EQ(d.n, 2);
  EXPECT_EQ(d.d, 4);
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              norm_forward_dims("norm_forward", kF32, kCpu, NormKind::rms, "x", x, gamma, &beta, 1e-5, y, stat, stat);
            }),
            "norm_forward: beta must be null for rms norm");
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              norm_backward_dims("norm_backward", kF32, kCpu, NormKind::layer, "x", x, gamma, stat, stat, y, "dx", y,
                                 gamma, nullptr);
            }),
            "norm_backward: dbeta is required for layer norm");
}

TEST(BackendChecks, TheResidualOpsReportUnderTheirOwnNames) {
  const Tensor r = f32({3, 4}), gamma = f32({5}), stat = f32({3});
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              add_dropout_norm_forward_dims(kF32, kCpu, NormKind::rms, r, r, DropoutSpec{}, gamma, nullptr, 1e-5, r, r,
                                            stat, stat);
            }),
            "add_dropout_norm_forward: gamma has shape [5], expected [4]");
  DropoutSpec one;
  one.p = 1.0;
  EXPECT_THAT(message_of<std::invalid_argument>([&] { add_dropout_forward_dims(kF32, kCpu, r, r, one, r); }),
              HasSubstr("add_dropout_forward: p must be in [0, 1), got 1"));
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              add_dropout_norm_backward_dims(kF32, kCpu, NormKind::rms, r, f32({4}), stat, stat, DropoutSpec{}, r, r,
                                             f32({4, 3}), f32({4}), nullptr);
            }),
            "add_dropout_norm_backward: dx has shape [4, 3], expected [3, 4]");
  EXPECT_THAT(
      message_of<std::invalid_argument>([&] { dropout_dims("dropout_backward", kF32, kCpu, "dy", r, one, "dx", r); }),
      HasSubstr("dropout_backward: p must be in [0, 1)"));
}

TEST(BackendChecks, RopeRotatesPairsFromOffsetZeroOn) {
  const RopeDims d = rope_dims("rope_forward", kF32, kCpu, "x", f32({1, 2, 8}), 2, 0, "y", f32({1, 2, 8}));
  EXPECT_EQ(d.head_width, 4);
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              rope_dims("rope_forward", kF32, kCpu, "x", f32({1, 2, 6}), 2, 0, "y", f32({1, 2, 6}));
            }),
            "rope_forward: head width 3 is odd: rope rotates pairs");
  EXPECT_EQ(message_of<std::out_of_range>([&] {
              rope_dims("rope_backward", kF32, kCpu, "dy", f32({1, 2, 8}), 2, -1, "dx", f32({1, 2, 8}));
            }),
            "rope_backward: position offset -1 is negative");
}

TEST(BackendChecks, CrossEntropyLabelsArePadOrAClassAndCounted) {
  const CrossEntropyDims d =
      cross_entropy_forward_dims(kF32, kCpu, f32({4, 5}), i32({4}), 0.1, SmoothingForm::uniform, f32({4}));
  const std::vector<std::int32_t> labels = {1, 0, 4, 0}, bad = {1, 7, 0, 0};
  EXPECT_EQ(cross_entropy_values("cross_entropy_forward", labels.data(), d, 0), 2);
  EXPECT_EQ(message_of<std::out_of_range>([&] { cross_entropy_values("cross_entropy_backward", bad.data(), d, 0); }),
            "cross_entropy_backward: labels[1] = 7 is outside [0, 5) and is not pad_id 0");
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              cross_entropy_forward_dims(kF32, kCpu, f32({4, 1}), i32({4}), 0.1, SmoothingForm::fairseq, f32({4}));
            }),
            "cross_entropy_forward: the fairseq form needs at least 2 classes");
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              cross_entropy_backward_dims(kF32, kCpu, f32({4, 5}), i32({4}), f32({4}), 0.1, SmoothingForm::uniform,
                                          f32({4, 6}));
            }),
            "cross_entropy_backward: dlogits has shape [4, 6], expected [4, 5]");
}

TEST(BackendChecks, LogSoftmaxNeedsClasses) {
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              log_softmax_forward_dims(kF32, kCpu, f32({3, 0}), f32({3, 0}));
            }),
            "log_softmax_forward: x has no classes");
}

TEST(BackendChecks, AdamStepsFromOne) {
  const Tensor p = f32({2, 3});
  adam_update_dims(kF32, kCpu, p, p, p, p, 0.9, 0.98, 1);
  EXPECT_THAT(message_of<std::invalid_argument>([&] { adam_update_dims(kF32, kCpu, p, p, p, p, 0.9, 0.98, 0); }),
              HasSubstr("adam_update: step must be >= 1"));
  EXPECT_THAT(message_of<std::invalid_argument>([&] { adam_update_dims(kF32, kCpu, p, p, p, p, 1.0, 0.98, 1); }),
              HasSubstr("adam_update: beta1 must be in [0, 1)"));
}

}  // namespace
}  // namespace trepro::checks
