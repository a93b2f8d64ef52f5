// Atomic file writes: write an unnamed temporary file in the target's folder (O_TMPFILE; a named
// sibling where the file system lacks it), fsync it, give it a name, rename it over the target,
// fsync the folder. A reader sees the old file or the new one, never half of one, and a process
// killed while writing leaves no partial file.
#pragma once

#include <string>
#include <string_view>

namespace trepro {

// Throws std::runtime_error naming `path` and the failing system call.
void write_file_atomically(const std::string& path, std::string_view contents);
// Reads a whole file; throws std::runtime_error naming `path` when it cannot.
std::string read_file(const std::string& path);

}  // namespace trepro
