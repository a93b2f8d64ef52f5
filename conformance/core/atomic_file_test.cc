// core/atomic_file.h: remove_stale_temporaries removes a temporary whose writer is gone, keeps
// one whose writer lives and every file that only looks like a temporary; read_file refuses a
// device (a config named /dev/zero would be read until the memory ran out).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/atomic_file.h"

namespace trepro {
namespace {

namespace fs = std::filesystem;

// The pid of a process that has exited and been reaped: no live process has it (until reused).
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

std::set<std::string> listing(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename().string());
  return names;
}

TEST(AtomicFile, RemovesOnlyTheTemporariesOfWritersThatAreGone) {
  const fs::path folder = fs::temp_directory_path() / ("atomic_file_test_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  const std::string dead = "step_3.safetensors.tmp." + std::to_string(dead_pid()) + ".0123abcd";
  const std::string live = "report.json.tmp." + std::to_string(::getpid()) + ".89abcdef";
  const std::set<std::string> kept = {live, "report.json", "notes.tmp.txt", "x.tmp.12.short", "x.tmp.99999999999999999999.0123abcd"};
  for (const std::string& name : kept) std::ofstream(folder / name) << "data";
  std::ofstream(folder / dead) << "whole";
  EXPECT_EQ(remove_stale_temporaries(folder.string()), 1);
  EXPECT_EQ(listing(folder), kept);
  fs::remove_all(folder);
}

TEST(AtomicFile, AMissingFolderHoldsNoTemporaries) {
  EXPECT_EQ(remove_stale_temporaries("/nonexistent/atomic_file_test"), 0);
}

TEST(AtomicFile, ReadingADeviceIsAnErrorNamingIt) {
  try {
    read_file("/dev/zero");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/zero: is a device, not a file");
  }
}

}  // namespace
}  // namespace trepro
