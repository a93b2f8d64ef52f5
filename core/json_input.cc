#include "core/json_input.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "core/atomic_file.h"

namespace trepro {

namespace {

using nlohmann::json;

// The offset of the first '[' or '{' that opens level limit + 1, counting brackets outside
// strings. A plain loop over the bytes, so that it cannot itself recurse; malformed text is
// left to the parser, which runs only when this finds nothing.
std::optional<std::size_t> first_byte_deeper_than(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// An array or object the parser is inside: an object's keys so far, to find one given twice,
// and the member or element being read, for the dotted path in messages.
struct OpenContainer {
  explicit OpenContainer(bool object) : is_object(object) {}
  bool is_object;
  std::set<std::string> keys;
  std::string key;          // objects: the member being read
  std::int64_t index = -1;  // arrays: the element being read
};

// "model.vocab_size", "variants[1].set".
std::string dotted_path(const std::vector<OpenContainer>& open) {
  std::string path;
  for (const OpenContainer& c : open) {
    if (!c.is_object) {
      path.append("[").append(std::to_string(c.index)).append("]");
    } else {
      if (!path.empty()) path += ".";
      path += c.key;
    }
  }
  return path;
}

// Drops nlohmann's "[json.exception.parse_error.101] " prefix; the position and the reason remain.
std::string without_exception_id(std::string_view reason) {
  if (const auto end = reason.find("] "); reason.starts_with("[json.exception") && end != reason.npos) {
    reason.remove_prefix(end + 2);
  }
  return std::string(reason);
}

}  // namespace

json parse_json(std::string_view text, const std::string& source) {
  if (const std::optional<std::size_t> at = first_byte_deeper_than(text, kMaxJsonDepth)) {
    throw JsonInputError(source + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (at byte " +
                         std::to_string(*at) + ")");
  }
  std::vector<OpenContainer> open;
  // Sees every container and key as the parser meets them (iteratively: nlohmann's parser keeps
  // its own stack), and stops the parse at the second occurrence of a key.
  const json::parser_callback_t reject_duplicate_keys = [&](int, json::parse_event_t event, json& parsed) {
    using Event = json::parse_event_t;
    const bool element_starts = event == Event::object_start || event == Event::array_start || event == Event::value;
    if (element_starts && !open.empty() && !open.back().is_object) ++open.back().index;
    switch (event) {
      case Event::object_start:
        open.emplace_back(true);
        break;
      case Event::array_start:
        open.emplace_back(false);
        break;
      case Event::object_end:
      case Event::array_end:
        open.pop_back();
        break;
      case Event::key:
        open.back().key = parsed.get<std::string>();
        if (!open.back().keys.insert(open.back().key).second) {
          throw JsonInputError(source + ": " + dotted_path(open) + ": the key appears twice");
        }
        break;
      case Event::value:
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), reject_duplicate_keys);
  } catch (const json::parse_error& e) {
    throw JsonInputError(source + ": invalid JSON: " + without_exception_id(e.what()));
  } catch (const json::out_of_range& e) {  // a number past double's range: 1e400 (found by fuzz/)
    throw JsonInputError(source + ": invalid JSON: " + without_exception_id(e.what()));
  }
}

json read_json_file(const std::string& path) { return parse_json(read_file(path), path); }

}  // namespace trepro
