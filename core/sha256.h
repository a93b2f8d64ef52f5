// SHA-256 (FIPS 180-4, from OpenSSL's libcrypto), for content hashes in reports (config hash,
// file checksums).
#pragma once

#include <string>
#include <string_view>

namespace trepro {

// The digest of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
// The digest of a file's contents, read in blocks (a multi-gigabyte file never sits in memory).
// Throws std::runtime_error naming `path` when it cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace trepro
