// trepro ablate: runs every cell (variant x seed) of an ablation spec
// (experiments/ablation/ablation_spec.h) into OUT/<variant>/seed_<S>/ (a run folder as `trepro
// train` makes, then decoded by `trepro evaluate` when the data is Multi30K) and writes
// OUT/summary.json after each. Rerunning continues: finished cells are skipped, interrupted ones
// resumed from their last checkpoint, ones killed before their first checkpoint started over.
//   --variant V --seed S   one cell only (a scheduler's job array spreads the grid this way);
//                          no summary: --summarize-only combines the finished cells
//   --jobs N               N cells at once, each a child process with its share of the threads
//   --share-cells DIR      train a cell another sweep under DIR also has only once
//                          (experiments/ablation/twin_cells.h)
#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "core/atomic_file.h"
#include "core/file_lock.h"
#include "experiments/ablation/ablation_summary.h"
#include "experiments/ablation/cell_processes.h"
#include "experiments/ablation/stale_cells.h"
#include "experiments/ablation/twin_cells.h"
#include "experiments/commands/backend_choice.h"
#include "experiments/commands/commands.h"
#include "experiments/commands/evaluate.h"
#include "experiments/data/multi30k.h"
#include "experiments/run_folder/run_folder.h"
#include "experiments/training/train_run.h"
#include "model/trainer.h"
#include "registry/registry.h"

namespace trepro::cli {

namespace {

namespace fs = std::filesystem;

struct AblateOptions {
  std::string spec_path, out, data_dir, variant, share_dir;
  std::int64_t steps = 0, jobs = 1;
  std::uint64_t seed = 0;
  CLI::Option *steps_option = nullptr, *variant_option = nullptr, *seed_option = nullptr;
  bool summarize_only = false;
  bool rerun_stale = false;  // retrain a cell whose recorded config is not the one the spec asks for now
  // A sweep's child, started while the cell's twin seemed idle: if the twin has started since,
  // end with kDeferredExit (the sweep runs the cell later) instead of waiting for it.
  bool defer_if_twin_runs = false;
  BackendChoice backend;
};

struct Cell {
  const AblationVariant* variant;
  std::uint64_t seed;
  std::string name() const { return variant->name + " seed " + std::to_string(seed); }
};

// What the cell trains now: its config, with --steps.
Config wanted_config(const AblateOptions& o, const Cell& cell) {
  Config config = cell_config(*cell.variant, cell.seed);
  if (*o.steps_option) config.train.max_steps = o.steps;
  return config;
}

// The cell's identity as twin_cells.h compares it.
std::string identity(const AblateOptions& o, const Cell& cell) { return cell_identity(wanted_config(o, cell)); }

nlohmann::json read_report(const RunFolder& run) {
  std::optional<nlohmann::json> report = run.read_report();
  return report ? std::move(*report) : nlohmann::json(nullptr);
}

// --share-cells names a folder of sweeps, and --out one of them: SHARE/<name>, where the other
// sweeps look for twins (twin_cells.h reads SHARE/*/*/seed_*). So a mistyped --share-cells is
// refused, not silently a new, empty folder of sweeps.
void check_share_folder(const AblateOptions& o) {
  if (o.share_dir.empty()) return;
  if (fs::exists(o.share_dir) && !fs::is_directory(o.share_dir)) {
    throw std::invalid_argument("--share-cells " + o.share_dir +
                                ": not a folder (expected the folder of the sweeps' output folders, e.g. reports/ablations)");
  }
  fs::path out = fs::weakly_canonical(o.out);
  if (out.filename().empty()) out = out.parent_path();
  if (out.parent_path() != fs::weakly_canonical(o.share_dir)) {
    throw std::invalid_argument("--out " + o.out + " must be a folder directly inside --share-cells " + o.share_dir +
                                " (SHARE/<name>), where the other sweeps find its cells");
  }
}

// The spec's config of the cell, at SweepFolder::cell_config: every cell of the sweep has one,
// trained here or copied from a twin.
std::string save_cell_config(const AblateOptions& o, const Cell& cell) {
  const std::string path = SweepFolder(o.out).cell_config(cell.variant->name, cell.seed);
  fs::create_directories(fs::path(path).parent_path());
  save_config(cell_config(*cell.variant, cell.seed), path);
  return path;
}

void train_cell(const AblateOptions& o, const Cell& cell, const RunFolder& run) {
  TrainRunOptions train;
  train.run_dir = run.root().string();
  train.data_dir = o.data_dir;
  train.resume = fs::exists(run.checkpoints());
  if (!train.resume) {
    fs::remove_all(run.root());  // a cell killed before its first checkpoint starts over
    train.config_path = save_cell_config(o, cell);
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

enum class CellOutcome { done, deferred };

struct SharedCell {
  std::optional<FileLock> training_lock;  // held while this process trains the cell
  bool copied = false;
  bool deferred = false;
};

// With --share-cells: holds the lock of the cell's identity (waiting while another process trains
// the same cell, unless `may_defer`: then the cell is deferred), then copies the cell from a
// finished twin on this backend when there is one.
SharedCell share_cell(const AblateOptions& o, const Cell& cell, const RunFolder& run, const std::string& backend,
                      bool may_defer) {
  SharedCell shared;
  if (o.share_dir.empty()) return shared;
  const std::string cell_id = identity(o, cell);
  const fs::path lock_path = identity_lock_path(o.share_dir, cell_id);
  shared.training_lock = FileLock::try_acquire(lock_path);
  if (!shared.training_lock) {
    std::cout << "ablate: " << cell.name() << ": the same training runs in another process (" << lock_path.string()
              << " is locked); " << (may_defer ? "left for later" : "waiting for it") << std::endl;
    if (may_defer) {
      shared.deferred = true;
      return shared;
    }
    shared.training_lock.emplace(FileLock::acquire(lock_path));
  }
  const std::vector<TwinCell> twins = complete_twins(o.share_dir, wanted_config(o, cell), run.root());
  if (twins.empty()) return shared;
  for (const TwinCell& twin : twins) {
    if (twin.backend != backend) continue;
    copy_twin(o.share_dir, twin.folder, run.root());
    save_cell_config(o, cell);
    std::cout << "ablate: " << cell.name() << ": the same training as " << twin.folder.string() << " (finished there on "
              << backend << "): copied, not trained" << std::endl;
    shared.copied = true;
    return shared;
  }
  return shared;
}

// A cell begun or finished on another backend is neither skipped nor resumed here: the spec's
// summary would compare two backends' numbers (ablation_summary.h refuses that too).
void require_this_backend(const Cell& cell, const nlohmann::json& report, const RunFolder& run,
                          const std::string& backend) {
  if (!report.is_object() || !report.contains("backend") || report["backend"] == backend) return;
  throw std::runtime_error(run.report() + ": " + cell.name() + " ran on " +
                           report["backend"].dump() + ", this sweep runs on \"" + backend +
                           "\": a spec's cells stay on one backend; move the spec's cells of the other backend to a folder "
                           "of their own, or run on " + report["backend"].dump());
}

// Whether a cell's report records another training than the spec asks for now (another --steps,
// a spec edited since): with --rerun-stale it is, and the cell is trained again; without, the
// sweep stops naming the differences, since reusing it would compare the old training.
bool is_stale(const AblateOptions& o, const Cell& cell, const RunFolder& run, const nlohmann::json& report) {
  if (!report.contains("config")) return false;  // not a run report: cell_report_complete names it
  const std::vector<std::string> differences =
      cell_config_differences(wanted_config(o, cell), report["config"], run.report(), cell_stage(report));
  if (differences.empty()) return false;
  if (o.rerun_stale) return true;
  std::string listed;
  for (const std::string& d : differences) listed += "\n  " + d;
  throw std::runtime_error(run.report() + ": " + cell.name() + " trained another config than the spec asks for now " +
                           "(recorded -> wanted):" + listed +
                           "\nIts result is not reused: rerun with --rerun-stale to train it again, or give the "
                           "--steps it was trained with");
}

CellOutcome run_cell(const AblateOptions& o, const Cell& cell, bool may_defer) {
  const SweepFolder sweep(o.out);
  const RunFolder run = sweep.cell(cell.variant->name, cell.seed);
  const FileLock lock = lock_cell(sweep.cell_lock(cell.variant->name, cell.seed), cell.name());
  nlohmann::json report = read_report(run);
  const std::string backend = o.backend.make()->name();
  require_this_backend(cell, report, run, backend);
  if (report.is_object() && is_stale(o, cell, run, report)) {
    std::cout << "ablate: " << cell.name() << ": stale (--rerun-stale): training it again" << std::endl;
    fs::remove_all(run.root());
    report = nullptr;
  }
  if (cell_report_complete(report, run.report())) {
    std::cout << "ablate: " << cell.name() << ": already " << report.value("status", "") << ", skipped" << std::endl;
    return CellOutcome::done;
  }
  const SharedCell shared = share_cell(o, cell, run, backend, may_defer);
  if (shared.deferred) return CellOutcome::deferred;
  if (shared.copied) return CellOutcome::done;
  if (report.is_null() || report.value("status", "") == "running") {
    train_cell(o, cell, run);
    report = read_report(run);
  }
  for (const std::string& split : undecoded_test_sets(report, run.report())) {
    std::cout << "ablate: " << cell.name() << ": decoding " << split << std::endl;
    EvaluateOptions evaluate;
    evaluate.model.run_dir = run.root().string();
    evaluate.model.backend = o.backend;
    evaluate.data_dir = o.data_dir;
    evaluate.split = split;
    evaluate.additional_test_set = split != kMulti30kTestSets.front();
    evaluate_run(evaluate);
  }
  return CellOutcome::done;
}

// The arguments of a child running one cell: this command's own, with --variant and --seed.
std::vector<std::string> cell_arguments(const AblateOptions& o, const Cell& cell, bool may_defer) {
  std::vector<std::string> args = {"ablate", o.spec_path, "--out", o.out,
                                   "--variant", cell.variant->name, "--seed", std::to_string(cell.seed)};
  if (may_defer) args.push_back("--defer-if-twin-runs");
  if (!o.data_dir.empty()) args.insert(args.end(), {"--data-dir", o.data_dir});
  if (*o.steps_option) args.insert(args.end(), {"--steps", std::to_string(o.steps)});
  if (!o.share_dir.empty()) args.insert(args.end(), {"--share-cells", o.share_dir});
  if (!o.backend.name.empty()) args.insert(args.end(), {"--backend", o.backend.name});
  if (*o.backend.dtype_option) args.insert(args.end(), {"--dtype", o.backend.dtype});
  if (o.rerun_stale) args.push_back("--rerun-stale");
  return args;
}

struct NextCell {
  Cell cell;
  bool may_defer;  // false: every cell left has its twin training elsewhere, so wait for this one's
};

// Takes the cell to start next out of `queue`: the first whose training no other process is
// running now, else the first. With --share-cells, a cell whose twin trains in another sweep is
// so left for last, when the twin may have finished and the cell is copied instead of trained;
// one found busy only once started (a race) is deferred and queued again.
NextCell take_next_cell(const AblateOptions& o, std::deque<Cell>& queue) {
  auto next = queue.begin();
  bool idle_found = true;
  if (!o.share_dir.empty()) {
    next = std::find_if(queue.begin(), queue.end(), [&o](const Cell& cell) {
      return !FileLock::held_elsewhere(identity_lock_path(o.share_dir, identity(o, cell)));
    });
    idle_found = next != queue.end();
    if (!idle_found) next = queue.begin();
  }
  const Cell cell = *next;
  queue.erase(next);
  return {cell, !o.share_dir.empty() && idle_found};
}

// Runs `cells` in up to o.jobs children at once (experiments/ablation/cell_processes.h), the host
// threads one backend would take shared among them; `after_each` runs when one ends. Returns the
// cells whose child failed.
std::vector<std::string> run_in_children(const AblateOptions& o, std::deque<Cell> cells,
                                         const std::function<void()>& after_each) {
  std::vector<Cell> started;  // indexed by ChildCell::tag
  ChildSweep sweep;
  sweep.jobs = o.jobs;
  sweep.threads = std::max<std::int64_t>(1, default_host_threads() / o.jobs);
  sweep.next = [&]() -> std::optional<ChildCell> {
    if (cells.empty()) return std::nullopt;
    const auto [cell, may_defer] = take_next_cell(o, cells);
    started.push_back(cell);
    return ChildCell{cell.name(), cell_arguments(o, cell, may_defer),
                     SweepFolder(o.out).cell_log(cell.variant->name, cell.seed), started.size() - 1};
  };
  sweep.requeue = [&](const ChildCell& child) { cells.push_back(started[child.tag]); };
  sweep.after_each = after_each;
  return run_children(sweep);
}

// The sweep's tables (variants, claims, cells) as reports/render.py makes them, so that a sweep
// ends with its result rather than a path. Python is the tables' one author; without it (or the
// source tree) the sweep still succeeds and says how to print them.
void print_summary_tables(const std::string& summary_path) {
  const std::string render = std::string(TREPRO_SOURCE_DIR) + "/reports/render.py";
  std::cout.flush();
  if (fs::exists(render) && run_to_completion({"/usr/bin/python3", render, "--tables", summary_path})) return;
  std::cout << "ablate: the tables: /usr/bin/python3 reports/render.py --tables " << summary_path << std::endl;
}

void run_ablation(const AblateOptions& o) {
  const AblationSpec spec = load_ablation_spec(o.spec_path);
  check_share_folder(o);
  if (*o.steps_option && !o.summarize_only) {
    for (const AblationVariant& variant : spec.variants) {
      const std::string warning = warmup_budget_warning(variant.config, o.steps);
      if (!warning.empty()) std::cout << "ablate: warning: " << variant.name << ": " << warning << std::endl;
    }
  }
  if (bool(*o.variant_option) != bool(*o.seed_option)) throw std::invalid_argument("ablate: --variant and --seed go together");
  if (*o.variant_option) {
    const AblationVariant* variant = spec.find_variant(o.variant);
    if (!variant) throw std::invalid_argument(o.spec_path + ": no variant is named \"" + o.variant + "\"");
    if (std::find(variant->seeds.begin(), variant->seeds.end(), o.seed) == variant->seeds.end()) {
      throw std::invalid_argument(o.spec_path + ": seed " + std::to_string(o.seed) + " is not among variant \"" +
                                  variant->name + "\"'s seeds (the spec's, and those its claims' \"seeds\" add)");
    }
    end_with_parent();
    if (run_cell(o, {variant, o.seed}, o.defer_if_twin_runs) == CellOutcome::deferred) {
      std::cout.flush();
      std::exit(kDeferredExit);
    }
    return;
  }
  fs::create_directories(o.out);
  const std::string summary_path = SweepFolder(o.out).summary();
  const auto write_summary = [&] {
    write_file_atomically(summary_path, ablation_summary(spec, o.spec_path, o.out, o.data_dir).dump(2) + "\n");
  };
  std::vector<std::string> failed;
  if (!o.summarize_only) {
    // Seed-major order: every variant's first seed before any second one, so an interrupted
    // sweep has the whole comparison at one seed first.
    std::deque<Cell> cells;
    std::size_t most_seeds = 0;
    for (const AblationVariant& variant : spec.variants) most_seeds = std::max(most_seeds, variant.seeds.size());
    for (std::size_t i = 0; i < most_seeds; ++i) {
      for (const AblationVariant& variant : spec.variants) {
        if (i < variant.seeds.size()) cells.push_back({&variant, variant.seeds[i]});
      }
    }
    if (o.jobs > 1) {
      failed = run_in_children(o, std::move(cells), write_summary);
    } else {
      while (!cells.empty()) {
        const auto [cell, may_defer] = take_next_cell(o, cells);
        if (run_cell(o, cell, may_defer) == CellOutcome::deferred) cells.push_back(cell);
        write_summary();
      }
    }
  }
  write_summary();
  std::cout << "ablate: summary in " << summary_path << std::endl;
  if (!o.summarize_only) print_summary_tables(summary_path);
  if (!failed.empty()) throw std::runtime_error("ablate: " + std::to_string(failed.size()) + " cell(s) failed, first " + failed.front());
}

}  // namespace

void add_ablate_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "ablate", "Run every cell (variant x seed) of an ablation spec and summarize them",
      "trepro ablate experiments/specs/table3_heads.json --out reports/ablations/table3_heads --share-cells reports/ablations");
  auto o = std::make_shared<AblateOptions>();
  cmd->add_option("spec", o->spec_path, "ablation spec JSON (experiments/specs/*.json)")->required();
  cmd->add_option("--out", o->out, "folder for the cells' runs and summary.json")->required();
  cmd->add_option("--data-dir", o->data_dir, "folder holding multi30k/ (as for train)");
  o->steps_option = cmd->add_option("--steps", o->steps, "override train.max_steps of every cell")
                        ->check(CLI::PositiveNumber);
  o->variant_option = cmd->add_option("--variant", o->variant, "run this variant's cell of --seed only (no summary)");
  o->seed_option = cmd->add_option("--seed", o->seed, "with --variant: the seed of the cell");
  cmd->add_option("--jobs", o->jobs, "cells run at once, each a child process with its share of the threads")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--share-cells", o->share_dir,
                  "folder of sweeps (e.g. reports/ablations): a cell one of them has finished on this backend is "
                  "copied from it, one training in another process now is waited for, not trained twice");
  // Internal: what a sweep passes its children (see AblateOptions::defer_if_twin_runs).
  cmd->add_flag("--defer-if-twin-runs", o->defer_if_twin_runs)->group("");
  cmd->add_flag("--summarize-only", o->summarize_only, "only rewrite summary.json from the cells' reports");
  cmd->add_flag("--rerun-stale", o->rerun_stale,
                "train again a cell whose report records another config than the spec asks for now (another "
                "--steps, an edited spec); without it such a cell stops the sweep, naming the differences");
  o->backend.add_options(*cmd);
  cmd->callback([o] { run_ablation(*o); });
}

}  // namespace trepro::cli
