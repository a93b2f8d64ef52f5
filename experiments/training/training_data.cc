#include "experiments/training/training_data.h"

#include <filesystem>
#include <map>

#include "experiments/copy_task.h"
#include "experiments/data/multi30k.h"
#include "experiments/data/token_batches.h"
#include "experiments/data/vocabulary.h"

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
    ++position.batch;
    return batch;
  }
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

std::vector<TokenPair> encode_pairs(const Vocabulary& vocabulary, const ParallelText& text) {
  std::vector<TokenPair> pairs;
  pairs.reserve(text.source.size());
  for (std::size_t i = 0; i < text.source.size(); ++i) {
    pairs.push_back({vocabulary.encode(text.source[i]), vocabulary.encode(text.target[i])});
  }
  return pairs;
}

class Multi30kData : public TrainingData {
 public:
  Multi30kData(const Config& config, const std::string& run_dir, const std::string& data_dir,
               const std::function<void(const std::string&)>& note)
      : config_(config), data_dir_(resolve_data_dir(data_dir.empty() ? config.data.dir : data_dir)) {
    const DataConfig& d = config.data;
    const ParallelText train = read_multi30k(data_dir_, "train", d.source_language, d.target_language);
    const std::string model_path = (std::filesystem::path(run_dir) / "vocab.model").string();
    if (std::filesystem::exists(model_path)) {
      vocabulary_ = std::make_unique<Vocabulary>(Vocabulary::load(model_path));
      note("vocabulary: reusing " + model_path);
    } else {
      std::vector<std::string> sentences = train.source;
      sentences.insert(sentences.end(), train.target.begin(), train.target.end());
      note("vocabulary: training " + to_string(d.vocabulary.kind) + " " + std::to_string(d.vocabulary.size) + " on " +
           std::to_string(sentences.size()) + " sentences");
      vocabulary_ = std::make_unique<Vocabulary>(
          Vocabulary::train(sentences, {d.vocabulary.kind, d.vocabulary.size, 2}, model_path));
    }
    if (vocabulary_->size() != config.model.vocab_size) {
      throw std::runtime_error(model_path + ": has " + std::to_string(vocabulary_->size()) +
                               " pieces, but model.vocab_size is " + std::to_string(config.model.vocab_size));
    }
    train_ = pairs_within(encode_pairs(*vocabulary_, train), config.model.max_len, &dropped_);
    // An epoch of no batch has no first batch to read.
    if (train_.empty()) {
      throw std::runtime_error(data_dir_ + "/multi30k/train." + d.source_language + ".gz: none of its " +
                               std::to_string(dropped_) + " pairs fits: each is empty or longer than model.max_len " +
                               std::to_string(config.model.max_len) + " tokens with EOS");
    }
    validation_ = evaluation_batches("val");
    test_ = evaluation_batches("test_2016_flickr");
    note("data: " + data_dir_ + "/multi30k, " + std::to_string(train_.size()) + " training pairs (" +
         std::to_string(dropped_) + " dropped: empty or longer than model.max_len)");
  }

  Batch next(DataPosition& position) override {
    const auto& batches = epoch_batches(position.epoch);
    Batch batch = make_batch(train_, batches[static_cast<std::size_t>(position.batch)], Vocabulary::kPad,
                             Vocabulary::kBos, Vocabulary::kEos);
    if (++position.batch == static_cast<std::int64_t>(batches.size())) position = {position.epoch + 1, 0};
    return batch;
  }
  std::int64_t batches_per_epoch() override { return static_cast<std::int64_t>(epoch_batches(1).size()); }
  double validation_loss(Transformer& model) override { return mean_loss(model, validation_); }
  std::optional<double> test_loss(Transformer& model) override { return mean_loss(model, test_); }
  nlohmann::json describe() const override {
    const DataConfig& d = config_.data;
    return {{"dataset", "multi30k"},
            {"data_dir", data_dir_},
            {"source_language", d.source_language},
            {"target_language", d.target_language},
            {"vocabulary", {{"kind", to_string(d.vocabulary.kind)}, {"size", vocabulary_->size()}}},
            {"train_pairs", train_.size()},
            {"dropped_pairs", dropped_},
            {"validation_split", "val"},
            {"test_split", "test_2016_flickr"}};
  }

 private:
  // One epoch's batch order, kept while that epoch runs.
  const std::vector<std::vector<std::size_t>>& epoch_batches(std::int64_t epoch) {
    if (cached_epoch_ != epoch) {
      cached_ = token_batches(train_, config_.train.max_tokens, config_.train.seed, epoch);
      cached_epoch_ = epoch;
    }
    return cached_;
  }

  std::vector<Batch> evaluation_batches(const std::string& split) const {
    const DataConfig& d = config_.data;
    std::int64_t dropped = 0;
    const std::vector<TokenPair> pairs = pairs_within(
        encode_pairs(*vocabulary_, read_multi30k(data_dir_, split, d.source_language, d.target_language)),
        config_.model.max_len, &dropped);
    std::vector<Batch> batches;
    for (const auto& rows : token_batches_in_order(pairs, config_.train.max_tokens)) {
      batches.push_back(make_batch(pairs, rows, Vocabulary::kPad, Vocabulary::kBos, Vocabulary::kEos));
    }
    return batches;
  }

  Config config_;
  std::string data_dir_;
  std::unique_ptr<Vocabulary> vocabulary_;
  std::vector<TokenPair> train_;
  std::int64_t dropped_ = 0;
  std::vector<Batch> validation_, test_;
  std::int64_t cached_epoch_ = 0;
  std::vector<std::vector<std::size_t>> cached_;
};

}  // namespace

double mean_loss(Transformer& model, const std::vector<Batch>& batches) {
  double weighted = 0.0;
  std::int64_t tokens = 0;
  for (const Batch& batch : batches) {
    model.forward(batch);
    weighted += model.loss(batch.labels, 0.0, SmoothingForm::uniform) * static_cast<double>(model.loss_tokens());
    tokens += model.loss_tokens();
  }
  return tokens == 0 ? 0.0 : weighted / static_cast<double>(tokens);
}

std::unique_ptr<TrainingData> TrainingData::open(const Config& config, const std::string& run_dir,
                                                 const std::string& data_dir,
                                                 const std::function<void(const std::string&)>& note) {
  if (config.data.dataset == Dataset::multi30k) return std::make_unique<Multi30kData>(config, run_dir, data_dir, note);
  note("data: " + to_string(config.data.dataset) + " task");
  return std::make_unique<SyntheticData>(config);
}

}  // namespace trepro
