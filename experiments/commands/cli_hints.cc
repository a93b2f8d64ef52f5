#include "experiments/commands/cli_hints.h"

#include <algorithm>
#include <cstddef>

namespace trepro::cli {

namespace {

// Edits (insert, delete, substitute, swap two neighbours) from a to b: the optimal string
// alignment distance, so that "trian" is one edit from "train", as a typist would count it.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> long_option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

}  // namespace

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (best.empty() || d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  const std::size_t allowed = std::max<std::size_t>(1, std::max(word.size(), best.size()) / 3);
  return !best.empty() && best_distance <= allowed ? best : "";
}

std::string parse_hint(CLI::App& app, int argc, const char* const* argv) {
  if (argc < 2) return "";
  const std::string first = argv[1];
  if (first.empty() || first[0] == '-') return "";
  CLI::App* command = nullptr;
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(first)) command = sub;
  }
  if (command == nullptr) {
    const std::string near = closest_name(first, command_names(app));
    return "trepro: unknown command \"" + first + "\"" + (near.empty() ? "" : "; did you mean \"" + near + "\"?") +
           " (`trepro --help` lists the commands)\n";
  }
  const std::vector<std::string> known = long_option_names(*command);
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") break;
    if (!word.starts_with("--")) continue;
    word = word.substr(0, word.find('='));
    if (std::find(known.begin(), known.end(), word) != known.end()) continue;
    const std::string near = closest_name(word, known);
    return "trepro " + first + ": unknown option " + word + (near.empty() ? "" : "; did you mean " + near + "?") +
           " (`trepro " + first + " --help` lists its options)\n";
  }
  return "";
}

}  // namespace trepro::cli
