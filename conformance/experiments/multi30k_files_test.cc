// Multi30K files (experiments/data/multi30k.h) through the text reader of every corpus
// (experiments/data/text_lines.h, parallel_corpus.h): gzip lines, the multi30k preset's pairs
// and checks, the data folder resolution order, and the Multi30K the repository ships in data/;
// every error names the file or folder.
#include "experiments/data/multi30k.h"
#include "experiments/data/parallel_corpus.h"
#include "conformance/support/scratch_dir.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace trepro {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) { return trepro::testing::fresh_dir("multi30k_files_test", name); }

void write_gzip(const fs::path& path, const std::string& contents) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, contents.data(), static_cast<unsigned>(contents.size())), static_cast<int>(contents.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> read_gzip_lines(const std::string& path) {
  TextLines reader(path);
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) lines.push_back(line);
  return lines;
}

ParallelText read_multi30k(const std::string& data_dir, const std::string& split, const std::string& source,
                           const std::string& target) {
  Config config;
  config.model.vocab_size = 100;
  config.data.dataset = Dataset::multi30k;
  config.data.source_language = source;
  config.data.target_language = target;
  return read_split(corpus_spec(config, data_dir), split);
}

TEST(GzipLines, ReadsLinesWithoutTheirEndings) {
  const fs::path path = fresh_dir("lines") / "a.gz";
  write_gzip(path, "Ein Hund.\r\nZwei Katzen.\n\nDrei Vögel ohne Zeilenende");
  EXPECT_EQ(read_gzip_lines(path.string()),
            (std::vector<std::string>{"Ein Hund.", "Zwei Katzen.", "", "Drei Vögel ohne Zeilenende"}));
}

TEST(GzipLines, LongLinesSpanningReadBuffersSurvive) {
  const fs::path path = fresh_dir("long") / "a.gz";
  const std::string line(10000, 'x');
  write_gzip(path, line + "\n" + line + "\n");
  EXPECT_EQ(read_gzip_lines(path.string()), (std::vector<std::string>{line, line}));
}

TEST(GzipLines, AMissingFileIsAnErrorNamingIt) {
  const std::string path = (fresh_dir("missing") / "nope.gz").string();
  EXPECT_NE(message_of([&] { read_gzip_lines(path); }).find(path + ": cannot open"), std::string::npos);
}

TEST(GzipLines, CorruptDataIsAnErrorNamingTheFile) {
  const fs::path dir = fresh_dir("corrupt");
  write_gzip(dir / "good.gz", std::string(5000, 'a') + "\n");
  // Keep the gzip header, damage the deflate stream.
  std::ifstream in(dir / "good.gz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t i = 12; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xFF);
  std::ofstream(dir / "bad.gz", std::ios::binary) << bytes;
  const std::string path = (dir / "bad.gz").string();
  const std::string message = message_of([&] { read_gzip_lines(path); });
  EXPECT_NE(message.find(path + " line 1: corrupt gzip data"), std::string::npos) << message;
}

// A gzip file cut short, at its checksum trailer or mid-stream (an interrupted download), is an
// error naming it, never a shorter corpus.
TEST(GzipLines, ATruncatedFileIsAnErrorNamingTheFile) {
  const fs::path dir = fresh_dir("truncated");
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i * 7919 % 10007) + " of a corpus\n";
  write_gzip(dir / "whole.gz", text);
  std::ifstream in(dir / "whole.gz", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(read_gzip_lines((dir / "whole.gz").string()).size(), 2000u);
  for (const std::size_t keep : {bytes.size() - 8, bytes.size() * 6 / 10}) {
    const fs::path cut = dir / ("cut_" + std::to_string(keep) + ".gz");
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, keep);
    const std::string message = message_of([&] { read_gzip_lines(cut.string()); });
    EXPECT_NE(message.find(cut.string() + " line "), std::string::npos) << message;
    EXPECT_NE(message.find("truncated gzip file"), std::string::npos) << message;
  }
}

TEST(ReadMulti30k, PairsLineNOfBothLanguages) {
  const fs::path data = fresh_dir("pairs");
  fs::create_directories(data / "multi30k");
  write_gzip(data / "multi30k" / "val.de.gz", "Ein Hund.\nEine Katze.\n");
  write_gzip(data / "multi30k" / "val.en.gz", "A dog.\nA cat.\n");
  const ParallelText text = read_multi30k(data.string(), "val", "en", "de");
  EXPECT_EQ(text.source, (std::vector<std::string>{"A dog.", "A cat."}));
  EXPECT_EQ(text.target, (std::vector<std::string>{"Ein Hund.", "Eine Katze."}));
}

TEST(ReadMulti30k, DifferentLineCountsAreAnErrorNamingBothFiles) {
  const fs::path data = fresh_dir("counts");
  fs::create_directories(data / "multi30k");
  write_gzip(data / "multi30k" / "val.de.gz", "Ein Hund.\nEine Katze.\n");
  write_gzip(data / "multi30k" / "val.en.gz", "A dog.\n");
  const std::string message = message_of([&] { read_multi30k(data.string(), "val", "de", "en"); });
  EXPECT_NE(message.find("val.en.gz ends after 1 lines but"), std::string::npos) << message;
  EXPECT_NE(message.find("val.de.gz has a line 2"), std::string::npos) << message;
}

TEST(ResolveDataDir, AnExplicitFolderWinsAndAWrongOneDoesNotFallThrough) {
  const fs::path data = fresh_dir("explicit");
  fs::create_directories(data / "multi30k");
  EXPECT_EQ(resolve_data_dir(data.string()), data.string());
  const std::string wrong = (data / "elsewhere").string();
  const std::string message = message_of([&] { resolve_data_dir(wrong); });
  EXPECT_NE(message.find("--data-dir / data.dir: " + wrong + " (no multi30k/ folder)"), std::string::npos) << message;
  EXPECT_EQ(message.find("default"), std::string::npos) << "a wrong explicit folder fell through: " << message;
}

TEST(ResolveDataDir, TheEnvironmentVariableComesBeforeTheDefaults) {
  const fs::path data = fresh_dir("environment");
  fs::create_directories(data / "multi30k");
  ASSERT_EQ(setenv("TREPRO_DATA_DIR", data.c_str(), 1), 0);
  EXPECT_EQ(resolve_data_dir(""), data.string());
  ASSERT_EQ(setenv("TREPRO_DATA_DIR", (data / "missing").c_str(), 1), 0);
  EXPECT_NE(message_of([] { resolve_data_dir(""); }).find("$TREPRO_DATA_DIR"), std::string::npos);
  unsetenv("TREPRO_DATA_DIR");
}

// The data ships with the project (data/multi30k/README.md): with neither --data-dir nor
// $TREPRO_DATA_DIR, the repository's own data/ is the folder, and every split reads whole. Its
// absence is a failure, not a skip (data/check_checksums.py checks the bytes).
TEST(ResolveDataDir, TheDefaultIsTheRepositorysDataFolderThatShipsMulti30k) {
  const char* environment = std::getenv("TREPRO_DATA_DIR");
  const std::string saved = environment == nullptr ? "" : environment;
  unsetenv("TREPRO_DATA_DIR");
  const std::string shipped = std::string(TREPRO_SOURCE_DIR) + "/data";
  std::string found;
  try {
    found = resolve_data_dir("");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the repository's data/multi30k/ is missing (it ships with the project): " << e.what();
  }
  EXPECT_EQ(found, shipped);
  const std::vector<std::pair<std::string, std::size_t>> splits = {
      {"train", 29000}, {"val", 1014}, {"test_2016_flickr", 1000}, {"test_2017_flickr", 1000}, {"test_2017_mscoco", 461}};
  for (const auto& [split, pairs] : splits) {
    std::size_t read = 0;
    try {
      read = read_multi30k(shipped, split, "de", "en").source.size();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the shipped split " << split << ": " << e.what();
    }
    EXPECT_EQ(read, pairs) << "pairs in the shipped data/multi30k/" << split << ".{de,en}.gz";
  }
  if (!saved.empty()) setenv("TREPRO_DATA_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace trepro
