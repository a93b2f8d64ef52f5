// Resume state, each piece checked on its own: a checkpoint restores the weights, the first and
// the second Adam moments and every field of the run state (step, data position, seed, best
// validation loss and its step) exactly; and a trainer resumed from it (what `train --resume`
// does: load, then set the steps done) takes the next step bit for bit as the uninterrupted
// trainer does, with dropout on and two micro-batches, so the step's learning rate, Adam's bias
// correction and the dropout stream all continue. The end-to-end kill/resume is
// resume_test.sh; these name the piece that was lost.
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "conformance/support/backend_fixture.h"
#include "conformance/model/model_testing.h"
#include "experiments/data/token_batches.h"
#include "experiments/training/checkpoint.h"
#include "model/trainer.h"

namespace trepro::testing {
namespace {

namespace fs = std::filesystem;

Config dropout_config() {
  Config config{tiny_config(), TrainConfig{}};
  config.model.dropout = 0.3;
  config.train.seed = 2017;
  validate(config, "<resume state test config>");
  return config;
}

// Batch i: two of three pairs, from pair i (pad 0, BOS 1, EOS 2).
Batch batch(std::size_t i) {
  return make_batch({{{4, 5, 6}, {7, 8}}, {{9}, {10, 4, 5}}, {{6, 7, 8, 9}, {5, 6}}}, {i % 3, (i + 1) % 3}, 0, 1, 2);
}

// Tensors of `all` whose names start with `prefix`.
std::map<std::string, Tensor> with_prefix(const std::map<std::string, Tensor>& all, const std::string& prefix) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, tensor] : all) {
    if (name.starts_with(prefix)) out[name] = tensor;
  }
  return out;
}

::testing::AssertionResult identical(const std::map<std::string, Tensor>& actual,
                                     const std::map<std::string, Tensor>& expected) {
  if (actual.size() != expected.size() || expected.empty()) {
    return ::testing::AssertionFailure() << actual.size() << " tensors, expected " << expected.size();
  }
  for (const auto& [name, tensor] : expected) {
    const auto it = actual.find(name);
    if (it == actual.end()) return ::testing::AssertionFailure() << name << ": missing";
    if (it->second.shape() != tensor.shape()) return ::testing::AssertionFailure() << name << ": another shape";
    for (std::int64_t i = 0; i < tensor.numel(); ++i) {
      if (it->second.at(i) != tensor.at(i)) {
        return ::testing::AssertionFailure() << name << "[" << i << "] = " << it->second.at(i) << ", expected "
                                             << tensor.at(i);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

class ResumeState : public BackendTest {
 protected:
  // Two steps of training (two micro-batches each), saved with a distinct value in every field.
  void SetUp() override {
    model_ = std::make_unique<Transformer>(config_.model, backend());
    model_->initialize(config_.train.seed);
    trainer_ = std::make_unique<Trainer>(*model_, config_);
    trainer_->step({batch(0), batch(1)});
    trainer_->step({batch(2), batch(0)});
    state_.step = 2;
    state_.position = {3, 17};
    state_.seed = config_.train.seed;
    state_.best_validation_loss = 1.0 / 3.0;
    state_.best_step = 1;
    state_.config_hash = config_hash(config_);
    const fs::path dir = fs::path(::testing::TempDir()) / ("resume_state_test_" + GetParam());
    fs::remove_all(dir);
    path_ = (dir / "step_2.safetensors").string();
    save_checkpoint(path_, *model_, trainer_->optimizer(), state_);
    restored_model_ = std::make_unique<Transformer>(config_.model, backend());
    restored_model_->initialize(config_.train.seed + 1);  // other weights than the saved ones
    restored_trainer_ = std::make_unique<Trainer>(*restored_model_, config_);
    loaded_ = load_checkpoint(path_, *restored_model_, restored_trainer_->optimizer());
    restored_trainer_->set_steps_done(loaded_.step);
  }

  std::map<std::string, Tensor> moments(Trainer& trainer, const std::string& prefix) {
    return with_prefix(trainer.optimizer().state(backend()), prefix);
  }

  const Config config_ = dropout_config();
  std::unique_ptr<Transformer> model_, restored_model_;
  std::unique_ptr<Trainer> trainer_, restored_trainer_;
  CheckpointState state_, loaded_;
  std::string path_;
};

TEST_P(ResumeState, WeightsAreRestored) {
  EXPECT_TRUE(identical(restored_model_->parameters().values(backend()), model_->parameters().values(backend())));
}

TEST_P(ResumeState, FirstMomentsAreRestored) {
  EXPECT_TRUE(identical(moments(*restored_trainer_, "adam.m."), moments(*trainer_, "adam.m.")));
}

TEST_P(ResumeState, SecondMomentsAreRestored) {
  EXPECT_TRUE(identical(moments(*restored_trainer_, "adam.v."), moments(*trainer_, "adam.v.")));
}

TEST_P(ResumeState, StepIsRestored) {
  EXPECT_EQ(loaded_.step, 2);
  EXPECT_EQ(restored_trainer_->steps_done(), 2);
}

TEST_P(ResumeState, DataPositionIsRestored) {
  EXPECT_EQ(loaded_.position.epoch, 3);
  EXPECT_EQ(loaded_.position.batch, 17);
}

TEST_P(ResumeState, SeedIsRestored) { EXPECT_EQ(loaded_.seed, 2017u); }

TEST_P(ResumeState, BestValidationLossAndItsStepAreRestored) {
  EXPECT_EQ(loaded_.best_validation_loss, 1.0 / 3.0);  // exact: the text form reads back exactly
  EXPECT_EQ(loaded_.best_step, 1);
  EXPECT_EQ(loaded_.config_hash, state_.config_hash);
}

// The next step after the resume: same loss, learning rate, weights and moments, bit for bit.
TEST_P(ResumeState, TheNextStepIsTheUninterruptedOne) {
  const StepResult expected = trainer_->step({batch(1), batch(2)});
  const StepResult actual = restored_trainer_->step({batch(1), batch(2)});
  EXPECT_EQ(actual.step, expected.step);
  EXPECT_EQ(actual.learning_rate, expected.learning_rate);
  EXPECT_EQ(actual.loss, expected.loss);
  EXPECT_TRUE(identical(restored_model_->parameters().values(backend()), model_->parameters().values(backend())));
  EXPECT_TRUE(identical(restored_trainer_->optimizer().state(backend()), trainer_->optimizer().state(backend())));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(ResumeState);

}  // namespace
}  // namespace trepro::testing
