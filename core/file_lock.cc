#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace trepro {

namespace {

int open_lock_file(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path.string() + ": cannot open the lock file: " + std::strerror(errno));
  return fd;
}

// Whether the open file `fd` is the one `path` names now (it was not removed or replaced
// between the open and the lock).
bool still_named(int fd, const std::filesystem::path& path) {
  struct stat held {}, named {};
  return fstat(fd, &held) == 0 && stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

// flock, retried when a signal interrupts it.
int lock(int fd, int operation) {
  int result = 0;
  do {
    result = flock(fd, operation);
  } while (result != 0 && errno == EINTR);
  return result;
}

}  // namespace

FileLock FileLock::acquire(const std::filesystem::path& path) {
  for (;;) {
    const int fd = open_lock_file(path);
    if (lock(fd, LOCK_EX) != 0) {
      const int error = errno;
      close(fd);
      throw std::runtime_error(path.string() + ": cannot lock: " + std::strerror(error));
    }
    if (still_named(fd, path)) return FileLock(path, fd);
    close(fd);  // its holder removed it while this process waited: lock the new one
  }
}

std::optional<FileLock> FileLock::try_acquire(const std::filesystem::path& path) {
  for (;;) {
    const int fd = open_lock_file(path);
    if (lock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      close(fd);
      if (error == EWOULDBLOCK) return std::nullopt;
      throw std::runtime_error(path.string() + ": cannot lock: " + std::strerror(error));
    }
    if (still_named(fd, path)) return FileLock(path, fd);
    close(fd);  // removed by its holder between the open and the lock: try the new file
  }
}

void FileLock::remove_and_release() {
  if (fd_ < 0) return;
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
  close(fd_);
  fd_ = -1;
}

bool FileLock::held_elsewhere(const std::filesystem::path& path) { return !try_acquire(path).has_value(); }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace trepro
