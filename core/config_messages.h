// The parts of config error messages shared by reading, validation and loading:
// "<source>: <dotted.key>: <what is wrong>".
#pragma once

#include <charconv>
#include <string>
#include <string_view>

namespace trepro {

inline std::string format_error(const std::string& source, std::string_view path, std::string_view what) {
  std::string message = source + ": ";
  if (!path.empty()) message.append(path).append(": ");
  return message.append(what);
}

// The shortest text that reads back as the same double ("0.1", "1e-05").
inline std::string format_number(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

inline std::string dotted(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : std::string(prefix) + "." + std::string(key);
}

}  // namespace trepro
