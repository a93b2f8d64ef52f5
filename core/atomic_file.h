// Atomic file writes: write an unnamed temporary file in the target's folder (O_TMPFILE; a named
// sibling where the file system lacks it), fsync it, give it a name, rename it over the target,
// fsync the folder. A reader sees the old file or the new one, never half of one, and a process
// killed while writing leaves no partial file (killed in the instant between naming and
// renaming, it leaves a whole temporary, which remove_stale_temporaries clears).
#pragma once

#include <string>
#include <string_view>

namespace trepro {

// Throws std::runtime_error naming `path` and the failing system call.
void write_file_atomically(const std::string& path, std::string_view contents);
// Renames `from` (a file or a folder) to `to` and fsyncs the folder holding `to`, so the rename
// survives a crash: a folder built under a temporary name appears whole. Throws naming both.
void rename_durably(const std::string& from, const std::string& to);
// Removes the temporaries (`<name>.tmp.<pid>.<hex>`) in `folder` whose writing process is gone:
// one killed between naming its whole, fsynced temporary and renaming it leaves one behind.
// Returns how many it removed.
int remove_stale_temporaries(const std::string& folder);
// Reads a whole file (or pipe); throws std::runtime_error naming `path` when it cannot, and for a
// device, which may never end.
std::string read_file(const std::string& path);

}  // namespace trepro
