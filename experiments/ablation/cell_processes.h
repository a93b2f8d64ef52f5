// The processes of a sweep (`trepro ablate`): each cell of a grid in a child process of this
// executable, with its share of the host threads, at most `jobs` at once; the child's side of
// that contract (dying with its sweep, leaving a cell for later); and the lock that keeps two
// processes off one cell.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/file_lock.h"

namespace trepro {

// A child's exit status when it left its cell for later (its twin had started elsewhere); EX_TEMPFAIL.
inline constexpr int kDeferredExit = 75;

struct ChildCell {
  std::string name;                    // for messages: "<variant> seed <S>"
  std::vector<std::string> arguments;  // after the executable: "ablate", SPEC, ..., "--variant", V, "--seed", S
  std::filesystem::path log;           // the child's stdout and stderr, appended
  std::size_t tag = 0;                 // the caller's, handed back by requeue
};

struct ChildSweep {
  std::int64_t jobs = 1;     // children at once
  std::int64_t threads = 1;  // TREPRO_THREADS of each child
  // The next cell to start; nullopt when none is left.
  std::function<std::optional<ChildCell>()> next;
  // A cell whose child exited with kDeferredExit goes back to the caller's queue.
  std::function<void(const ChildCell&)> requeue;
  // After each child that ends (done or failed).
  std::function<void()> after_each;
};

// Runs the sweep's children until `next` has none left and every child has ended; returns the
// names of the cells whose child failed. Throws when a child cannot be started.
std::vector<std::string> run_children(const ChildSweep& sweep);

// Runs `argv` (argv[0]: the program's path) with this process's environment and output, and waits
// for it; true when it exited with 0, false when it could not start or failed.
bool run_to_completion(const std::vector<std::string>& argv);

// In a child of a sweep: dies with the sweep (a sweep killed and rerun must not find the killed
// sweep's children still training its cells). Does nothing in a process no sweep started.
void end_with_parent();

// An exclusive lock on `lock_path` while a process runs the cell `cell`; throws naming both when
// another process holds it (a rerun beside a run, a job array's task started twice).
FileLock lock_cell(const std::filesystem::path& lock_path, const std::string& cell);

}  // namespace trepro
