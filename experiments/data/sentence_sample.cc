#include "experiments/data/sentence_sample.h"

#include <algorithm>
#include <tuple>

#include "core/philox.h"

namespace trepro {

namespace {

// The Philox stream of the sample's keys; a constant, so the sample is a function of the corpus.
constexpr PhiloxKey kSampleKey{0x5A3B1E, 0, 0xB0CAB001};

struct Candidate {
  std::uint64_t key;
  int side;  // 0 source, 1 target
  std::int64_t line;
  std::string text;
  bool operator<(const Candidate& other) const { return key < other.key; }  // a max-heap on the key
};

std::uint64_t sample_key(int side, std::int64_t line) {
  const std::uint64_t place = (static_cast<std::uint64_t>(line) << 1) | static_cast<std::uint64_t>(side);
  const auto words = philox_block(kSampleKey, place);
  return (static_cast<std::uint64_t>(words.v[0]) << 32) | words.v[1];
}

}  // namespace

std::vector<std::string> vocabulary_sentences(const CorpusSpec& spec, std::int64_t count,
                                              const RateProgress::Note& note) {
  PairReader reader(spec, spec.train);
  RateProgress progress("vocabulary sample of " + spec.train, "pairs", note);
  std::vector<std::string> sources, targets;
  std::vector<Candidate> sample;  // a max-heap on the key: the front is the first to give way
  const auto offer = [&](int side, std::string& text) {
    const std::uint64_t key = sample_key(side, reader.line_number());
    if (static_cast<std::int64_t>(sample.size()) == count) {
      if (key >= sample.front().key) return;
      std::pop_heap(sample.begin(), sample.end());
      sample.pop_back();
    }
    sample.push_back({key, side, reader.line_number(), std::move(text)});
    std::push_heap(sample.begin(), sample.end());
  };
  std::string source, target;
  while (reader.next(source, target)) {
    if (count == 0) {
      sources.push_back(std::move(source));
      targets.push_back(std::move(target));
    } else {
      offer(0, source);
      offer(1, target);
    }
    progress.update(reader.line_number(), reader.fraction_read());
  }
  progress.finish(reader.line_number());
  if (count == 0) {
    sources.insert(sources.end(), std::make_move_iterator(targets.begin()), std::make_move_iterator(targets.end()));
    return sources;
  }
  std::sort(sample.begin(), sample.end(),
            [](const Candidate& a, const Candidate& b) { return std::tie(a.side, a.line) < std::tie(b.side, b.line); });
  std::vector<std::string> sentences;
  sentences.reserve(sample.size());
  for (Candidate& c : sample) sentences.push_back(std::move(c.text));
  return sentences;
}

}  // namespace trepro
