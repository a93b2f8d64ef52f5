#include "experiments/training/run_resume.h"

#include <filesystem>
#include <stdexcept>

#include "core/atomic_file.h"

namespace trepro {

namespace {

// A session killed between a validation and the next step checkpoint may have written
// best.safetensors past the restored step. Its weights and loss are those a replay of that
// validation recomputes bit for bit, so the run adopts them as its best: the report, its test
// and the file then agree however far this session goes (fewer --steps, another backend).
// Unreadable, it is derived data: set aside, and the restored best stands.
void adopt_newer_best(const RunFolder& run, CheckpointState& state, const std::function<void(const std::string&)>& note) {
  const std::string best = run.best_checkpoint();
  if (!std::filesystem::exists(best)) return;
  CheckpointProgress written;
  try {
    written = checkpoint_progress(best);
  } catch (const std::exception& e) {
    rename_durably(best, best + ".unreadable");
    note("resume: " + best + " set aside as " + best + ".unreadable (" + e.what() + ")");
    return;
  }
  if (written.step <= state.step || written.best_validation_loss >= state.best_validation_loss) return;
  state.best_step = written.best_step;
  state.best_validation_loss = written.best_validation_loss;
  note("resume: " + best + " of step " + std::to_string(written.step) + ", past step " + std::to_string(state.step) +
       " (a validation after the last step checkpoint), stays the best");
}

}  // namespace

ResumedState resume_from_checkpoints(const RunFolder& run, Transformer& model, Adam& adam, std::uint64_t seed,
                                     bool adopt_best, const std::function<void(const std::string&)>& note) {
  const std::vector<StepCheckpoint> found = run.step_checkpoints();
  if (found.empty()) {
    // Killed before its first checkpoint: nothing to continue, so the run starts over from its
    // config; what that session wrote (history, best.safetensors, report.json) is replaced
    // as the same steps are recomputed.
    note("resume: no step_<N>.safetensors in " + run.checkpoints() + " yet: starting the run over from step 0 with " +
         run.config());
    return {};
  }
  ResumedState resumed{load_checkpoint(found.back().path, model, adam), true};
  if (resumed.state.seed != seed) {
    throw std::runtime_error(found.back().path + ": seed " + std::to_string(resumed.state.seed) +
                             " but the config has " + std::to_string(seed));
  }
  if (adopt_best) adopt_newer_best(run, resumed.state, note);
  note("resumed from " + found.back().path + " (step " + std::to_string(resumed.state.step) + ", epoch " +
       std::to_string(resumed.state.position.epoch) + ")");
  return resumed;
}

}  // namespace trepro
