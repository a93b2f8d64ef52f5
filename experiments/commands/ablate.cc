// trepro ablate: runs every cell (variant x seed) of an ablation spec
// (experiments/ablation/ablation_spec.h) into OUT/<variant>/seed_<S>/ (a run folder as `trepro
// train` makes, then decoded by `trepro evaluate` when the data is Multi30K) and writes
// OUT/summary.json after each. Rerunning continues: finished cells are skipped, interrupted ones
// resumed from their last checkpoint, ones killed before their first checkpoint started over.
//   --variant V --seed S   one cell only (a scheduler's job array spreads the grid this way);
//                          no summary: --summarize-only combines the finished cells
//   --jobs N               N cells at once, each a child process with its share of the threads
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include "core/atomic_file.h"
#include "core/json_input.h"
#include "experiments/ablation/ablation_summary.h"
#include "experiments/commands/backend_choice.h"
#include "experiments/commands/commands.h"
#include "experiments/commands/evaluate.h"
#include "experiments/training/train_run.h"
#include "model/trainer.h"
#include "optimized/cpu/thread_pool.h"

extern char** environ;

namespace trepro::cli {

namespace {

namespace fs = std::filesystem;

struct AblateOptions {
  std::string spec_path, out, data_dir, variant;
  std::int64_t steps = 0, jobs = 1;
  std::uint64_t seed = 0;
  CLI::Option *steps_option = nullptr, *variant_option = nullptr, *seed_option = nullptr;
  bool summarize_only = false;
  BackendChoice backend;
};

// Set in a child's environment to its sweep's pid (see end_with_parent).
constexpr const char* kParentVariable = "TREPRO_ABLATE_PARENT";

struct Cell {
  const AblationVariant* variant;
  std::uint64_t seed;
  std::string name() const { return variant->name + " seed " + std::to_string(seed); }
};

nlohmann::json read_report(const fs::path& run) {
  const fs::path report = run / "report.json";
  if (!fs::exists(report)) return nullptr;
  return read_json_file(report.string());
}

bool decodes(const Config& config) { return config.data.dataset == Dataset::multi30k; }

// Trained to the end (or diverged), and decoded when its data can be. A diverged cell decodes its
// best checkpoint from before the divergence, when it had one: that model is its result.
bool cell_done(const Cell& cell, const nlohmann::json& report) {
  if (report.is_null()) return false;
  const std::string status = report.value("status", "");
  if (status != "finished" && status != "non_finite") return false;
  return !decodes(cell.variant->config) || report["test"].contains("bleu") || report["best"].value("step", 0) == 0;
}

void train_cell(const AblateOptions& o, const Cell& cell, const fs::path& run) {
  TrainRunOptions train;
  train.run_dir = run.string();
  train.data_dir = o.data_dir;
  train.resume = fs::exists(run / "checkpoints");
  if (!train.resume) {
    fs::remove_all(run);  // a cell killed before its first checkpoint starts over
    train.config_path = (fs::path(o.out) / "configs" / (cell.variant->name + ".seed_" + std::to_string(cell.seed) + ".json")).string();
    fs::create_directories(fs::path(train.config_path).parent_path());
    save_config(cell_config(*cell.variant, cell.seed), train.config_path);
  }
  if (*o.steps_option) train.max_steps = o.steps;
  train.make_backend = [&o] { return o.backend.make(); };
  std::cout << "ablate: " << cell.name() << (train.resume ? ": resuming" : ": training") << std::endl;
  try {
    train_run(train);
  } catch (const NonFiniteError& e) {
    // A diverging variant is a result (Post-LN without warmup may): record it and go on.
    std::cout << "ablate: " << cell.name() << ": " << e.what() << std::endl;
  }
}

// A child of a sweep (--jobs) dies with it: a sweep killed and rerun must not find the killed
// sweep's children still training its cells.
void end_with_parent() {
  const char* parent = std::getenv(kParentVariable);
  if (!parent) return;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl took effect.
  if (std::to_string(getppid()) != parent) std::_Exit(1);
}

// Holds an exclusive lock on OUT/<variant>/seed_<S>.lock while the cell runs, so that two
// processes (a rerun beside a run, a job array's task started twice) never train one cell. The
// kernel drops the lock when its process dies, however it dies.
class CellLock {
 public:
  CellLock(const fs::path& run, const std::string& cell) {
    fs::create_directories(run.parent_path());
    const std::string path = run.string() + ".lock";
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error(path + ": cannot open the cell's lock: " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      close(fd_);
      throw std::runtime_error("ablate: " + cell + " is being run by another process (" + path + " is locked)");
    }
  }
  CellLock(const CellLock&) = delete;
  CellLock& operator=(const CellLock&) = delete;
  ~CellLock() { close(fd_); }

 private:
  int fd_ = -1;
};

void run_cell(const AblateOptions& o, const Cell& cell) {
  const fs::path run = cell_folder(o.out, cell.variant->name, cell.seed);
  const CellLock lock(run, cell.name());
  nlohmann::json report = read_report(run);
  if (cell_done(cell, report)) {
    std::cout << "ablate: " << cell.name() << ": already " << report.value("status", "") << ", skipped" << std::endl;
    return;
  }
  if (report.is_null() || report.value("status", "") == "running") {
    train_cell(o, cell, run);
    report = read_report(run);
  }
  if (!cell_done(cell, report)) {
    std::cout << "ablate: " << cell.name() << ": decoding the test split" << std::endl;
    EvaluateOptions evaluate;
    evaluate.model.run_dir = run.string();
    evaluate.model.backend = o.backend;
    evaluate.data_dir = o.data_dir;
    evaluate_run(evaluate);
  }
}

// The arguments of a child running one cell: this command's own, with --variant and --seed.
std::vector<std::string> cell_arguments(const AblateOptions& o, const Cell& cell) {
  std::vector<std::string> args = {"/proc/self/exe", "ablate", o.spec_path, "--out", o.out,
                                   "--variant", cell.variant->name, "--seed", std::to_string(cell.seed)};
  if (!o.data_dir.empty()) args.insert(args.end(), {"--data-dir", o.data_dir});
  if (*o.steps_option) args.insert(args.end(), {"--steps", std::to_string(o.steps)});
  if (!o.backend.name.empty()) args.insert(args.end(), {"--backend", o.backend.name});
  if (*o.backend.dtype_option) args.insert(args.end(), {"--dtype", o.backend.dtype});
  return args;
}

// Starts a child for `cell` with TREPRO_THREADS=threads, its output appended to `log`.
pid_t spawn_cell(const AblateOptions& o, const Cell& cell, std::int64_t threads, const fs::path& log) {
  std::vector<std::string> args = cell_arguments(o, cell);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    if (!std::string_view(*e).starts_with("TREPRO_THREADS=")) env_strings.emplace_back(*e);
  }
  env_strings.push_back("TREPRO_THREADS=" + std::to_string(threads));
  env_strings.push_back(std::string(kParentVariable) + "=" + std::to_string(getpid()));
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error("ablate: cannot start a child for " + cell.name() + ": " + std::strerror(error));
  return pid;
}

// Runs `cells` in up to o.jobs children at once; `after_each` runs when one ends. Returns the
// cells whose child failed.
std::vector<std::string> run_in_children(const AblateOptions& o, const std::vector<Cell>& cells,
                                         const std::function<void()>& after_each) {
  // The threads the cells share are those one backend would take (TREPRO_THREADS, else the cores).
  const std::int64_t threads = std::max<std::int64_t>(1, cpu::default_thread_count() / o.jobs);
  const fs::path logs = fs::path(o.out) / "logs";
  fs::create_directories(logs);
  std::map<pid_t, Cell> running;
  std::vector<std::string> failed;
  std::size_t next = 0;
  while (next < cells.size() || !running.empty()) {
    while (next < cells.size() && static_cast<std::int64_t>(running.size()) < o.jobs) {
      const Cell& cell = cells[next++];
      const fs::path log = logs / (cell.variant->name + ".seed_" + std::to_string(cell.seed) + ".log");
      running.emplace(spawn_cell(o, cell, threads, log), cell);
      std::cout << "ablate: " << cell.name() << ": started (" << threads << " threads, log " << log.string() << ")" << std::endl;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::cout << "ablate: " << it->second.name() << (ok ? ": done" : ": FAILED (see its log)") << std::endl;
    if (!ok) failed.push_back(it->second.name());
    running.erase(it);
    after_each();
  }
  return failed;
}

void run_ablation(const AblateOptions& o) {
  const AblationSpec spec = load_ablation_spec(o.spec_path);
  if (bool(*o.variant_option) != bool(*o.seed_option)) throw std::invalid_argument("ablate: --variant and --seed go together");
  if (*o.variant_option) {
    const AblationVariant* variant = spec.find_variant(o.variant);
    if (!variant) throw std::invalid_argument(o.spec_path + ": no variant is named \"" + o.variant + "\"");
    if (std::find(spec.seeds.begin(), spec.seeds.end(), o.seed) == spec.seeds.end()) {
      throw std::invalid_argument(o.spec_path + ": seed " + std::to_string(o.seed) + " is not among the spec's seeds");
    }
    end_with_parent();
    run_cell(o, {variant, o.seed});
    return;
  }
  fs::create_directories(o.out);
  const std::string summary_path = (fs::path(o.out) / "summary.json").string();
  const auto write_summary = [&] {
    write_file_atomically(summary_path, ablation_summary(spec, o.spec_path, o.out, o.data_dir).dump(2) + "\n");
  };
  std::vector<std::string> failed;
  if (!o.summarize_only) {
    // Seed-major order: every variant's first seed before any second one, so an interrupted
    // sweep has the whole comparison at one seed first.
    std::vector<Cell> cells;
    for (std::uint64_t seed : spec.seeds) {
      for (const AblationVariant& variant : spec.variants) cells.push_back({&variant, seed});
    }
    if (o.jobs > 1) {
      failed = run_in_children(o, cells, write_summary);
    } else {
      for (const Cell& cell : cells) {
        run_cell(o, cell);
        write_summary();
      }
    }
  }
  write_summary();
  std::cout << "ablate: summary in " << summary_path << std::endl;
  if (!failed.empty()) throw std::runtime_error("ablate: " + std::to_string(failed.size()) + " cell(s) failed, first " + failed.front());
}

}  // namespace

void add_ablate_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("ablate", "Run every cell (variant x seed) of an ablation spec and summarize them");
  auto o = std::make_shared<AblateOptions>();
  cmd->add_option("spec", o->spec_path, "ablation spec JSON (experiments/ablations/*.json)")->required();
  cmd->add_option("--out", o->out, "folder for the cells' runs and summary.json")->required();
  cmd->add_option("--data-dir", o->data_dir, "folder holding multi30k/ (as for train)");
  o->steps_option = cmd->add_option("--steps", o->steps, "override train.max_steps of every cell")
                        ->check(CLI::PositiveNumber);
  o->variant_option = cmd->add_option("--variant", o->variant, "run this variant's cell of --seed only (no summary)");
  o->seed_option = cmd->add_option("--seed", o->seed, "with --variant: the seed of the cell");
  cmd->add_option("--jobs", o->jobs, "cells run at once, each a child process with its share of the threads")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--summarize-only", o->summarize_only, "only rewrite summary.json from the cells' reports");
  o->backend.add_options(*cmd);
  cmd->callback([o] { run_ablation(*o); });
}

}  // namespace trepro::cli
