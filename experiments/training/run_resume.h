// What `train --resume` restores from a run folder: the newest step checkpoint's weights, Adam
// moments, data position and best validation, and a best checkpoint written after it.
#pragma once

#include <functional>
#include <string>

#include "experiments/run_folder/run_folder.h"
#include "experiments/training/checkpoint.h"

namespace trepro {

struct ResumedState {
  CheckpointState state;
  bool resumed = false;  // false: no step checkpoint yet, so the run starts over from step 0
};

// Loads the newest step checkpoint into `model` and `adam`; throws naming it when its seed is not
// `seed`. With `adopt_best` (the rank that writes the folder), a best.safetensors written past that
// step stays the best (adopt_newer_best). Progress goes to `note`.
ResumedState resume_from_checkpoints(const RunFolder& run, Transformer& model, Adam& adam, std::uint64_t seed,
                                     bool adopt_best, const std::function<void(const std::string&)>& note);

}  // namespace trepro
