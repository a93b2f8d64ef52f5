// What every fuzz target checks: bad input ends in std::runtime_error or std::invalid_argument
// (the project's errors derive from these) whose message names the input; anything else (another
// exception type, a message without the name, a crash, a hang, a sanitizer report) aborts, and
// libFuzzer keeps the input as a crash.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace trepro::fuzz {

inline std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A folder of this process for the files a target reads: in memory (/dev/shm) where there is
// one, else $TMPDIR or /tmp.
inline std::filesystem::path scratch_folder() {
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : tmp ? tmp : "/tmp";
  std::filesystem::path folder = base / ("trepro-fuzz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  return folder;
}

// Writes `contents` to `name` in the scratch folder (plainly: the readers, not the writer, are
// under test) and returns its path. The old file is removed first: on ext4 truncating it would
// flush it to the disk at every close (auto_da_alloc), 10 ms an input.
inline std::string scratch_file(const std::string& name, std::string_view contents) {
  const std::string path = (scratch_folder() / name).string();
  std::filesystem::remove(path);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(contents.data(), static_cast<std::streamsize>(contents.size()));
  return path;
}

[[noreturn]] inline void reject(const std::string& what, const std::string& message) {
  std::fprintf(stderr, "fuzz: %s: %s\n", what.c_str(), message.c_str());
  std::abort();
}

inline void require_named(const std::exception& e, const std::string& name) {
  if (std::string(e.what()).find(name) == std::string::npos) reject("the error does not name " + name, e.what());
}

// Runs `read`, accepting only the project's errors naming `name`.
template <class Read>
void expect_clean_errors(const std::string& name, Read&& read) {
  try {
    read();
  } catch (const std::runtime_error& e) {
    require_named(e, name);
  } catch (const std::invalid_argument& e) {
    require_named(e, name);
  } catch (const std::exception& e) {
    reject("an exception of another type", e.what());
  }
}

}  // namespace trepro::fuzz
