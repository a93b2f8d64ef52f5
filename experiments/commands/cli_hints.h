// What `trepro` says when a command line does not parse: an unknown command or option is named
// with the closest known one ("did you mean"), rather than CLI11's "A subcommand is required".
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace trepro::cli {

// The candidate closest to `word` by edit distance, when it is close enough to be a typo (at most a
// third of the longer word's letters, and at least one letter, differ); empty otherwise.
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

// A message for a command line `app` could not parse: an unknown command, or an option its
// command does not have, each with the nearest known name. Empty when neither applies (CLI11's
// own message is then the one to print).
std::string parse_hint(CLI::App& app, int argc, const char* const* argv);

}  // namespace trepro::cli
