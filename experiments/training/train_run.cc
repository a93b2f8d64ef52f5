#include "experiments/training/train_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <span>
#include <sstream>

#include "core/atomic_file.h"
#include "core/config.h"
#include "core/safetensors.h"
#include "distributed/single_process_communicator.h"
#include "distributed/world.h"
#include "experiments/run_folder/report_sections.h"
#include "experiments/run_folder/run_folder.h"
#include "experiments/run_info.h"
#include "experiments/training/checkpoint.h"
#include "experiments/training/progress.h"
#include "experiments/training/run_config.h"
#include "experiments/training/run_report.h"
#include "experiments/training/run_resume.h"
#include "experiments/training/stop_counter.h"
#include "experiments/training/training_data.h"
#include "model/trainer.h"

namespace trepro {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string number(double value, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << value;
  return text.str();
}

class Run {
 public:
  Run(const TrainRunOptions& o)
      : o_(o),
        run_(o.run_dir),
        comm_(o.comm != nullptr ? *o.comm : single_),
        writes_(comm_.rank() == 0),
        plan_(run_config(o)),
        config_(plan_.config),
        backend_(o.make_backend()),
        model_(config_.model, *backend_) {
    // Before anything is written: a backend without train.precision's mode stops the run here.
    apply_precision(config_.train, *backend_);
    gradient_comm_ = make_gradient_communicator(comm_, backend_->device());
    trainer_ = std::make_unique<Trainer>(model_, config_, &comm_, gradient_comm_.get());
    // Every rank has read the run folder (run_config) before rank 0 writes to it.
    comm_.barrier();
    if (writes_) {
      fs::create_directories(run_.root());
      progress_ = std::make_unique<Progress>(run_.train_log(), o.log_every);
      note("train: " + run_.root().string() + ": " + std::to_string(model_.parameters().count()) + " parameters on " +
           backend_->name() + " (" + std::to_string(backend_->threads()) + " threads) of " + cpu_model());
      if (!stops_.counting()) {
        note("this program handles SIGCONT itself, so a stop (SIGSTOP) is not told from a slow step: the timings "
             "count every step whole");
      }
      for (const std::string& folder : {run_.root().string(), run_.checkpoints()}) {
        if (const int removed = remove_stale_temporaries(folder)) {
          note("removed " + std::to_string(removed) + " whole temporary file(s) of a killed session from " + folder);
        }
      }
      // The data before config.json: a missing data folder must not leave a config.json that
      // marks the run folder as in use. The log says why the run stopped, as the terminal does.
      try {
        open_data();
      } catch (const std::exception& e) {
        note(std::string("train: stopped: ") + e.what());
        throw;
      }
      save_config(config_, run_.config());
    }
    // The other ranks reuse the vocabulary rank 0 trained into the run folder, and rank 0 waits
    // for their corpora before the first collective with a deadline.
    comm_.setup_barrier();
    if (!writes_) open_data();
    comm_.setup_barrier();
    model_.initialize(config_.train.seed);
    state_.seed = config_.train.seed;
    state_.config_hash = config_hash(config_);
    state_.recipe_hash = recipe_hash(config_);
    if (o.resume) resume();
    if (writes_) history_ = RunHistory::load(run_.history(), state_.step);
    agree_on_patience();
  }

  void train() {
    const std::int64_t total = estimated_last_step(config_.train.max_steps);
    const auto start = Clock::now();
    std::int64_t tokens = 0, session_steps = 0;
    std::int64_t timed_steps = 0;
    double step_seconds = 0.0;  // this session's unstopped steps alone, without validation and checkpoints
    double paused_seconds = 0.0;  // this session's stopped steps, pause included
    while (trainer_->steps_done() < config_.train.max_steps && !exhausted() && !patience_spent_) {
      const auto step_start = Clock::now();
      const std::uint64_t continues_before = stops_.continues();
      const std::int64_t epoch = state_.position.epoch;
      // Every rank walks the whole step's positions but builds only the batches it runs.
      std::vector<std::optional<Batch>> batches;
      for (std::int64_t j = 0; j < config_.train.update_freq && !exhausted(); ++j) {
        if (trainer_->runs_batch(j)) {
          batches.emplace_back(data_->next(state_.position));
          ++batches_read_;
        } else {
          data_->skip(state_.position);
          batches.emplace_back();
        }
      }
      StepResult r;
      try {
        r = trainer_->step_sharded(batches);
      } catch (const NonFiniteError& e) {
        stop_non_finite(e.what());
      }
      state_.step = r.step;
      tokens += r.tokens;
      ++session_steps;
      const auto now = Clock::now();
      const double seconds = std::chrono::duration<double>(now - step_start).count();
      const bool stopped = stops_.continues() != continues_before;
      if (stopped) {
        paused_seconds += seconds;
      } else {
        step_seconds += seconds;
        ++timed_steps;
      }
      // Rates and the ETA count this session only, validation and checkpoints included, and
      // leave out the steps a stop fell in, as the timings do.
      const double elapsed = std::chrono::duration<double>(now - start).count();
      const double working = std::max(elapsed - paused_seconds, 1e-9);
      const double eta = working / static_cast<double>(session_steps) * static_cast<double>(total - r.step);
      if (writes_) {
        nlohmann::json entry = {{"step", r.step}, {"epoch", epoch}, {"loss", r.loss}, {"learning_rate", r.learning_rate},
                                {"grad_norm", r.grad_norm}, {"tokens", r.tokens}, {"seconds", seconds}};
        if (stopped) {
          entry["stopped"] = true;
          progress_->note("step " + std::to_string(r.step) + ": the process was stopped and continued during it; its " +
                          number(seconds, 1) + " s stay out of the timings");
        }
        history_.append(run_.history(), "step", entry);
        progress_->step({r, epoch, total, elapsed, static_cast<double>(tokens) / working, eta});
      }
      const bool last = r.step >= config_.train.max_steps || exhausted();
      if (r.step % config_.train.validate_every == 0 || last) validate();
      // A step that uses up the patience is the last one: it gets its checkpoint like any last
      // step, so that --resume finds the run done.
      if (writes_ && (r.step % config_.train.checkpoint_every == 0 || last || patience_spent_)) checkpoint();
    }
    gather_batches_read();
    if (!writes_) return;
    if (timed_steps > 0) note_estimate(step_seconds, timed_steps);
    if (patience_spent_) {
      progress_->note("stopped early: " + std::to_string(config_.train.patience) +
                      " validations in a row without a new best (train.patience); the best is step " +
                      std::to_string(state_.best_step));
    }
    finish("finished");
  }

 private:
  void note(const std::string& text) {
    if (progress_) progress_->note(text);
  }
  void open_data() {
    data_ = TrainingData::open(config_, o_.run_dir, o_.data_dir, o_.prepared_dir, [this](const std::string& text) { note(text); });
  }
  // Rank 0 reports how the session's batches were shared (each rank built its own only).
  void gather_batches_read() {
    std::vector<std::int64_t> per_rank(static_cast<std::size_t>(comm_.size()));
    comm_.all_gather(std::as_bytes(std::span(&batches_read_, 1)), std::as_writable_bytes(std::span(per_rank)));
    batches_read_per_rank_ = per_rank;
  }
  // Rank 0 alone keeps the validation history; every rank must stop at the same step.
  void agree_on_patience() {
    std::uint8_t spent = writes_ && out_of_patience();
    comm_.broadcast(std::as_writable_bytes(std::span(&spent, 1)), 0);
    patience_spent_ = spent != 0;
  }

  bool exhausted() const { return config_.data.epochs > 0 && state_.position.epoch > config_.data.epochs; }
  // Derived from the validation history and the best step, which --resume restores together
  // (both as of the last checkpoint), so the count survives an interruption.
  bool out_of_patience() const {
    return config_.train.patience > 0 && history_.validations_after(state_.best_step) >= config_.train.patience;
  }

  // The last step of `max_steps` or of data.epochs, whichever comes first.
  std::int64_t estimated_last_step(std::int64_t max_steps) {
    const std::int64_t per_epoch = data_->batches_per_epoch();
    if (per_epoch == 0 || config_.data.epochs == 0) return max_steps;
    const std::int64_t by_epochs = (per_epoch * config_.data.epochs + config_.train.update_freq - 1) / config_.train.update_freq;
    return std::min(max_steps, by_epochs);
  }

  // What a trial run (--steps N) says about the whole one: the planned train.max_steps (or
  // data.epochs, when they end it first) at this session's pace, steps alone (validation and
  // checkpoints add their share on top).
  void note_estimate(double seconds, std::int64_t steps) {
    const double per_step = seconds / static_cast<double>(steps);
    const std::int64_t planned = estimated_last_step(plan_.planned_steps);
    progress_->note("pace: " + number(per_step, 3) + " s/step over " + std::to_string(steps) + " steps; the planned " +
                    std::to_string(planned) + " steps would take " + format_duration(per_step * static_cast<double>(planned)) +
                    " here (" + backend_->name() + ", " + std::to_string(backend_->threads()) + " threads)");
  }

  void resume() {
    ResumedState resumed = resume_from_checkpoints(run_, model_, trainer_->optimizer(), config_.train.seed, writes_,
                                                   [this](const std::string& text) { note(text); });
    if (!resumed.resumed) return;
    state_ = resumed.state;
    resumed_ = true;
    state_.config_hash = config_hash(config_);
    state_.recipe_hash = recipe_hash(config_);
    trainer_->set_steps_done(state_.step);
  }

  void validate() {
    if (writes_) validate_and_report();
    agree_on_patience();
  }

  void validate_and_report() {
    const double loss = data_->validation_loss(model_);
    history_.append(run_.history(), "validation", {{"step", state_.step}, {"loss", loss}, {"perplexity", std::exp(loss)}});
    std::string text = "validation step " + std::to_string(state_.step) + ": loss " + number(loss, 4) + "  ppl " +
                       number(std::exp(loss), 2);
    if (loss < state_.best_validation_loss) {
      state_.best_validation_loss = loss;
      state_.best_step = state_.step;
      save_checkpoint(run_.best_checkpoint(), model_, trainer_->optimizer(), state_);
      text += "  (best)";
    }
    progress_->note(text);
    write_report("running", nlohmann::json::object());
  }

  void checkpoint() {
    const std::string path = run_.step_checkpoint(state_.step);
    save_checkpoint(path, model_, trainer_->optimizer(), state_);
    progress_->note("checkpoint " + path);
    const std::vector<StepCheckpoint> kept = run_.step_checkpoints();
    const auto keep = static_cast<std::size_t>(config_.train.keep_checkpoints);
    // The newest are kept: resuming and averaging read those.
    for (std::size_t i = 0; keep > 0 && i + keep < kept.size(); ++i) fs::remove(kept[i].path);
  }

  // Every rank sees the same non-finite step (the loss and gradient checks follow the reduction).
  [[noreturn]] void stop_non_finite(const std::string& what) {
    if (writes_) report_non_finite(what);
    comm_.barrier();  // the report is written before any rank ends the job
    throw NonFiniteError(what);
  }

  void report_non_finite(const std::string& what) {
    const std::vector<StepCheckpoint> found = run_.step_checkpoints();
    const std::string kept = found.empty() ? "no checkpoint was written yet" : "the last good checkpoint is " + found.back().path;
    const std::string message = what + "; training stopped, " + kept;
    progress_->note(message);
    write_report("non_finite", {{"message", message}});
  }

  void finish(const std::string& status) {
    const std::optional<TestLoss> test = test_best_checkpoint();
    write_report(status, {}, test ? test_loss_json(*test) : nlohmann::json::object());
    progress_->note("wrote " + run_.report());
  }

  // Test perplexity of the best checkpoint: the weights decoding uses by default.
  std::optional<TestLoss> test_best_checkpoint() {
    if (state_.best_step == 0) return std::nullopt;
    const std::string best_path = run_.best_checkpoint();
    if (!fs::exists(best_path)) {
      progress_->note("no test: " + best_path + " (the best, step " + std::to_string(state_.best_step) + ") is missing");
      return std::nullopt;
    }
    model_.parameters().load(*backend_, without_optimizer_state(read_safetensors(best_path)), best_path);
    const std::optional<double> loss = data_->test_loss(model_);
    if (!loss) return std::nullopt;
    progress_->note("test (best checkpoint, step " + std::to_string(state_.best_step) + "): loss " + number(*loss, 4) +
                    "  ppl " + number(std::exp(*loss), 2));
    return TestLoss{data_->describe().value("test_split", "test"), run_.relative(best_path), state_.best_step, *loss};
  }

  void write_report(const std::string& status, const nlohmann::json& error, const nlohmann::json& test = {}) {
    nlohmann::json report = {
        {"status", status},
        {"config", config_to_json(config_)},
        {"config_hash", config_hash(config_)},
        {"seed", config_.train.seed},
        {"data", data_->describe()},
        {"best", best_section_json(run_, {state_.best_step, state_.best_validation_loss})},
        {"test", test.is_object() ? test : nlohmann::json::object()},
        {"resumed", resumed_},
        {"stopped_early", out_of_patience()},
        {"world_size", comm_.size()},
    };
    if (!batches_read_per_rank_.is_null()) report["batches_read_per_rank"] = batches_read_per_rank_;
    if (!error.empty()) report["error"] = error;
    write_run_report(run_, std::move(report), history_, *backend_);
  }

  const TrainRunOptions& o_;
  const RunFolder run_;
  SingleProcessCommunicator single_;  // comm_ when the options name none
  Communicator& comm_;
  bool writes_;  // rank 0: the run folder, the log and the report are its alone
  bool patience_spent_ = false;  // out_of_patience(), as rank 0 sees it
  const RunConfig plan_;
  const Config& config_;  // plan_.config
  std::unique_ptr<Backend> backend_;
  Transformer model_;
  std::unique_ptr<Communicator> gradient_comm_;  // NCCL for cuda ranks; null: comm_
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<TrainingData> data_;
  std::unique_ptr<Progress> progress_;
  StopCounter stops_;  // a step a stop fell in stays out of the timings
  CheckpointState state_;
  bool resumed_ = false;  // this session continued from a checkpoint
  std::int64_t batches_read_ = 0;  // training batches this rank built in this session
  nlohmann::json batches_read_per_rank_;  // every rank's batches_read_, once training ends
  RunHistory history_;
};

}  // namespace

void train_run(const TrainRunOptions& options) { Run(options).train(); }

}  // namespace trepro
