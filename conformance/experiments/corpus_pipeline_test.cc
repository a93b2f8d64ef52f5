// The corpus pipeline (experiments/data/): the parallel reader's errors, the vocabulary sample's
// determinism, prepare's binarized store read back, its reuse checks, and the same batches from
// the in-memory reader and the memory-mapped prepared folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <functional>
#include <tuple>

#include <unistd.h>

#include "core/file_lock.h"
#include "experiments/data/parallel_corpus.h"
#include "experiments/data/prepared_corpus.h"
#include "experiments/data/sentence_sample.h"
#include "experiments/data/vocabulary.h"
#include "experiments/training/training_data.h"
#include "conformance/support/scratch_dir.h"

namespace trepro {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) { return trepro::testing::fresh_dir("corpus_pipeline_test", name); }

void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

void quiet(const std::string&) {}

// "ein hund nummer N läuft ..." / "a dog number N runs ...": a corpus a 64-piece BPE can learn.
void write_corpus(const fs::path& dir, const std::string& split, int first, int last) {
  std::string de, en;
  for (int i = first; i <= last; ++i) {
    de += "ein hund nummer " + std::to_string(i) + " läuft " + std::to_string(i % 7) + " mal\n";
    en += "a dog number " + std::to_string(i) + " runs " + std::to_string(i % 7) + " times\n";
  }
  write(dir / (split + ".de"), de);
  write(dir / (split + ".en"), en);
}

Config parallel_config(const fs::path& dir) {
  Config c;
  c.model.vocab_size = 64;
  c.model.d_model = 16;
  c.model.heads = 2;
  c.model.encoder_layers = 1;
  c.model.decoder_layers = 1;
  c.model.d_ff = 32;
  c.model.max_len = 32;
  c.train.max_tokens = 128;
  c.train.seed = 5;
  c.data.dataset = Dataset::parallel;
  c.data.dir = dir.string();
  c.data.vocabulary.size = 64;
  c.data.valid = "valid";
  c.data.test = {"test"};
  return c;
}

fs::path corpus_dir(const std::string& name) {
  const fs::path dir = fresh_dir(name);
  write_corpus(dir, "train", 1, 150);
  write_corpus(dir, "valid", 151, 170);
  write_corpus(dir, "test", 171, 190);
  return dir;
}

std::string read_error(const fs::path& dir, const Config& config) {
  return message_of([&] { read_split(corpus_spec(config, dir.string()), "train"); });
}

TEST(ParallelReader, MisalignedFilesNameBothFilesAndTheLine) {
  const fs::path dir = fresh_dir("misaligned");
  write(dir / "train.de", "a\nb\nc\n");
  write(dir / "train.en", "a\nb\n");
  const std::string message = read_error(dir, parallel_config(dir));
  EXPECT_NE(message.find((dir / "train.en").string() + " ends after 2 lines but " + (dir / "train.de").string() +
                         " has a line 3"),
            std::string::npos)
      << message;
}

TEST(ParallelReader, AnEmptyFileIsAnErrorNamingIt) {
  const fs::path dir = fresh_dir("empty");
  write(dir / "train.de", "");
  write(dir / "train.en", "");
  EXPECT_EQ(read_error(dir, parallel_config(dir)), (dir / "train.de").string() + ": empty file (no lines)");
}

TEST(ParallelReader, InvalidUtf8NamesTheFileLineAndByte) {
  const fs::path dir = fresh_dir("utf8");
  write(dir / "train.de", "gut\nschl\xC3\n");  // a lead byte without its continuation
  write(dir / "train.en", "good\nbad\n");
  EXPECT_EQ(read_error(dir, parallel_config(dir)), (dir / "train.de").string() + " line 2: invalid UTF-8 at byte 5");
  for (const char* bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF"}) {  // overlong, surrogate, > U+10FFFF
    EXPECT_EQ(invalid_utf8_offset(std::string("ok") + bad), 2u) << bad;
  }
  EXPECT_EQ(invalid_utf8_offset("Vögel 🐦 ☃"), std::string_view::npos);
}

TEST(ParallelReader, AnOverLongLineIsAnErrorNamingTheLine) {
  const fs::path dir = fresh_dir("long_line");
  write(dir / "train.de", "kurz\n" + std::string(TextLines::kMaxLineBytes + 1, 'x') + "\n");
  write(dir / "train.en", "short\nlong\n");
  const std::string message = read_error(dir, parallel_config(dir));
  EXPECT_NE(message.find((dir / "train.de").string() + " line 2: longer than 1048576 bytes"), std::string::npos)
      << message;
}

TEST(ParallelReader, MissingAndAmbiguousFilesAreErrors) {
  const fs::path dir = fresh_dir("files");
  write(dir / "train.de", "a\n");
  EXPECT_NE(read_error(dir, parallel_config(dir)).find((dir / "train.en").string() + ": not found (nor "),
            std::string::npos);
  write(dir / "train.en", "a\n");
  write(dir / "train.en.gz", "");
  EXPECT_NE(read_error(dir, parallel_config(dir)).find("both exist"), std::string::npos);
}

// Without data.max_len_filter a pair that does not fit is an error naming its file and line;
// with it the pair is dropped and counted.
TEST(ParallelReader, TooLongOrEmptyPairsFailUnlessTheFilterDropsThem) {
  const fs::path dir = fresh_dir("filter");
  write(dir / "train.de", "a b\n\nc\na b c d e f\n");
  write(dir / "train.en", "x\ny\nz\nw\n");
  CorpusSpec spec{dir.string(), "de", "en", "train", "valid", {}, 4, false};
  const auto run = [&] {
    PairReader reader(spec, "train");
    FilterCounts counts;
    std::int64_t kept = 0;
    std::string source, target;
    while (reader.next(source, target)) {
      TokenPair pair;  // one id a character, so lengths are the text's
      for (char ch : source) if (ch != ' ') pair.source.push_back(ch);
      for (char ch : target) pair.target.push_back(ch);
      kept += keep_pair(pair, spec, reader.location(), counts) ? 1 : 0;
    }
    return std::tuple{kept, counts.empty, counts.too_long};
  };
  EXPECT_EQ(message_of([&] { run(); }),
            (dir / "train.de").string() + " line 2: an empty sentence (data.max_len_filter drops and counts such pairs)");
  spec.filter = true;
  EXPECT_EQ(run(), std::tuple(std::int64_t{2}, std::int64_t{1}, std::int64_t{1}));
}

TEST(VocabularySample, IsDeterministicSizedAndInCorpusOrder) {
  const fs::path dir = corpus_dir("sample");
  const CorpusSpec spec = corpus_spec(parallel_config(dir), "");
  const std::vector<std::string> all = vocabulary_sentences(spec, 0, quiet);
  ASSERT_EQ(all.size(), 300u);
  EXPECT_EQ(all.front(), "ein hund nummer 1 läuft 1 mal");  // sources first
  EXPECT_EQ(all[150], "a dog number 1 runs 1 times");
  const std::vector<std::string> sample = vocabulary_sentences(spec, 40, quiet);
  EXPECT_EQ(sample.size(), 40u);
  EXPECT_EQ(vocabulary_sentences(spec, 40, quiet), sample);
  EXPECT_NE(std::vector(all.begin(), all.begin() + 40), sample);  // a sample, not the head
  // A subsequence of the corpus: the order is kept.
  std::size_t at = 0;
  for (const std::string& s : sample) {
    while (at < all.size() && all[at] != s) ++at;
    ASSERT_LT(at, all.size()) << s;
  }
  EXPECT_EQ(vocabulary_sentences(spec, 1000, quiet), all);  // more than the corpus: all of it
}

std::vector<TokenPair> pairs_of(const PairTable& table) {
  std::vector<TokenPair> pairs;
  for (std::size_t i = 0; i < table.size(); ++i) pairs.push_back(table.pair(i));
  return pairs;
}

TEST(PreparedCorpus, ReadsBackTheEncodedPairsAndIsReusedOnlyWhenIntact) {
  const fs::path dir = corpus_dir("prepare");
  const Config config = parallel_config(dir);
  const std::string out = (dir / "prepared").string();
  const nlohmann::json manifest = prepare_corpus(config, "", "", out, quiet);
  EXPECT_EQ(manifest.at("token_type"), "uint16");
  EXPECT_EQ(manifest.at("splits").at("train").at("pairs"), 150);
  const PreparedCorpus corpus = PreparedCorpus::open(out, config);
  const Vocabulary vocabulary = Vocabulary::load(corpus.vocabulary_path());
  const ParallelText text = read_split(corpus_spec(config, ""), "valid");
  const std::vector<TokenPair> pairs = pairs_of(*corpus.split("valid"));
  ASSERT_EQ(pairs.size(), text.source.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(pairs[i].source, vocabulary.encode(text.source[i])) << i;
    EXPECT_EQ(pairs[i].target, vocabulary.encode(text.target[i])) << i;
  }
  EXPECT_EQ(prepare_corpus(config, "", "", out, quiet), manifest);  // reused

  Config other = config;
  other.data.max_len_filter = 16;
  EXPECT_NE(message_of([&] { PreparedCorpus::open(out, other); }).find("prepared with the settings"),
            std::string::npos);
  { std::fstream(fs::path(out) / "valid.en.tokens", std::ios::in | std::ios::out | std::ios::binary).put('\x7f'); }
  EXPECT_EQ(message_of([&] { PreparedCorpus::open(out, config); }),
            out + "/manifest.json: valid.en.tokens: sha256 differs from the manifest's (the file changed since prepare)");
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find("prepared.partial."), std::string::npos) << entry.path();
  }
}

TEST(PreparedCorpus, IsNotReusedForOtherTextOrAnotherVocabulary) {
  const fs::path dir = corpus_dir("reuse_inputs");
  const Config config = parallel_config(dir);
  const std::string out = (dir / "prepared").string();
  const nlohmann::json manifest = prepare_corpus(config, "", "", out, quiet);
  EXPECT_EQ(manifest.at("inputs").size(), 6u);
  EXPECT_EQ(manifest.at("inputs").at("train.de").at("bytes"), fs::file_size(dir / "train.de"));

  write_corpus(dir, "other", 1, 20);
  EXPECT_EQ(message_of([&] { prepare_corpus(config, "", (dir / "other.de").string(), out, quiet); }),
            out + "/manifest.json: prepared with another vocabulary than " + (dir / "other.de").string() +
                ": remove " + out + " or prepare into another folder");
  EXPECT_EQ(prepare_corpus(config, "", (fs::path(out) / "vocab.model").string(), out, quiet), manifest);

  write_corpus(dir, "train", 1, 149);  // one pair fewer: the settings are the same
  const std::string message = message_of([&] { prepare_corpus(config, "", "", out, quiet); });
  EXPECT_NE(message.find(out + "/manifest.json: prepared from train.de {"), std::string::npos) << message;
  EXPECT_NE(message.find("but " + (dir / "train.de").string() + " is now {"), std::string::npos) << message;
  EXPECT_NE(message.find("the text changed since prepare: remove " + out), std::string::npos) << message;

  nlohmann::json old_manifest = manifest;  // as an older trepro wrote it
  old_manifest.erase("inputs");
  std::ofstream(fs::path(out) / "manifest.json") << old_manifest.dump(2);
  EXPECT_NE(message_of([&] { prepare_corpus(config, "", "", out, quiet); })
                .find("records no input files (an older trepro prepared it)"),
            std::string::npos);
}

TEST(PreparedCorpus, RemovesTheFoldersOfKilledPreparesAndRefusesASecondPrepare) {
  const fs::path dir = corpus_dir("partials");
  const Config config = parallel_config(dir);
  const std::string out = (dir / "prepared").string();
  const fs::path killed = out + ".partial.4242", older_format = out + ".partial.some-host.77";
  const fs::path other_folder = (dir / "prepared2.partial.1");
  for (const fs::path& folder : {killed, older_format, other_folder}) fs::create_directories(folder);
  {
    const FileLock running = FileLock::acquire(out + ".lock");  // a prepare of the same folder at work
    EXPECT_EQ(message_of([&] { prepare_corpus(config, "", "", out, quiet); }),
              out + ".lock: another trepro prepare is writing " + out + ": wait for it");
    EXPECT_TRUE(fs::exists(killed));  // nothing is removed while another prepare may be writing
  }
  std::vector<std::string> notes;
  prepare_corpus(config, "", "", out, [&](const std::string& note) { notes.push_back(note); });
  EXPECT_FALSE(fs::exists(killed));
  EXPECT_FALSE(fs::exists(older_format));
  EXPECT_TRUE(fs::exists(other_folder));  // another folder's
  EXPECT_TRUE(fs::exists(fs::path(out) / "manifest.json"));
  EXPECT_FALSE(fs::exists(out + ".lock")) << "prepare removes its lock when it ends";
  EXPECT_NE(std::find(notes.begin(), notes.end(),
                      "prepare: removed " + killed.string() + ", left by a prepare that was killed"),
            notes.end());
}

TEST(PreparedCorpus, MakesTheParentsOfANestedOutWithATrailingSlash) {
  const fs::path dir = corpus_dir("nested");
  const fs::path out = dir / "data" / "wmt" / "prepared";
  prepare_corpus(parallel_config(dir), "", "", out.string() + "/", quiet);
  EXPECT_TRUE(fs::exists(out / "manifest.json"));
  EXPECT_FALSE(fs::exists(out / "prepared"));
}

TEST(PreparedCorpus, AMissingSplitIsFoundBeforeTheVocabularyIsTrained) {
  const fs::path dir = corpus_dir("missing_split");
  Config config = parallel_config(dir);
  config.data.test = {"test", "newstest2099"};
  std::vector<std::string> notes;
  EXPECT_EQ(message_of([&] {
              prepare_corpus(config, "", "", (dir / "prepared").string(),
                             [&](const std::string& note) { notes.push_back(note); });
            }),
            (dir / "newstest2099.de").string() + ": not found (nor " + (dir / "newstest2099.de.gz").string() + ")");
  EXPECT_EQ(notes, std::vector<std::string>{});
}

TEST(PreparedCorpus, CountsTheHeldOutLinesThatAreAlsoTrainingLines) {
  const fs::path dir = corpus_dir("overlap");
  write_corpus(dir, "test", 141, 160);  // 10 training pairs (141-150), then 10 of valid's
  std::ofstream(dir / "valid.de", std::ios::app) << "ein hund nummer 7 läuft 0 mal\n";  // train's source 7
  std::ofstream(dir / "valid.en", std::ios::app) << "a cat\n";                          // with another target
  const nlohmann::json manifest = prepare_corpus(parallel_config(dir), "", "", (dir / "prepared").string(), quiet);
  const nlohmann::json& splits = manifest.at("splits");
  EXPECT_EQ(splits.at("test").at("in_train"), (nlohmann::json{{"sources", 10}, {"pairs", 10}}));
  EXPECT_EQ(splits.at("valid").at("in_train"), (nlohmann::json{{"sources", 1}, {"pairs", 0}}));
  EXPECT_FALSE(splits.at("train").contains("in_train"));
}

// Every batch of two epochs, and the validation loss, through both readers.
void expect_same_batches(const Config& config, const std::string& data_dir, const fs::path& scratch) {
  const std::string prepared = (scratch / "prepared").string();
  fs::create_directories(scratch / "run_text");  // train_run makes the run folder first
  fs::create_directories(scratch / "run_mapped");
  const auto in_memory = TrainingData::open(config, (scratch / "run_text").string(), data_dir, "", quiet);
  prepare_corpus(config, data_dir, (scratch / "run_text" / "vocab.model").string(), prepared, quiet);
  const auto mapped = TrainingData::open(config, (scratch / "run_mapped").string(), "", prepared, quiet);
  ASSERT_EQ(in_memory->batches_per_epoch(), mapped->batches_per_epoch());
  DataPosition a, b;
  for (std::int64_t i = 0; i < 2 * in_memory->batches_per_epoch(); ++i) {
    const Batch x = in_memory->next(a), y = mapped->next(b);
    ASSERT_EQ(x.src.shape(), y.src.shape()) << i;
    ASSERT_EQ(x.tgt.shape(), y.tgt.shape()) << i;
    for (const auto& [p, q] : {std::pair{&x.src, &y.src}, {&x.tgt, &y.tgt}, {&x.labels, &y.labels}}) {
      ASSERT_EQ(std::memcmp(p->data<std::int64_t>(), q->data<std::int64_t>(), p->numel() * sizeof(std::int64_t)), 0)
          << "batch " << i;
    }
  }
  EXPECT_EQ(a.epoch, 3);
  EXPECT_EQ(in_memory->describe().at("train_pairs"), mapped->describe().at("train_pairs"));
}

TEST(PreparedCorpus, GivesTheInMemoryReadersBatchesBitForBit) {
  const fs::path dir = corpus_dir("batches");
  expect_same_batches(parallel_config(dir), "", dir);
}

// Multi30K's preset (today's reader: train, val, test_2016_flickr under <data>/multi30k,
// filtered at model.max_len) gives the same batches from its prepared folder.
TEST(PreparedCorpus, Multi30kThroughThePreparedFolderGivesTheSameBatches) {
  const fs::path data = fresh_dir("multi30k");
  const fs::path files = data / "multi30k";
  fs::create_directories(files);
  write_corpus(files, "train", 1, 150);
  write_corpus(files, "val", 151, 170);
  write_corpus(files, "test_2016_flickr", 171, 190);
  // An empty pair and one longer than model.max_len, which the preset drops.
  std::ofstream(files / "train.de", std::ios::app) << "\n" << std::string(200, 'x') << "\n";
  std::ofstream(files / "train.en", std::ios::app) << "nothing\nlong\n";
  Config config = parallel_config(data);
  config.data.dataset = Dataset::multi30k;
  config.data.dir = data.string();
  config.data.valid = DataConfig{}.valid;
  config.data.test = DataConfig{}.test;
  expect_same_batches(config, "", data);
}

}  // namespace
}  // namespace trepro
