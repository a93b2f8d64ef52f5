// Incremental (cached) decoding against the full forward it replaces, and the cache reordering
// beam search relies on. Both sides compute the same values through differently shaped GEMMs
// and attention calls (one query against a cache instead of T queries under a causal mask), so
// they agree within Check::model_vs_reference at the model's widest sum. Host matrices are
// compared through the reference backend, whose download is a copy.
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "conformance/support/tensor_testing.h"
#include "model/incremental_decoder.h"

namespace trepro::testing {
namespace {

constexpr std::uint64_t kSeed = 5;

// Column t of host ids [B, T] as host ids [B].
Tensor column(const Tensor& ids, std::int64_t t) {
  Tensor out = Tensor::empty({ids.dim(0)}, DType::i32);
  for (std::int64_t b = 0; b < ids.dim(0); ++b) out.set(b, ids.at(b * ids.dim(1) + t));
  return out;
}

// Rows `rows` of host ids [B, T] (or undefined when ids is).
Tensor select(const Tensor& ids, const std::vector<std::int64_t>& rows) {
  return ids.defined() ? take_rows(ids, rows) : Tensor();
}

class IncrementalDecodingTest : public BackendTest {
 protected:
  Tolerance tol(const ModelConfig& config) {
    return tolerance(Check::model_vs_reference, backend().dtype(), widest_sum(config));
  }

  // Decodes the batch's target one position at a time and compares each real position's
  // logits with the full forward's.
  void expect_equal_to_full_forward(const ModelConfig& config) {
    Backend& b = backend();
    Transformer model(config, b);
    model.initialize(kSeed);
    const Batch batch = tiny_batch(config, kSeed);
    const Tensor full = b.download(model.forward(batch));
    const std::int64_t rows = batch.tgt.dim(0), length = batch.tgt.dim(1);
    IncrementalDecoder decoder(model, batch.src, rows);
    for (std::int64_t t = 0; t < length; ++t) {
      const Tensor step = b.download(decoder.step(column(batch.tgt, t)));
      for (std::int64_t r = 0; r < rows; ++r) {
        // A padded position is masked as a key in the full forward only: nothing to compare.
        if (batch.tgt.at(r * length + t) == static_cast<double>(config.pad_id)) continue;
        EXPECT_TRUE(all_close("row " + std::to_string(r) + " position " + std::to_string(t), reference(),
                              take_rows(step, {r}), reference(), take_rows(full, {r * length + t}),
                              tol(config)));
      }
    }
    EXPECT_EQ(decoder.position(), length);
  }

  void expect_equal_to_full_forward_for_each_positional(ModelConfig config) {
    for (Positional positional : {Positional::sinusoidal, Positional::learned, Positional::rope}) {
      SCOPED_TRACE(to_string(positional));
      config.positional = positional;
      expect_equal_to_full_forward(config);
    }
  }
};

TEST_P(IncrementalDecodingTest, EncoderDecoderPostLnEqualsFullForward) {
  expect_equal_to_full_forward_for_each_positional(tiny_config());
}

TEST_P(IncrementalDecodingTest, EncoderDecoderPreLnEqualsFullForward) {
  ModelConfig config = tiny_config();
  config.norm = NormPlacement::pre;
  expect_equal_to_full_forward_for_each_positional(config);
}

TEST_P(IncrementalDecodingTest, DecoderOnlyEqualsFullForward) {
  for (NormPlacement norm : {NormPlacement::post, NormPlacement::pre}) {
    SCOPED_TRACE(to_string(norm));
    ModelConfig config = with_architecture(tiny_config(), Architecture::decoder_only);
    config.norm = norm;
    expect_equal_to_full_forward_for_each_positional(config);
  }
}

// The cache holds heads x head_dim wide keys and values, not d_model wide ones.
TEST_P(IncrementalDecodingTest, HeadDimNotDModelOverHeadsEqualsFullForward) {
  for (Architecture architecture : {Architecture::encoder_decoder, Architecture::decoder_only}) {
    SCOPED_TRACE(to_string(architecture));
    for (const auto [heads, head_dim] : {std::pair{3, 2}, std::pair{2, 6}}) {
      SCOPED_TRACE("heads " + std::to_string(heads) + ", head_dim " + std::to_string(head_dim));
      expect_equal_to_full_forward_for_each_positional(
          with_head_dim(with_architecture(tiny_config(), architecture), heads, head_dim));
    }
  }
}

// Decode 3 positions, keep rows {1, 1, 0, 2} (a repeat, a new order, a new batch size; row 1 is
// the one with padded source, so its mask must move with it), decode on: the logits equal those
// of a decoder started on the selected rows.
TEST_P(IncrementalDecodingTest, ReorderEqualsDecodingTheSelectedRowsFromScratch) {
  Backend& b = backend();
  const std::vector<std::int64_t> keep = {1, 1, 0, 2};
  constexpr std::int64_t kBefore = 3;
  for (Architecture architecture : {Architecture::encoder_decoder, Architecture::decoder_only}) {
    SCOPED_TRACE(to_string(architecture));
    const ModelConfig config = with_architecture(tiny_config(), architecture);
    Transformer model(config, b);
    model.initialize(kSeed);
    const Batch batch = tiny_batch(config, kSeed, 3);
    const Tensor tgt = take_rows(batch.tgt, keep);
    const std::int64_t length = tgt.dim(1);

    IncrementalDecoder reordered(model, batch.src, batch.tgt.dim(0));
    for (std::int64_t t = 0; t < kBefore; ++t) reordered.step(column(batch.tgt, t));
    Tensor rows = Tensor::empty({static_cast<std::int64_t>(keep.size())}, DType::i32);
    for (std::size_t i = 0; i < keep.size(); ++i)
      rows.set(static_cast<std::int64_t>(i), static_cast<double>(keep[i]));
    reordered.reorder(rows);
    ASSERT_EQ(reordered.batch(), static_cast<std::int64_t>(keep.size()));

    IncrementalDecoder fresh(model, select(batch.src, keep), static_cast<std::int64_t>(keep.size()));
    for (std::int64_t t = 0; t < kBefore; ++t) fresh.step(column(tgt, t));
    for (std::int64_t t = kBefore; t < length; ++t) {
      const Tensor expected = b.download(fresh.step(column(tgt, t)));
      const Tensor actual = b.download(reordered.step(column(tgt, t)));
      EXPECT_TRUE(all_close("position " + std::to_string(t), reference(), actual, reference(), expected,
                            tol(config)));
    }
  }
}

// Beam search's reorders: each source's row repeated, then a source dropped and the others left
// with unequal numbers of rows, then the sources in another order, one row each. Every row is
// fed its own tokens, so rows of one source differ as beams do. After each reorder the logits
// equal those of a decoder started on the selected sources and fed each row's history.
TEST_P(IncrementalDecodingTest, ReordersThatRepeatAndDropSourcesEqualDecodingTheRowsFromScratch) {
  Backend& b = backend();
  const ModelConfig config = tiny_config();
  Transformer model(config, b);
  model.initialize(kSeed);
  const Batch batch = tiny_batch(config, kSeed, 3);
  const std::vector<std::vector<std::int64_t>> reorders = {{0, 0, 0, 1, 1, 1, 2, 2, 2}, {3, 5, 4, 7, 6}, {3, 0}};
  // Host ids [rows] for position t: distinct per row and position, never padding.
  const auto tokens = [&](std::size_t rows, std::int64_t t) {
    Tensor ids = Tensor::empty({static_cast<std::int64_t>(rows)}, DType::i32);
    for (std::size_t r = 0; r < rows; ++r) {
      ids.set(static_cast<std::int64_t>(r), static_cast<double>(1 + (3 * r + 5 * static_cast<std::size_t>(t)) %
                                                                    static_cast<std::size_t>(config.vocab_size - 1)));
    }
    return ids;
  };
  IncrementalDecoder reordered(model, batch.src, batch.tgt.dim(0));
  std::vector<std::int64_t> source = {0, 1, 2};             // each row's source sentence
  std::vector<std::vector<double>> history(source.size());  // each row's tokens so far
  for (const std::vector<std::int64_t>& rows : reorders) {
    const Tensor fed = tokens(source.size(), reordered.position());
    reordered.step(fed);
    for (std::size_t r = 0; r < source.size(); ++r) history[r].push_back(fed.at(static_cast<std::int64_t>(r)));
    Tensor indices = Tensor::empty({static_cast<std::int64_t>(rows.size())}, DType::i32);
    std::vector<std::int64_t> next_source;
    std::vector<std::vector<double>> next_history;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      indices.set(static_cast<std::int64_t>(i), static_cast<double>(rows[i]));
      next_source.push_back(source[static_cast<std::size_t>(rows[i])]);
      next_history.push_back(history[static_cast<std::size_t>(rows[i])]);
    }
    reordered.reorder(indices);
    source = next_source;
    history = next_history;

    const std::int64_t t = reordered.position();
    IncrementalDecoder fresh(model, take_rows(batch.src, source), static_cast<std::int64_t>(source.size()));
    for (std::int64_t u = 0; u < t; ++u) {
      Tensor ids = Tensor::empty({static_cast<std::int64_t>(source.size())}, DType::i32);
      for (std::size_t r = 0; r < source.size(); ++r) ids.set(static_cast<std::int64_t>(r), history[r][static_cast<std::size_t>(u)]);
      fresh.step(ids);
    }
    const Tensor next = tokens(source.size(), t);
    const Tensor expected = b.download(fresh.step(next));
    const Tensor actual = b.download(reordered.step(next));
    for (std::size_t r = 0; r < source.size(); ++r) history[r].push_back(next.at(static_cast<std::int64_t>(r)));
    EXPECT_TRUE(all_close("position " + std::to_string(t), reference(), actual, reference(), expected, tol(config)));
  }
}

// A reorder that keeps no row (every sentence ended, or none may produce a token) leaves a decoder
// of batch 0, as beam search asks for when every source has a maximum length of 0.
TEST_P(IncrementalDecodingTest, AReorderToNoRowsLeavesAnEmptyBatch) {
  const ModelConfig config = tiny_config();
  Transformer model(config, backend());
  model.initialize(kSeed);
  const Batch batch = tiny_batch(config, kSeed, 3);
  IncrementalDecoder decoder(model, batch.src, batch.tgt.dim(0));
  decoder.step(column(batch.tgt, 0));
  decoder.reorder(Tensor::empty({0}, DType::i32));
  EXPECT_EQ(decoder.batch(), 0);
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(IncrementalDecodingTest);

}  // namespace
}  // namespace trepro::testing
