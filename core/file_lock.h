// An exclusive flock(2) on a file, held while the FileLock lives. The kernel drops it when its
// process dies, however it dies, so a lock never outlives a killed run. The file (and its folder)
// is created when missing and left in place: removing it would let a second process lock a new
// file of the same name while a first still holds the old one.
#pragma once

#include <filesystem>
#include <optional>

namespace trepro {

class FileLock {
 public:
  // Waits until the lock is free. Throws std::runtime_error naming the file when it cannot open it.
  static FileLock acquire(const std::filesystem::path& path);
  // The lock, or nothing when another process holds it.
  static std::optional<FileLock> try_acquire(const std::filesystem::path& path);
  // Whether another process holds the lock now (it may be taken or freed a moment later).
  static bool held_elsewhere(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace trepro
