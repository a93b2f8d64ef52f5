#include "core/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace trepro {

namespace {

std::string hex_of(const unsigned char* digest, unsigned int length) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("sha256: OpenSSL's EVP_Digest failed");
  }
  return hex_of(digest, length);
}

std::string sha256_file_hex(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("sha256: OpenSSL's EVP_DigestInit_ex failed");
  }
  std::vector<unsigned char> block(std::size_t{1} << 20);
  std::size_t read = 0;
  while ((read = std::fread(block.data(), 1, block.size(), file.get())) > 0) {
    if (EVP_DigestUpdate(context.get(), block.data(), read) != 1) {
      throw std::runtime_error("sha256: OpenSSL's EVP_DigestUpdate failed");
    }
  }
  if (std::ferror(file.get())) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context.get(), digest, &length) != 1) {
    throw std::runtime_error("sha256: OpenSSL's EVP_DigestFinal_ex failed");
  }
  return hex_of(digest, length);
}

}  // namespace trepro
