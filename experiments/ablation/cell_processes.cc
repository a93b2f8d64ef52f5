#include "experiments/ablation/cell_processes.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace trepro {

namespace {

// Set in a child's environment to its sweep's pid (see end_with_parent).
constexpr const char* kParentVariable = "TREPRO_ABLATE_PARENT";

// Starts a child for `cell` with TREPRO_THREADS=threads, its output appended to its log.
pid_t spawn_child(const ChildCell& cell, std::int64_t threads) {
  std::vector<std::string> args = {"/proc/self/exe"};
  args.insert(args.end(), cell.arguments.begin(), cell.arguments.end());
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
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, cell.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error("ablate: cannot start a child for " + cell.name + ": " + std::strerror(error));
  return pid;
}

}  // namespace

std::vector<std::string> run_children(const ChildSweep& sweep) {
  std::map<pid_t, ChildCell> running;
  std::vector<std::string> failed;
  for (;;) {
    while (static_cast<std::int64_t>(running.size()) < sweep.jobs) {
      std::optional<ChildCell> cell = sweep.next();
      if (!cell) break;
      std::filesystem::create_directories(cell->log.parent_path());
      const pid_t pid = spawn_child(*cell, sweep.threads);
      std::cout << "ablate: " << cell->name << ": started (" << sweep.threads << " threads, log " << cell->log.string()
                << ")" << std::endl;
      running.emplace(pid, std::move(*cell));
    }
    if (running.empty()) return failed;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kDeferredExit) {
      std::cout << "ablate: " << it->second.name << ": its twin trains in another process; left for later" << std::endl;
      sweep.requeue(it->second);
      running.erase(it);
      continue;
    }
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::cout << "ablate: " << it->second.name << (ok ? ": done" : ": FAILED (see its log)") << std::endl;
    if (!ok) failed.push_back(it->second.name);
    running.erase(it);
    sweep.after_each();
  }
}

bool run_to_completion(const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (argv.size() < 2 || posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void end_with_parent() {
  const char* parent = std::getenv(kParentVariable);
  if (!parent) return;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl took effect.
  if (std::to_string(getppid()) != parent) std::_Exit(1);
}

FileLock lock_cell(const std::filesystem::path& lock_path, const std::string& cell) {
  std::optional<FileLock> lock = FileLock::try_acquire(lock_path);
  if (!lock) {
    throw std::runtime_error("ablate: " + cell + " is being run by another process (" + lock_path.string() +
                             " is locked)");
  }
  return std::move(*lock);
}

}  // namespace trepro
