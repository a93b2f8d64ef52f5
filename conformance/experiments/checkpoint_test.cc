// Checkpoints (experiments/training/checkpoint.h): a save/load round trip restores weights, Adam
// moments and the run state exactly; averaging is the elementwise mean of the weights only;
// errors name the file.
#include "experiments/training/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "conformance/support/backend_fixture.h"
#include "core/safetensors.h"
#include "conformance/model/model_testing.h"
#include "experiments/data/token_batches.h"
#include "model/trainer.h"
#include "conformance/support/scratch_dir.h"

namespace trepro::testing {
namespace {

namespace fs = std::filesystem;

Config small_config() {
  Config config{tiny_config(), TrainConfig{}};
  config.train.schedule.kind = ScheduleKind::constant;
  config.train.schedule.warmup = 0;
  validate(config, "<checkpoint test config>");
  return config;
}

fs::path fresh_dir(const std::string& name) { return trepro::testing::fresh_dir("checkpoint_test", name); }

Batch one_batch() { return make_batch({{{4, 5, 6}, {7, 8}}, {{9}, {10, 4, 5}}}, {0, 1}, 0, 1, 2); }

void expect_same_tensors(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, tensor] : a) {
    const Tensor& other = b.at(name);
    ASSERT_EQ(tensor.shape(), other.shape()) << name;
    for (std::int64_t i = 0; i < tensor.numel(); ++i) ASSERT_EQ(tensor.at(i), other.at(i)) << name << "[" << i << "]";
  }
}

class Checkpoints : public BackendTest {};

TEST_P(Checkpoints, RoundTripRestoresWeightsMomentsAndState) {
  const Config config = small_config();
  Transformer model(config.model, backend());
  model.initialize(1);
  Trainer trainer(model, config);
  trainer.step(one_batch());
  trainer.step(one_batch());
  CheckpointState state;
  state.step = 2;
  state.position = {3, 17};
  state.seed = 1;
  state.best_validation_loss = 1.0 / 3.0;
  state.best_step = 2;
  state.config_hash = config_hash(config);
  const std::string path = (fresh_dir("round_trip_" + GetParam()) / "step_2.safetensors").string();
  save_checkpoint(path, model, trainer.optimizer(), state);

  Transformer restored(config.model, backend());
  Trainer restored_trainer(restored, config);
  const CheckpointState loaded = load_checkpoint(path, restored, restored_trainer.optimizer());
  EXPECT_EQ(loaded.step, 2);
  EXPECT_EQ(loaded.position.epoch, 3);
  EXPECT_EQ(loaded.position.batch, 17);
  EXPECT_EQ(loaded.best_validation_loss, 1.0 / 3.0);  // exact: the text form reads back exactly
  EXPECT_EQ(loaded.config_hash, state.config_hash);
  expect_same_tensors(model.parameters().values(backend()), restored.parameters().values(backend()));
  expect_same_tensors(trainer.optimizer().state(backend()), restored_trainer.optimizer().state(backend()));
}

TEST_P(Checkpoints, AWeightsOnlyFileIsNotACheckpoint) {
  const Config config = small_config();
  Transformer model(config.model, backend());
  model.initialize(1);
  const std::string path = (fresh_dir("weights_only_" + GetParam()) / "weights.safetensors").string();
  write_safetensors(path, model.parameters().values(backend()), {});
  Trainer trainer(model, config);
  try {
    load_checkpoint(path, model, trainer.optimizer());
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_P(Checkpoints, AverageIsTheMeanOfTheWeightsWithoutMoments) {
  const Config config = small_config();
  const fs::path dir = fresh_dir("average_" + GetParam());
  Transformer model(config.model, backend());
  model.initialize(1);
  Trainer trainer(model, config);
  std::vector<std::map<std::string, Tensor>> weights;
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    trainer.step(one_batch());
    paths.push_back((dir / ("step_" + std::to_string(i + 1) + ".safetensors")).string());
    save_checkpoint(paths.back(), model, trainer.optimizer(), CheckpointState{});
    weights.push_back(model.parameters().values(backend()));
  }
  const std::string out = (dir / "average.safetensors").string();
  average_checkpoints(paths, out);
  const SafetensorsFile averaged = read_safetensors(out);
  ASSERT_EQ(averaged.tensors.size(), weights[0].size()) << "Adam moments leaked into the average";
  for (const auto& [name, tensor] : averaged.tensors) {
    ASSERT_EQ(tensor.dtype(), weights[0].at(name).dtype()) << name;
    for (std::int64_t i = 0; i < tensor.numel(); ++i) {
      // The mean is taken in double and rounded once to the checkpoints' dtype.
      const double mean = (weights[0].at(name).at(i) + weights[1].at(name).at(i) + weights[2].at(name).at(i)) / 3;
      Tensor rounded = Tensor::empty({1}, tensor.dtype());
      rounded.set(0, mean);
      ASSERT_EQ(tensor.at(i), rounded.at(0)) << name << "[" << i << "]";
    }
  }
  // The average loads as weights.
  Transformer loaded(config.model, backend());
  loaded.parameters().load(backend(), averaged, out);
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(Checkpoints);

TEST(Checkpoints, AveragingFilesOfDifferentModelsIsAnErrorNamingThem) {
  const fs::path dir = fresh_dir("mismatch");
  const std::string a = (dir / "a.safetensors").string(), b = (dir / "b.safetensors").string();
  write_safetensors(a, {{"w", Tensor::zeros({2, 2}, DType::f32)}}, {});
  write_safetensors(b, {{"w", Tensor::zeros({2, 3}, DType::f32)}}, {});
  try {
    average_checkpoints({a, b}, (dir / "out.safetensors").string());
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(b + ": tensor w: shape"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "out.safetensors"));
}

TEST(Checkpoints, AveragingCheckpointsOfDifferentRecipesIsAnErrorNamingThem) {
  const fs::path dir = fresh_dir("recipe_mismatch");
  const auto write = [&](const std::string& name, std::map<std::string, std::string> metadata) {
    const std::string path = (dir / name).string();
    write_safetensors(path, {{"w", Tensor::zeros({2, 2}, DType::f32)}}, metadata);
    return path;
  };
  // One run resumed with another --steps: its config_hash changed, its recipe did not.
  const std::string a = write("a", {{"config_hash", "steps4"}, {"recipe_hash", "aaaa"}});
  const std::string resumed = write("resumed", {{"config_hash", "steps8"}, {"recipe_hash", "aaaa"}});
  const std::string older = write("older", {{"config_hash", "x"}});  // written before recipe_hash
  const std::string b = write("b", {{"config_hash", "steps4"}, {"recipe_hash", "bbbb"}});
  const std::string out = (dir / "out.safetensors").string();
  try {
    average_checkpoints({older, a, resumed, b}, out);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), b + ": recipe_hash \"bbbb\", but \"aaaa\" in " + a +
                                         ": checkpoints of different configs are not averaged");
  }
  EXPECT_FALSE(fs::exists(out));
  average_checkpoints({older, a, resumed}, out);
  EXPECT_EQ(read_safetensors(out).metadata.at("recipe_hash"), "aaaa");
}

TEST(Checkpoints, StepCheckpointsAreListedByNumberNotByName) {
  const fs::path run = fresh_dir("listing");
  fs::create_directories(run / "checkpoints");
  for (const char* name : {"step_100.safetensors", "step_20.safetensors", "best.safetensors", "step_3.safetensors"}) {
    write_safetensors((run / "checkpoints" / name).string(), {{"w", Tensor::zeros({1}, DType::f32)}}, {});
  }
  const auto found = list_step_checkpoints(run.string());
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].step, 3);
  EXPECT_EQ(found[1].step, 20);
  EXPECT_EQ(found[2].step, 100);
}

}  // namespace
}  // namespace trepro::testing
