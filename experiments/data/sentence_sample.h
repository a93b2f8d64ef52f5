// The sentences a corpus's vocabulary is trained on (data.vocabulary.sample_sentences): every
// sentence of both sides of the training split, sources then targets, or a deterministic random
// sample of them that never holds more than the sample in memory.
//
// The sample: each sentence gets a Philox key of its place in the corpus alone (side, line), and
// the `count` smallest keys win (one streaming pass, a heap of `count` sentences); the winners
// keep the corpus order. The key does not depend on train.seed, so every seed of an ablation
// trains the same vocabulary; a count at least the corpus's size is the whole corpus, in the
// same order as no sampling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/data/parallel_corpus.h"
#include "experiments/data/rate_progress.h"

namespace trepro {

// `count` 0 = every sentence. Progress lines go to `note`.
std::vector<std::string> vocabulary_sentences(const CorpusSpec& spec, std::int64_t count,
                                              const RateProgress::Note& note);

}  // namespace trepro
