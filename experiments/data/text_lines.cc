#include "experiments/data/text_lines.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace trepro {

namespace {

constexpr std::size_t kReadBytes = std::size_t{1} << 16;

// The length of the UTF-8 sequence starting at text[i], or 0 when it is not a valid one.
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  std::uint32_t code = 0, min_code = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code = lead & 0x1Fu, min_code = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code = lead & 0x0Fu, min_code = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code = lead & 0x07u, min_code = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  return code < min_code || surrogate || code > 0x10FFFF ? 0 : length;
}

}  // namespace

std::size_t invalid_utf8_offset(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = sequence_length(text, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

TextLines::TextLines(std::string path) : path_(std::move(path)), file_(gzopen(path_.c_str(), "rb"), gzclose) {
  if (!file_) throw std::runtime_error(path_ + ": cannot open: " + std::strerror(errno));
  gzbuffer(file_.get(), kReadBytes);
  std::error_code error;
  file_bytes_ = static_cast<double>(std::filesystem::file_size(path_, error));
}

void TextLines::fail(const std::string& what) const {
  throw std::runtime_error(path_ + " line " + std::to_string(line_number_) + ": " + what);
}

bool TextLines::refill() {
  buffer_.erase(0, start_);
  start_ = 0;
  const std::size_t kept = buffer_.size();
  buffer_.resize(kept + kReadBytes);
  const int read = gzread(file_.get(), buffer_.data() + kept, static_cast<unsigned>(kReadBytes));
  if (read < 0) {
    int code = 0;
    ++line_number_;
    fail(std::string("corrupt gzip data: ") + gzerror(file_.get(), &code));
  }
  buffer_.resize(kept + static_cast<std::size_t>(read));
  if (read == 0) {
    // zlib ends a gzip stream cut short (an interrupted download or copy) as if it were whole,
    // and says so only here: without this check the corpus silently loses its tail.
    int code = Z_OK;
    const char* message = gzerror(file_.get(), &code);
    if (code == Z_BUF_ERROR) {
      ++line_number_;
      fail(std::string("truncated gzip file (") + message + "): the file was cut short; fetch or copy it again");
    }
  }
  return read > 0;
}

bool TextLines::next(std::string& line) {
  std::size_t newline = std::string::npos;
  while ((newline = buffer_.find('\n', start_)) == std::string::npos) {
    if (buffer_.size() - start_ > kMaxLineBytes) {
      ++line_number_;
      fail("longer than " + std::to_string(kMaxLineBytes) + " bytes (a binary file, or lost newlines?)");
    }
    if (at_end_ || !refill()) {
      at_end_ = true;
      break;
    }
  }
  if (newline == std::string::npos && start_ == buffer_.size()) return false;
  const std::size_t end = newline == std::string::npos ? buffer_.size() : newline;
  line.assign(buffer_, start_, end - start_);
  start_ = newline == std::string::npos ? buffer_.size() : newline + 1;
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > kMaxLineBytes) {
    fail("longer than " + std::to_string(kMaxLineBytes) + " bytes (a binary file, or lost newlines?)");
  }
  if (const std::size_t bad = invalid_utf8_offset(line); bad != std::string_view::npos) {
    fail("invalid UTF-8 at byte " + std::to_string(bad + 1));
  }
  return true;
}

double TextLines::fraction_read() const {
  if (file_bytes_ <= 0) return 0.0;
  const double consumed = static_cast<double>(gzoffset(file_.get()));
  return consumed >= file_bytes_ ? 1.0 : consumed / file_bytes_;
}

}  // namespace trepro
