// Atomic file writes: write a temporary sibling, fsync it, rename over the target, fsync the
// folder. A reader sees the old file or the new one, never half of one.
#pragma once

#include <string>
#include <string_view>

namespace trepro {

// Throws std::runtime_error naming `path` and the failing system call.
void write_file_atomically(const std::string& path, std::string_view contents);
// Renames `from` (a file or a folder) to `to` and fsyncs the folder holding `to`, so the rename
// survives a crash: a folder built under a temporary name appears whole. Throws naming both.
void rename_durably(const std::string& from, const std::string& to);
// Reads a whole file; throws std::runtime_error naming `path` when it cannot.
std::string read_file(const std::string& path);

}  // namespace trepro
