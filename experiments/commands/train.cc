// trepro train: runs a config into a run folder (experiments/training/train_run.h has the
// layout); --resume continues the newest checkpoint bit-identically. Under mpirun every rank
// runs it: a rank that fails aborts the job, naming itself, so that none waits for it forever.
#include <exception>
#include <memory>

#include "experiments/commands/backend_choice.h"
#include "experiments/commands/commands.h"
#include "distributed/world.h"
#include "experiments/training/train_run.h"

namespace trepro::cli {

namespace {

struct TrainCommand {
  TrainRunOptions run;
  std::int64_t steps = 0, validate_every = 0, checkpoint_every = 0;
  CLI::Option *steps_option = nullptr, *validate_option = nullptr, *checkpoint_option = nullptr;
  BackendChoice backend;
};

}  // namespace

void add_train_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "train", "Train a config (copy/reverse task, Multi30K or a parallel corpus) into a run folder",
      "trepro train experiments/configs/multi30k_deen.json --out runs/multi30k_deen");
  auto o = std::make_shared<TrainCommand>();
  cmd->add_option("config", o->run.config_path, "config JSON (optional with --resume: RUN/config.json)");
  cmd->add_option("--out", o->run.run_dir, "run folder (config, vocabulary, log, checkpoints, report.json)")->required();
  cmd->add_flag("--resume", o->run.resume, "continue from the newest RUN/checkpoints/step_<N>.safetensors (none yet: start over)");
  cmd->add_option("--data-dir", o->run.data_dir,
                  "multi30k: folder holding multi30k/ (default: data.dir, $TREPRO_DATA_DIR, then the repository's "
                  "data/, which ships Multi30K); parallel: the folder of the text files (default: data.dir)");
  cmd->add_option("--data", o->run.prepared_dir,
                  "a folder `trepro prepare` wrote for this config: memory-mapped instead of reading the text");
  o->steps_option = cmd->add_option("--steps", o->steps, "override train.max_steps")->check(CLI::NonNegativeNumber);
  o->validate_option =
      cmd->add_option("--validate-every", o->validate_every, "override train.validate_every")->check(CLI::PositiveNumber);
  o->checkpoint_option = cmd->add_option("--checkpoint-every", o->checkpoint_every, "override train.checkpoint_every")
                             ->check(CLI::PositiveNumber);
  cmd->add_option("--log-every", o->run.log_every, "steps between plain progress lines (log, non-terminal output)")
      ->check(CLI::PositiveNumber);
  o->backend.add_options(*cmd);
  cmd->callback([o] {
    if (*o->steps_option) o->run.max_steps = o->steps;
    if (*o->validate_option) o->run.validate_every = o->validate_every;
    if (*o->checkpoint_option) o->run.checkpoint_every = o->checkpoint_every;
    // A plain pointer: the command owns run.make_backend, so holding `o` there would be a cycle
    // that is never freed (LeakSanitizer); the app keeps the command alive while it runs.
    o->run.make_backend = [command = o.get()] { return command->backend.make(); };
    const std::unique_ptr<Communicator> comm = make_world_communicator();
    o->run.comm = comm.get();
    if (comm->size() == 1) return train_run(o->run);
    try {
      train_run(o->run);
    } catch (const NonFiniteError& e) {
      throw;  // every rank stops at the same step, and rank 0 has written the report
    } catch (const std::exception& e) {
      comm->abort(std::string("error: ") + e.what());
    }
  });
}

}  // namespace trepro::cli
