// core/file_lock.h: an exclusive lock per path, and a lock file its holder removes.
#include "core/file_lock.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace trepro::testing {
namespace {

namespace fs = std::filesystem;

fs::path fresh_lock(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("file_lock_test_" + name);
  fs::remove_all(dir);
  return dir / "x.lock";
}

TEST(FileLock, ASecondHolderIsRefusedUntilTheFirstReleases) {
  const fs::path path = fresh_lock("second");
  std::optional<FileLock> first = FileLock::try_acquire(path);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(FileLock::try_acquire(path).has_value());
  EXPECT_TRUE(FileLock::held_elsewhere(path));
  first.reset();
  EXPECT_TRUE(FileLock::try_acquire(path).has_value());
  EXPECT_TRUE(fs::exists(path)) << "a released lock leaves its file";
}

TEST(FileLock, RemoveAndReleaseLeavesNoFileAndTheNextHolderLocksANewOne) {
  const fs::path path = fresh_lock("removed");
  std::optional<FileLock> first = FileLock::try_acquire(path);
  ASSERT_TRUE(first.has_value());
  first->remove_and_release();
  EXPECT_FALSE(fs::exists(path));
  std::optional<FileLock> next = FileLock::try_acquire(path);
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(FileLock::try_acquire(path).has_value()) << "the new file is locked like the old one";
}

}  // namespace
}  // namespace trepro::testing
