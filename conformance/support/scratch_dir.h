// Folders for the files a test writes.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace trepro::testing {

// An empty folder `<test file's prefix>_<name>` under gtest's temporary folder, emptied first so
// that a rerun never reads what an earlier run left.
inline std::filesystem::path fresh_dir(const std::string& prefix, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / (prefix + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace trepro::testing
