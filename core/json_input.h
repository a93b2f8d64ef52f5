// Parsing JSON that comes from outside the program: configs, ablation specs, safetensors
// headers, run reports read back. Two things nlohmann's parser accepts are errors here:
// - nesting deeper than kMaxJsonDepth: nlohmann parses any depth, but its serializer (which
//   error messages use to quote values), comparisons and copies recurse once per level, so a
//   file of 100,000 '[' would overflow the stack;
// - a key that appears twice in one object: nlohmann keeps the last, so a config would silently
//   mean something other than what a reader of its first key sees.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace trepro {

// Arrays and objects nested deeper than this are rejected before parsing. The files the program
// reads nest a handful of levels (a run report, an ablation summary); 64 is far from both that
// and the stack's end.
inline constexpr int kMaxJsonDepth = 64;

// The message names the source first: "cfg.json: JSON nested deeper than 64 levels (at byte 64)",
// "cfg.json: model.vocab_size: the key appears twice", "cfg.json: invalid JSON: ...".
class JsonInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses `text`, which errors call `source` (a file name, or "RUN/history.jsonl:3").
nlohmann::json parse_json(std::string_view text, const std::string& source);

// Reads the file at `path` and parses it; errors name the path (read_file's std::runtime_error
// for a file that cannot be read, JsonInputError for its contents).
nlohmann::json read_json_file(const std::string& path);

}  // namespace trepro
