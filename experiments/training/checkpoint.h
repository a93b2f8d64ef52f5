// Training checkpoints: one safetensors file holding every parameter by its name (what
// `forward --weights`, decoding and Parameters::load read), the Adam moments as adam.m.<name>
// and adam.v.<name> (ignored by loaders of weights), and in __metadata__ the step, the data
// position, the seed, the best validation loss so far, the config hash and the recipe hash. Dropout is keyed by
// (seed, step, micro-batch) (model/context.h), so these are the whole state of a run: resuming from step N continues
// bit-identically to a run never interrupted.
//
// Where checkpoints live in a run folder: experiments/run_folder/run_folder.h.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "experiments/training/training_data.h"
#include "model/optimizer.h"

namespace trepro {

struct CheckpointState {
  std::int64_t step = 0;
  DataPosition position;
  std::uint64_t seed = 0;
  double best_validation_loss = std::numeric_limits<double>::infinity();
  std::int64_t best_step = 0;
  std::string config_hash;
  // recipe_hash (run_config.h): the same in every checkpoint of one run, --steps and the other
  // session overrides aside; empty in checkpoints written before it was recorded.
  std::string recipe_hash;
};

// Atomic (temporary file, fsync, rename).
void save_checkpoint(const std::string& path, Transformer& model, Adam& adam, const CheckpointState& state);
// Loads parameters and Adam moments into `model` and `adam`; throws naming `path` on a missing
// tensor, a wrong shape, a weight that is not finite, or metadata that is missing or out of
// range (a negative step, epoch or batch, a best validation loss that is NaN or negative).
CheckpointState load_checkpoint(const std::string& path, Transformer& model, Adam& adam);

// The parameters of a weights file: a training checkpoint's Adam moments dropped, so that
// decoding and `forward --weights` read a step checkpoint as they read an average.
SafetensorsFile without_optimizer_state(SafetensorsFile file);

// Where a checkpoint was written and the best validation then, from its metadata (the header
// alone), checked as load_checkpoint checks it: for best.safetensors, step = best_step, the
// validation that chose it.
struct CheckpointProgress {
  std::int64_t step = 0, best_step = 0;
  double best_validation_loss = 0.0;
};
CheckpointProgress checkpoint_progress(const std::string& path);
// The step a weights file's metadata records, checked as load_checkpoint checks it; 0 when it
// records none (an average of checkpoints).
std::int64_t recorded_step(const SafetensorsFile& file, const std::string& path);

// The element-wise mean of the parameters (not the Adam moments) of `paths`, computed in double
// and written in the first file's dtype to `out` (atomically), with their recipe_hash. Every
// file must hold the same parameter names and shapes, finite values, and the same recipe_hash
// where both files of a pair record one (checkpoints of one run resumed with another --steps
// share it).
void average_checkpoints(const std::vector<std::string>& paths, const std::string& out);

}  // namespace trepro
