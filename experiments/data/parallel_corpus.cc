#include "experiments/data/parallel_corpus.h"

#include <filesystem>
#include <stdexcept>

#include "experiments/data/multi30k.h"

namespace trepro {

CorpusSpec corpus_layout(const Config& config) {
  const DataConfig& d = config.data;
  if (d.dataset == Dataset::multi30k) {
    return {"", d.source_language, d.target_language, "train", "val", {"test_2016_flickr"}, config.model.max_len, true};
  }
  if (d.dataset != Dataset::parallel) {
    throw std::invalid_argument("data.dataset " + to_string(d.dataset) + " has no files");
  }
  const bool filter = d.max_len_filter > 0;
  return {"", d.source_language, d.target_language, d.train, d.valid, d.test,
          filter ? d.max_len_filter : config.model.max_len, filter};
}

CorpusSpec corpus_spec(const Config& config, const std::string& data_dir) {
  CorpusSpec spec = corpus_layout(config);
  const std::string dir = data_dir.empty() ? config.data.dir : data_dir;
  if (config.data.dataset == Dataset::multi30k) {
    spec.dir = (std::filesystem::path(resolve_data_dir(dir)) / "multi30k").string();
    return spec;
  }
  if (dir.empty()) throw std::runtime_error("data.dir: the parallel dataset needs a folder (data.dir or --data-dir)");
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error("data.dir: " + dir + " is not a folder");
  spec.dir = dir;
  return spec;
}

std::string split_file(const CorpusSpec& spec, const std::string& split, const std::string& language) {
  const std::string plain = (std::filesystem::path(spec.dir) / (split + "." + language)).string();
  const std::string gzip = plain + ".gz";
  const bool has_plain = std::filesystem::is_regular_file(plain), has_gzip = std::filesystem::is_regular_file(gzip);
  if (has_plain && has_gzip) throw std::runtime_error(plain + " and " + gzip + " both exist: keep one");
  if (!has_plain && !has_gzip) throw std::runtime_error(plain + ": not found (nor " + gzip + ")");
  return has_plain ? plain : gzip;
}

PairReader::PairReader(const CorpusSpec& spec, const std::string& split)
    : source_(split_file(spec, split, spec.source_language)), target_(split_file(spec, split, spec.target_language)) {}

bool PairReader::next(std::string& source, std::string& target) {
  const bool has_source = source_.next(source), has_target = target_.next(target);
  if (has_source && has_target) return true;
  if (!has_source && !has_target) {
    if (source_.line_number() == 0) throw std::runtime_error(source_.path() + ": empty file (no lines)");
    return false;
  }
  const TextLines& shorter = has_source ? target_ : source_;
  const TextLines& longer = has_source ? source_ : target_;
  throw std::runtime_error(shorter.path() + " ends after " + std::to_string(shorter.line_number()) + " lines but " +
                           longer.path() + " has a line " + std::to_string(longer.line_number()) +
                           ": the files are not line-aligned");
}

ParallelText read_split(const CorpusSpec& spec, const std::string& split) {
  PairReader reader(spec, split);
  ParallelText text;
  std::string source, target;
  while (reader.next(source, target)) {
    text.source.push_back(std::move(source));
    text.target.push_back(std::move(target));
  }
  return text;
}

bool keep_pair(const TokenPair& pair, const CorpusSpec& spec, const PairLocation& where, FilterCounts& counts) {
  const auto check = [&](const std::vector<int>& side, const std::string& path) {
    const auto with_eos = static_cast<std::int64_t>(side.size()) + 1;
    if (!side.empty() && with_eos <= spec.max_len) return true;
    if (spec.filter) return false;
    const std::string problem = side.empty() ? "an empty sentence"
                                             : std::to_string(with_eos) + " tokens with EOS, more than the " +
                                                   std::to_string(spec.max_len) + " positions of model.max_len";
    throw std::runtime_error(path + " line " + std::to_string(where.line) + ": " + problem +
                             " (data.max_len_filter drops and counts such pairs)");
  };
  if (check(pair.source, where.source_path) && check(pair.target, where.target_path)) return true;
  ++(pair.source.empty() || pair.target.empty() ? counts.empty : counts.too_long);
  return false;
}

}  // namespace trepro
