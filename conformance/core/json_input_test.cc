#include "core/json_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace trepro {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The message of the JsonInputError that parsing `text` as "in.json" throws.
std::string error_of(const std::string& text) {
  try {
    parse_json(text, "in.json");
  } catch (const JsonInputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no JsonInputError for " << text.substr(0, 80);
  return "";
}

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonInput, ParsesOrdinaryJson) {
  EXPECT_EQ(parse_json(R"({"a": [1, {"b": "x"}], "c": null})", "in.json"),
            json({{"a", {1, {{"b", "x"}}}}, {"c", nullptr}}));
}

TEST(JsonInput, NestingUpToTheLimitIsAccepted) {
  EXPECT_NO_THROW(parse_json(nested(kMaxJsonDepth), "in.json"));
  EXPECT_EQ(error_of(nested(kMaxJsonDepth + 1)), "in.json: JSON nested deeper than 64 levels (at byte 64)");
  EXPECT_EQ(error_of(R"({"a": {"b": )" + nested(kMaxJsonDepth - 1) + "}}"),
            "in.json: JSON nested deeper than 64 levels (at byte 74)");
}

// What crashed trepro: nlohmann parses this, but quoting it in a message recursed 100,000 deep.
TEST(JsonInput, HundredThousandNestedArraysAreAnErrorNotACrash) {
  EXPECT_EQ(error_of(nested(100000)), "in.json: JSON nested deeper than 64 levels (at byte 64)");
  EXPECT_EQ(error_of(std::string(100000, '{')), "in.json: JSON nested deeper than 64 levels (at byte 64)");
}

// Brackets in strings, escaped quotes included, are text and not nesting.
TEST(JsonInput, BracketsInsideStringsDoNotCount) {
  const std::string brackets(1000, '[');
  EXPECT_EQ(parse_json("[\"" + brackets + "\"]", "in.json"), json::array({brackets}));
  EXPECT_EQ(parse_json(R"(["\"[[[", "\\"])", "in.json"), json::array({"\"[[[", "\\"}));
  EXPECT_THAT(error_of(R"(["\\", )" + nested(kMaxJsonDepth) + "]"), HasSubstr("nested deeper than 64 levels"));
}

TEST(JsonInput, DuplicateKeyNamesItsPath) {
  EXPECT_EQ(error_of(R"({"a": 1, "a": 1})"), "in.json: a: the key appears twice");
  EXPECT_EQ(error_of(R"({"model": {"vocab_size": 16, "vocab_size": 17}})"),
            "in.json: model.vocab_size: the key appears twice");
  EXPECT_EQ(error_of(R"({"variants": [{"name": "a"}, [], {"name": "b", "set": {}, "name": "c"}]})"),
            "in.json: variants[2].name: the key appears twice");
  EXPECT_EQ(error_of(R"([1, [2, {"x": 1, "x": 2}]])"), "in.json: [1][1].x: the key appears twice");
}

// Duplicates are per object: the same key in sibling or nested objects is fine.
TEST(JsonInput, SameKeyInDifferentObjectsIsAccepted) {
  EXPECT_NO_THROW(parse_json(R"({"x": {"x": 1}, "y": {"x": 2}, "z": [{"x": 3}, {"x": 4}]})", "in.json"));
}

TEST(JsonInput, InvalidJsonNamesTheSourceAndPosition) {
  const std::string message = error_of(R"({"a": 1,})");
  EXPECT_THAT(message, StartsWith("in.json: invalid JSON: "));
  EXPECT_THAT(message, HasSubstr("line 1"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("json.exception")));
}

// Found by fuzz/config_fuzz: nlohmann's parser throws out_of_range, not parse_error, for a number
// past double's range, and its message named no file.
TEST(JsonInput, ANumberPastDoublesRangeNamesTheSource) {
  EXPECT_EQ(error_of(R"({"lr": 1e444444444444444})"), "in.json: invalid JSON: number overflow parsing '1e444444444444444'");
}

TEST(JsonInput, ReadJsonFileNamesThePath) {
  const std::string path = ::testing::TempDir() + "json_input_test_duplicate.json";
  std::ofstream(path) << R"({"k": 1, "k": 2})";
  try {
    read_json_file(path);
    ADD_FAILURE() << "no JsonInputError";
  } catch (const JsonInputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": k: the key appears twice");
  }
  std::filesystem::remove(path);
  EXPECT_THROW(read_json_file(path), std::runtime_error);
}

}  // namespace
}  // namespace trepro
