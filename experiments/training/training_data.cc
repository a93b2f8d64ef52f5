#include "experiments/training/training_data.h"

#include <filesystem>
#include <map>

#include "core/atomic_file.h"
#include "core/sha256.h"
#include "experiments/copy_task.h"
#include "experiments/data/parallel_corpus.h"
#include "experiments/data/prepared_corpus.h"
#include "experiments/data/sentence_sample.h"
#include "experiments/data/token_batches.h"
#include "experiments/data/vocabulary.h"
#include "experiments/run_folder/run_folder.h"

namespace trepro {

namespace {

// Held-out copy batches come from a seed stream training never uses.
constexpr std::uint64_t kValidationSeedOffset = 0x5EED;
constexpr std::uint64_t kValidationBatches = 4;

class SyntheticData : public TrainingData {
 public:
  explicit SyntheticData(const Config& config) : config_(config) {
    task_.reverse = config.data.dataset == Dataset::reverse;
    task_.min_length = config.data.min_length;
    task_.max_length = config.data.max_length;
    task_.batch_size = config.data.batch_size;
    for (std::uint64_t i = 0; i < kValidationBatches; ++i) {
      validation_.push_back(copy_task_batch(config.model, task_, config.train.seed + kValidationSeedOffset, i));
    }
  }

  Batch next(DataPosition& position) override {
    // Batch indices count from 1, as the copy task's stream always has.
    Batch batch = copy_task_batch(config_.model, task_, config_.train.seed, static_cast<std::uint64_t>(position.batch) + 1);
    skip(position);
    return batch;
  }
  void skip(DataPosition& position) override { ++position.batch; }
  std::int64_t batches_per_epoch() override { return 0; }
  double validation_loss(Transformer& model) override { return mean_loss(model, validation_); }
  std::optional<double> test_loss(Transformer&) override { return std::nullopt; }
  nlohmann::json describe() const override {
    return {{"dataset", to_string(config_.data.dataset)},
            {"min_length", task_.min_length},
            {"max_length", task_.max_length},
            {"batch_size", task_.batch_size}};
  }

 private:
  Config config_;
  CopyTask task_;
  std::vector<Batch> validation_;
};

std::vector<Batch> batches_in_order(const PairTable& pairs, std::int64_t max_tokens) {
  std::vector<Batch> batches;
  for (const auto& rows : token_batches_in_order(pairs.padded_lengths(), max_tokens)) {
    batches.push_back(make_batch(pairs, rows, Vocabulary::kPad, Vocabulary::kBos, Vocabulary::kEos));
  }
  return batches;
}

// A split read, encoded and filtered in memory (small corpora such as Multi30K).
std::unique_ptr<PairTable> encode_split(const CorpusSpec& spec, const std::string& split, const Vocabulary& vocabulary,
                                        FilterCounts& dropped) {
  PairReader reader(spec, split);
  std::vector<TokenPair> pairs;
  std::string source, target;
  while (reader.next(source, target)) {
    TokenPair pair{vocabulary.encode(source), vocabulary.encode(target)};
    if (keep_pair(pair, spec, reader.location(), dropped)) pairs.push_back(std::move(pair));
  }
  return std::make_unique<PairsInMemory>(std::move(pairs));
}

// The vocabulary of a run read in memory: RUN/vocab.model when it exists (resume), else trained
// on the sample of the training split and written there.
Vocabulary run_vocabulary(const Config& config, const CorpusSpec& spec, const std::string& model_path,
                          const std::function<void(const std::string&)>& note) {
  if (std::filesystem::exists(model_path)) {
    note("vocabulary: reusing " + model_path);
    return Vocabulary::load(model_path);
  }
  const VocabularyConfig& v = config.data.vocabulary;
  const std::vector<std::string> sentences = vocabulary_sentences(spec, v.sample_sentences, note);
  return train_vocabulary(sentences, v, model_path, note);
}

// The vocabulary of a run on a prepared folder: the folder's, copied into the run (decoding
// reads RUN/vocab.model); a resumed run's copy must still be the same model.
Vocabulary prepared_vocabulary(const PreparedCorpus& corpus, const std::string& model_path) {
  const std::string expected = corpus.manifest().at("vocabulary").at("sha256").get<std::string>();
  if (std::filesystem::exists(model_path)) {
    if (sha256_file_hex(model_path) != expected) {
      throw std::runtime_error(model_path + ": is not the vocabulary of the prepared folder (" +
                               corpus.vocabulary_path() + "): the run was started on other data");
    }
  } else {
    write_file_atomically(model_path, read_file(corpus.vocabulary_path()));
  }
  return Vocabulary::load(model_path);
}

// Multi30K and any parallel corpus: token batches of the training split, epochs.
class CorpusData : public TrainingData {
 public:
  CorpusData(const Config& config, const std::string& run_dir, const std::string& data_dir,
             const std::string& prepared_dir, const std::function<void(const std::string&)>& note)
      : config_(config), spec_(corpus_layout(config)) {
    const std::string model_path = RunFolder(run_dir).vocabulary();
    if (!prepared_dir.empty()) {
      const PreparedCorpus corpus = PreparedCorpus::open(prepared_dir, config);
      vocabulary_ = std::make_unique<Vocabulary>(prepared_vocabulary(corpus, model_path));
      where_ = prepared_dir;
      const auto dropped_from = [&](const std::string& split) {
        const nlohmann::json& dropped = corpus.manifest().at("splits").at(split).at("dropped");
        return dropped.at("too_long").get<std::int64_t>() + dropped.at("empty").get<std::int64_t>();
      };
      dropped_ = dropped_from(spec_.train);
      validation_dropped_ = dropped_from(spec_.valid);
      if (!spec_.test.empty()) test_dropped_ = dropped_from(spec_.test.front());
      train_ = corpus.split(spec_.train);
      validation_ = batches_in_order(*corpus.split(spec_.valid), config.train.max_tokens);
      if (!spec_.test.empty()) test_ = batches_in_order(*corpus.split(spec_.test.front()), config.train.max_tokens);
    } else {
      spec_ = corpus_spec(config, data_dir);
      vocabulary_ = std::make_unique<Vocabulary>(run_vocabulary(config, spec_, model_path, note));
      where_ = spec_.dir;
      note("data: encoding the training, validation and test splits of " + where_);
      FilterCounts dropped, validation_dropped, test_dropped;
      train_ = encode_split(spec_, spec_.train, *vocabulary_, dropped);
      dropped_ = dropped.empty + dropped.too_long;
      validation_ = batches_in_order(*encode_split(spec_, spec_.valid, *vocabulary_, validation_dropped),
                                     config.train.max_tokens);
      validation_dropped_ = validation_dropped.empty + validation_dropped.too_long;
      if (!spec_.test.empty()) {
        test_ = batches_in_order(*encode_split(spec_, spec_.test.front(), *vocabulary_, test_dropped),
                                 config.train.max_tokens);
        test_dropped_ = test_dropped.empty + test_dropped.too_long;
      }
    }
    if (vocabulary_->size() != config.model.vocab_size) {
      throw std::runtime_error(model_path + ": has " + std::to_string(vocabulary_->size()) +
                               " pieces, but model.vocab_size is " + std::to_string(config.model.vocab_size));
    }
    // An epoch of no batch has no first batch to read.
    if (train_->size() == 0) {
      const std::string train_file = prepared_dir.empty() ? split_file(spec_, spec_.train, spec_.source_language)
                                                          : prepared_dir + "/" + spec_.train;
      const char* bound = config.data.dataset == Dataset::multi30k ? "model.max_len" : "data.max_len_filter";
      throw std::runtime_error(train_file + ": none of its " + std::to_string(dropped_) + " pairs fits: each is " +
                               "empty or longer than " + bound + " " + std::to_string(spec_.max_len) +
                               " tokens with EOS");
    }
    lengths_ = train_->padded_lengths();
    note("data: " + where_ + ", " + std::to_string(train_->size()) + " training pairs (" + std::to_string(dropped_) +
         " dropped: empty or longer than " + std::to_string(spec_.max_len) + " tokens)");
  }

  Batch next(DataPosition& position) override {
    Batch batch = make_batch(*train_, batches_at(position)[static_cast<std::size_t>(position.batch)],
                             Vocabulary::kPad, Vocabulary::kBos, Vocabulary::kEos);
    skip(position);
    return batch;
  }
  void skip(DataPosition& position) override {
    const auto batches = static_cast<std::int64_t>(batches_at(position).size());
    if (++position.batch == batches) position = {position.epoch + 1, 0};
  }
  std::int64_t batches_per_epoch() override { return static_cast<std::int64_t>(epoch_batches(1).size()); }
  double validation_loss(Transformer& model) override { return mean_loss(model, validation_); }
  std::optional<double> test_loss(Transformer& model) override {
    if (spec_.test.empty()) return std::nullopt;
    return mean_loss(model, test_);
  }
  nlohmann::json describe() const override {
    const DataConfig& d = config_.data;
    return {{"dataset", to_string(d.dataset)},
            {"data_dir", where_},
            {"source_language", d.source_language},
            {"target_language", d.target_language},
            {"vocabulary", {{"kind", to_string(d.vocabulary.kind)}, {"size", vocabulary_->size()}}},
            {"train_pairs", train_->size()},
            {"dropped_pairs", dropped_},
            {"validation_split", spec_.valid},
            {"validation_dropped_pairs", validation_dropped_},
            {"test_split", spec_.test.empty() ? "" : spec_.test.front()},
            {"test_dropped_pairs", test_dropped_}};
  }

 private:
  // The batches of `position`'s epoch, once its batch is one of them: a checkpoint records the
  // position, and one of another corpus (or damaged) could point past the epoch's end.
  const std::vector<std::vector<std::size_t>>& batches_at(const DataPosition& position) {
    const auto& batches = epoch_batches(position.epoch);
    if (position.batch < 0 || position.batch >= static_cast<std::int64_t>(batches.size())) {
      throw std::runtime_error("data: position epoch " + std::to_string(position.epoch) + " batch " +
                               std::to_string(position.batch) + " is past the epoch's " +
                               std::to_string(batches.size()) + " batches of " + where_ +
                               " (a checkpoint of another corpus or batching?)");
    }
    return batches;
  }

  // One epoch's batch order, kept while that epoch runs.
  const std::vector<std::vector<std::size_t>>& epoch_batches(std::int64_t epoch) {
    if (cached_epoch_ != epoch) {
      cached_ = token_batches(lengths_, config_.train.max_tokens, config_.train.seed, epoch);
      cached_epoch_ = epoch;
    }
    return cached_;
  }

  Config config_;
  CorpusSpec spec_;
  std::string where_;  // the text folder or the prepared folder
  std::unique_ptr<Vocabulary> vocabulary_;
  std::shared_ptr<const PairTable> train_;
  std::vector<std::int32_t> lengths_;
  // Pairs the filter kept out (empty, or past the corpus's max_len): the losses cover the rest.
  std::int64_t dropped_ = 0, validation_dropped_ = 0, test_dropped_ = 0;
  std::vector<Batch> validation_, test_;
  std::int64_t cached_epoch_ = 0;
  std::vector<std::vector<std::size_t>> cached_;
};

}  // namespace

TokenLoss token_loss(Transformer& model, const std::vector<Batch>& batches) {
  double weighted = 0.0;
  TokenLoss result;
  for (const Batch& batch : batches) {
    model.forward(batch);
    weighted += model.loss(batch.labels, 0.0, SmoothingForm::uniform) * static_cast<double>(model.loss_tokens());
    result.tokens += model.loss_tokens();
  }
  result.loss = result.tokens == 0 ? 0.0 : weighted / static_cast<double>(result.tokens);
  return result;
}

double mean_loss(Transformer& model, const std::vector<Batch>& batches) { return token_loss(model, batches).loss; }

std::unique_ptr<TrainingData> TrainingData::open(const Config& config, const std::string& run_dir,
                                                 const std::string& data_dir, const std::string& prepared_dir,
                                                 const std::function<void(const std::string&)>& note) {
  if (config.data.dataset == Dataset::multi30k || config.data.dataset == Dataset::parallel) {
    return std::make_unique<CorpusData>(config, run_dir, data_dir, prepared_dir, note);
  }
  if (!prepared_dir.empty()) {
    throw std::runtime_error("--data " + prepared_dir + ": the " + to_string(config.data.dataset) +
                             " task has no files to prepare");
  }
  note("data: " + to_string(config.data.dataset) + " task");
  return std::make_unique<SyntheticData>(config);
}

}  // namespace trepro
