// An exclusive flock(2) on a file, held while the FileLock lives. The kernel drops it when its
// process dies, however it dies, so a lock never outlives a killed run. The file (and its folder)
// is created when missing and left in place unless the holder removes it (remove_and_release).
// A lock is taken only on the file that the path names once it is held: a process that locked a
// file another one has just removed finds the path gone or replaced and locks it again, so two
// processes never both hold "the" lock of one path.
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

  // Removes the file while still holding it, then releases: what a command does whose lock file
  // should not outlive it (trepro prepare's OUT.lock).
  void remove_and_release();

  FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  FileLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace trepro
