// Line-by-line reading of a text file, plain or gzip (zlib reads both), holding one line at a
// time: a corpus of millions of lines streams through in constant memory. Every line is checked
// to be UTF-8 and at most kMaxLineBytes long; a failure names the file and the line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct gzFile_s;

namespace trepro {

// The byte offset of the first invalid UTF-8 sequence in `text` (overlong forms, surrogates and
// code points past U+10FFFF are invalid), or std::string_view::npos when it is all valid.
std::size_t invalid_utf8_offset(std::string_view text);

class TextLines {
 public:
  // No sentence is a megabyte long: a longer line is a binary file or lost newlines.
  static constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

  // Throws std::runtime_error naming `path` when it cannot be opened.
  explicit TextLines(std::string path);
  // Reads the next line into `line` (without its '\n', or the "\r\n" of a Windows file); false
  // at the end of the file. Throws std::runtime_error "<path> line N: ..." for invalid UTF-8, an
  // over-long line or corrupt gzip data.
  bool next(std::string& line);
  // The line `next` returned last, counted from 1.
  std::int64_t line_number() const { return line_number_; }
  // How much of the file (compressed bytes, for gzip) has been consumed, in [0, 1]: for ETAs.
  double fraction_read() const;
  const std::string& path() const { return path_; }

 private:
  bool refill();
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  std::unique_ptr<gzFile_s, int (*)(gzFile_s*)> file_;
  double file_bytes_ = 0;
  std::string buffer_;
  std::size_t start_ = 0;  // the unread part of buffer_ begins here
  bool at_end_ = false;
  std::int64_t line_number_ = 0;
};

}  // namespace trepro
