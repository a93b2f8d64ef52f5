// Checkpoints (experiments/training/checkpoint.h): a save/load round trip restores weights, Adam
// moments and the run state exactly; averaging is the elementwise mean of the weights only;
// errors name the file.
#include "experiments/training/checkpoint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <tuple>

#include "conformance/support/backend_fixture.h"
#include "core/safetensors.h"
#include "conformance/model/model_testing.h"
#include "experiments/data/token_batches.h"
#include "experiments/run_folder/run_folder.h"
#include "model/trainer.h"
#include "registry/registry.h"
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

// What `action` throws, or "(no error)".
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

// One NaN or infinity in a file of weights (a diverged run's, a damaged disk's) used to load and
// decode, average into a NaN, and resume into a NaN loss.
// A small model's checkpoint, DIR/good.safetensors, and the path DIR/bad.safetensors for a
// damaged copy of it.
struct SavedCheckpoint {
  Config config = small_config();
  fs::path dir;
  std::unique_ptr<Backend> backend = make_reference_backend(DType::f32);
  Transformer model{config.model, *backend};
  Trainer trainer{model, config};
  std::string good, bad;

  explicit SavedCheckpoint(const std::string& name)
      : dir(fresh_dir(name)), good((dir / "good.safetensors").string()), bad((dir / "bad.safetensors").string()) {
    model.initialize(1);
    save_checkpoint(good, model, trainer.optimizer(), CheckpointState{});
  }
};

TEST(Checkpoints, AWeightThatIsNotFiniteIsAnErrorNamingTheFileAndTheTensor) {
  SavedCheckpoint saved("not_finite");
  auto& [config, dir, backend, model, trainer, good, bad] = saved;
  const std::string name = model.parameters().all().back().spec.name;
  for (const double value : {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()}) {
    SafetensorsFile file = read_safetensors(good);
    Tensor damaged = file.tensors.at(name).clone();
    damaged.set(3, value);
    file.tensors[name] = damaged;
    write_safetensors(bad, file.tensors, file.metadata);
    const std::string expected =
        bad + ": tensor " + name + ": element 3 is " + (std::isnan(value) ? "nan" : "-inf") + ", expected finite weights";
    EXPECT_EQ(error_of([&] { load_checkpoint(bad, model, trainer.optimizer()); }), expected);  // train --resume
    std::erase_if(file.tensors, [](const auto& entry) { return entry.first.starts_with("adam."); });
    EXPECT_EQ(error_of([&] { model.parameters().load(*backend, file, bad); }), expected);  // forward, translate
    const std::string out = (dir / "average.safetensors").string();
    EXPECT_EQ(error_of([&] { average_checkpoints({good, bad}, out); }), expected);
    EXPECT_FALSE(fs::exists(out));
  }
}

// Metadata is text: from_chars reads "-7" and "nan", and a run resumed from them started before
// its beginning or never marked a validation best again.
TEST(Checkpoints, MetadataOutOfRangeIsAnErrorNamingTheFileAndTheField) {
  SavedCheckpoint saved("metadata");
  auto& [config, dir, backend, model, trainer, good, bad] = saved;
  // Written before the first validation: best_validation_loss inf, which loads.
  EXPECT_EQ(load_checkpoint(good, model, trainer.optimizer()).best_validation_loss, std::numeric_limits<double>::infinity());
  const SafetensorsFile file = read_safetensors(good);
  for (const auto& [key, value, expected] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"step", "abc", "metadata step: not a number: \"abc\""},
           {"step", "-7", "metadata step: -7, expected an integer >= 0"},
           {"best_step", "-1", "metadata best_step: -1, expected an integer >= 0"},
           {"epoch", "0", "metadata epoch: 0, expected an integer >= 1"},
           {"batch", "-2", "metadata batch: -2, expected an integer >= 0"},
           {"best_validation_loss", "nan", "metadata best_validation_loss: nan, expected a loss >= 0 (inf before the first validation)"},
           {"best_validation_loss", "-inf", "metadata best_validation_loss: -inf, expected a loss >= 0 (inf before the first validation)"},
           {"best_validation_loss", "-0.5", "metadata best_validation_loss: -0.5, expected a loss >= 0 (inf before the first validation)"}}) {
    std::map<std::string, std::string> metadata = file.metadata;
    metadata[key] = value;
    write_safetensors(bad, file.tensors, metadata);
    EXPECT_EQ(error_of([&] { load_checkpoint(bad, model, trainer.optimizer()); }), bad + ": " + expected) << key << " " << value;
    if (key != "epoch" && key != "batch") {  // what resume reads of best.safetensors
      EXPECT_EQ(error_of([&] { checkpoint_progress(bad); }), bad + ": " + expected) << key << " " << value;
    }
    if (key == "step") {  // what decoding reads
      EXPECT_EQ(error_of([&] { recorded_step(read_safetensors(bad), bad); }), bad + ": " + expected) << value;
    }
  }
  EXPECT_EQ(recorded_step(SafetensorsFile{}, "average.safetensors"), 0);  // an average records no step
}

TEST(Checkpoints, StepCheckpointsAreListedByNumberNotByName) {
  const fs::path run = fresh_dir("listing");
  fs::create_directories(run / "checkpoints");
  for (const char* name : {"step_100.safetensors", "step_20.safetensors", "best.safetensors", "step_3.safetensors"}) {
    write_safetensors((run / "checkpoints" / name).string(), {{"w", Tensor::zeros({1}, DType::f32)}}, {});
  }
  const auto found = RunFolder(run).step_checkpoints();
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].step, 3);
  EXPECT_EQ(found[1].step, 20);
  EXPECT_EQ(found[2].step, 100);
}

}  // namespace
}  // namespace trepro::testing
