#include "experiments/training/checkpoint.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <stdexcept>

#include "core/safetensors.h"
#include "model/parameters.h"

namespace trepro {

namespace {

// Doubles as the shortest text that reads back exactly (metadata values are strings).
std::string exact(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

const std::string& field(const SafetensorsFile& file, const std::string& path, const std::string& key) {
  const auto it = file.metadata.find(key);
  if (it == file.metadata.end()) throw std::runtime_error(path + ": metadata " + key + ": missing (not a checkpoint?)");
  return it->second;
}

template <class T>
T number(const SafetensorsFile& file, const std::string& path, const std::string& key) {
  const std::string& text = field(file, path, key);
  T value{};
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    throw std::runtime_error(path + ": metadata " + key + ": not a number: \"" + text + "\"");
  }
  return value;
}

// A step, epoch or batch number: from_chars reads "-7" as well, and a resumed run would start
// before its own beginning (a batch index before its epoch's first).
std::int64_t count(const SafetensorsFile& file, const std::string& path, const std::string& key, std::int64_t least) {
  const auto value = number<std::int64_t>(file, path, key);
  if (value < least) {
    throw std::runtime_error(path + ": metadata " + key + ": " + std::to_string(value) + ", expected an integer >= " +
                             std::to_string(least));
  }
  return value;
}

// An unsmoothed cross-entropy, so >= 0, or inf before the first validation. from_chars reads
// "nan" too, and no loss compares below NaN: a run resumed from it would never mark a best.
double best_validation_loss(const SafetensorsFile& file, const std::string& path) {
  const auto value = number<double>(file, path, "best_validation_loss");
  if (!(value >= 0.0)) {
    throw std::runtime_error(path + ": metadata best_validation_loss: " + exact(value) +
                             ", expected a loss >= 0 (inf before the first validation)");
  }
  return value;
}

bool is_optimizer_state(const std::string& name) { return name.starts_with("adam."); }

}  // namespace

void save_checkpoint(const std::string& path, Transformer& model, Adam& adam, const CheckpointState& state) {
  Backend& backend = model.backend();
  std::map<std::string, Tensor> tensors = model.parameters().values(backend);
  tensors.merge(adam.state(backend));
  std::map<std::string, std::string> metadata = {
      {"format", "trepro-checkpoint-1"},
      {"step", std::to_string(state.step)},
      {"epoch", std::to_string(state.position.epoch)},
      {"batch", std::to_string(state.position.batch)},
      {"seed", std::to_string(state.seed)},
      {"best_validation_loss", exact(state.best_validation_loss)},
      {"best_step", std::to_string(state.best_step)},
      {"config_hash", state.config_hash},
  };
  if (!state.recipe_hash.empty()) metadata["recipe_hash"] = state.recipe_hash;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_safetensors(path, tensors, metadata);
}

CheckpointState load_checkpoint(const std::string& path, Transformer& model, Adam& adam) {
  SafetensorsFile file = read_safetensors(path);
  SafetensorsFile weights;
  std::map<std::string, Tensor> moments;
  for (auto& [name, tensor] : file.tensors) {
    (is_optimizer_state(name) ? moments : weights.tensors)[name] = tensor;
  }
  model.parameters().load(model.backend(), weights, path);
  adam.load_state(model.backend(), moments, path);
  CheckpointState state;
  state.step = count(file, path, "step", 0);
  state.position = {count(file, path, "epoch", 1), count(file, path, "batch", 0)};
  state.seed = number<std::uint64_t>(file, path, "seed");
  state.best_validation_loss = best_validation_loss(file, path);
  state.best_step = count(file, path, "best_step", 0);
  state.config_hash = field(file, path, "config_hash");
  const auto recipe = file.metadata.find("recipe_hash");
  if (recipe != file.metadata.end()) state.recipe_hash = recipe->second;
  return state;
}

CheckpointProgress checkpoint_progress(const std::string& path) {
  const SafetensorsFile header{{}, read_safetensors_metadata(path)};
  return {count(header, path, "step", 0), count(header, path, "best_step", 0), best_validation_loss(header, path)};
}

std::int64_t recorded_step(const SafetensorsFile& file, const std::string& path) {
  return file.metadata.contains("step") ? count(file, path, "step", 0) : 0;
}

SafetensorsFile without_optimizer_state(SafetensorsFile file) {
  std::erase_if(file.tensors, [](const auto& entry) { return is_optimizer_state(entry.first); });
  return file;
}

void average_checkpoints(const std::vector<std::string>& paths, const std::string& out) {
  if (paths.empty()) throw std::invalid_argument("average: no checkpoints");
  std::map<std::string, Tensor> sums;  // float64
  DType dtype = DType::f32;
  std::string recipe_hash;  // the first file's that records one
  std::string recipe_path;
  for (std::size_t f = 0; f < paths.size(); ++f) {
    const SafetensorsFile file = read_safetensors(paths[f]);
    // Same shapes do not make the same model: a run restarted in its folder with another
    // learning rate or dropout writes checkpoints that fit, and their mean is of no run.
    const auto recipe = file.metadata.find("recipe_hash");
    if (recipe != file.metadata.end()) {
      if (recipe_hash.empty()) {
        recipe_hash = recipe->second;
        recipe_path = paths[f];
      } else if (recipe->second != recipe_hash) {
        throw std::runtime_error(paths[f] + ": recipe_hash \"" + recipe->second + "\", but \"" + recipe_hash +
                                 "\" in " + recipe_path + ": checkpoints of different configs are not averaged");
      }
    }
    std::size_t count = 0;
    for (const auto& [name, tensor] : file.tensors) {
      if (is_optimizer_state(name)) continue;
      ++count;
      if (f == 0) {
        dtype = tensor.dtype();
        sums[name] = Tensor::zeros(tensor.shape(), DType::f64);
      }
      const auto it = sums.find(name);
      if (it == sums.end()) throw std::runtime_error(paths[f] + ": tensor " + name + ": not in " + paths[0]);
      if (it->second.shape() != tensor.shape()) {
        throw std::runtime_error(paths[f] + ": tensor " + name + ": shape " + shape_string(tensor.shape()) +
                                 ", but " + shape_string(it->second.shape()) + " in " + paths[0]);
      }
      require_finite_weights(tensor, paths[f], name);
      double* sum = it->second.data<double>();
      for (std::int64_t i = 0; i < tensor.numel(); ++i) sum[i] += tensor.at(i);
    }
    if (count != sums.size()) {
      throw std::runtime_error(paths[f] + ": has " + std::to_string(count) + " parameters, " + paths[0] + " has " +
                               std::to_string(sums.size()));
    }
  }
  std::map<std::string, Tensor> mean;
  const double n = static_cast<double>(paths.size());
  for (const auto& [name, sum] : sums) {
    Tensor result = Tensor::empty(sum.shape(), dtype);
    for (std::int64_t i = 0; i < sum.numel(); ++i) result.set(i, sum.at(i) / n);
    mean[name] = std::move(result);
  }
  std::map<std::string, std::string> metadata = {{"format", "trepro-average-1"},
                                                 {"averaged", std::to_string(paths.size())}};
  if (!recipe_hash.empty()) metadata["recipe_hash"] = recipe_hash;
  write_safetensors(out, mean, metadata);
}

}  // namespace trepro
