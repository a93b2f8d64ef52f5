#include "core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <regex>
#include <stdexcept>

namespace trepro {
namespace {

std::string failure(const std::string& path, const std::string& call, int err) {
  return path + ": " + call + " failed: " + std::strerror(err);
}

std::string hex(std::uint32_t x) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(8, '0');
  for (int i = 7; i >= 0; --i, x >>= 4) s[static_cast<std::size_t>(i)] = kDigits[x & 15u];
  return s;
}

// Retries short writes and EINTR: a single write() may legally write less than asked.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The rename is only durable once the folder entry itself reaches the disk.
void fsync_folder(const std::string& path, const std::string& folder) {
  int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(failure(path, "open of folder " + folder, errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error(failure(path, "fsync of folder " + folder, err));
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view contents) {
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  // The data goes into a file without a name (O_TMPFILE), so a process killed while writing
  // leaves nothing behind; the name comes once the data is on the disk. A file system without
  // O_TMPFILE gets a named temporary, which a kill leaves in the folder.
  int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  const bool unnamed = fd >= 0;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + hex(std::random_device{}());
  if (!unnamed) fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    int err = errno;
    std::string hint = err == ENOENT ? " (the folder " + folder + " does not exist)" : "";
    throw std::runtime_error(failure(path, "open of " + tmp, err) + hint);
  }
  const std::string written = unnamed ? "an unnamed temporary file in " + folder : tmp;
  bool named = !unnamed;
  // From here on every failure must remove the temporary, or failed runs litter the folder.
  auto fail = [&](const char* call, bool fd_open) {
    int err = errno;  // saved first: close and unlink may overwrite it
    if (fd_open) ::close(fd);
    if (named) ::unlink(tmp.c_str());
    return std::runtime_error(failure(path, std::string(call) + " of " + written, err));
  };
  if (!write_all(fd, contents)) throw fail("write", true);
  if (::fsync(fd) != 0) throw fail("fsync", true);
  if (unnamed) {
    // linkat of /proc/self/fd/N (AT_SYMLINK_FOLLOW) needs no privilege, unlike AT_EMPTY_PATH.
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0) throw fail("link", true);
    named = true;
  }
  if (::close(fd) != 0) throw fail("close", false);
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail("rename", false);
  fsync_folder(path, folder);
}

void rename_durably(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) throw std::runtime_error(failure(to, "rename from " + from, errno));
  std::string folder = std::filesystem::path(to).parent_path().string();
  fsync_folder(to, folder.empty() ? "." : folder);
}

int remove_stale_temporaries(const std::string& folder) {
  static const std::regex temporary(R"(.+\.tmp\.([0-9]+)\.[0-9a-f]{8})");
  int removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, match, temporary)) continue;
    pid_t pid = 0;
    const std::string digits = match[1].str();
    if (std::from_chars(digits.data(), digits.data() + digits.size(), pid).ec != std::errc()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // its writer may still be at work
    removed += std::filesystem::remove(entry.path(), error) ? 1 : 0;
  }
  return removed;
}

std::string read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(failure(path, "open", errno));
  std::string contents;
  struct stat st{};
  if (::fstat(fd, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
    // /dev/zero or /dev/urandom never end: reading one as a config would eat the memory.
    ::close(fd);
    throw std::runtime_error(path + ": is a device, not a file");
  }
  if (st.st_size > 0) contents.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw std::runtime_error(failure(path, "read", err));
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return contents;
}

}  // namespace trepro
