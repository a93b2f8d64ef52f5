#include "conformance/model/model_testing.h"

#include <algorithm>

#include "core/philox.h"

namespace trepro::testing {

namespace {

// The tests build configs by hand: each must still be one a user could write in JSON.
ModelConfig validated(const ModelConfig& config) {
  validate(Config{config, TrainConfig{}}, "<model test config>");
  return config;
}

constexpr std::int64_t kSourceLength = 5;
constexpr std::int64_t kTargetLength = 6;
constexpr std::int64_t kPaddedRow = 1;
constexpr std::int64_t kPadding = 2;  // trailing pad positions of the padded row

}  // namespace

ModelConfig tiny_config() {
  ModelConfig c;
  c.vocab_size = 11;
  c.d_model = 8;
  c.heads = 2;
  c.d_ff = 12;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_len = 16;
  c.dropout = 0.0;
  return validated(c);
}

ModelConfig with_architecture(ModelConfig config, Architecture architecture) {
  const std::int64_t layers = std::max(config.encoder_layers, config.decoder_layers);
  config.architecture = architecture;
  config.encoder_layers = architecture == Architecture::decoder_only ? 0 : layers;
  config.decoder_layers = architecture == Architecture::encoder_only ? 0 : layers;
  return validated(config);
}

ModelConfig with_activation(ModelConfig config, Activation activation) {
  config.activation = activation;
  config.swiglu = activation == Activation::none;
  return validated(config);
}

ModelConfig with_head_dim(ModelConfig config, std::int64_t heads, std::int64_t head_dim) {
  config.heads = heads;
  config.head_dim = head_dim;
  return validated(config);
}

std::int64_t widest_sum(const ModelConfig& config) {
  return std::max({config.d_model, config.attention_width(), config.d_ff, config.max_len});
}

Tensor random_words(const Shape& shape, std::int64_t vocab, std::uint64_t seed) {
  Tensor ids = Tensor::empty(shape, DType::i32);
  const PhiloxKey key{seed, 0, 0x3071};
  const std::int64_t words = vocab - kFirstWord;
  for (std::int64_t i = 0; i < ids.numel(); ++i) {
    const auto draw = static_cast<std::int64_t>(philox_uniform(key, static_cast<std::uint64_t>(i)) *
                                                static_cast<double>(words));
    ids.set(i, static_cast<double>(kFirstWord + std::min(draw, words - 1)));
  }
  return ids;
}

Batch tiny_batch(const ModelConfig& config, std::uint64_t seed, std::int64_t rows) {
  const auto pad = static_cast<double>(config.pad_id);
  auto real_length = [&](std::int64_t row, std::int64_t length) {
    return row == kPaddedRow ? length - kPadding : length;
  };
  Batch batch;
  if (config.architecture != Architecture::decoder_only) {
    batch.src = random_words({rows, kSourceLength}, config.vocab_size, seed);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t t = real_length(r, kSourceLength); t < kSourceLength; ++t) {
        batch.src.set(r * kSourceLength + t, pad);
      }
    }
  }
  if (config.architecture == Architecture::encoder_only) {
    batch.labels = random_words({rows, kSourceLength}, config.vocab_size, seed + 1);
    for (std::int64_t i = 0; i < batch.src.numel(); ++i) {
      if (batch.src.at(i) == pad) batch.labels.set(i, pad);
    }
    return batch;
  }
  const Tensor words = random_words({rows, kTargetLength}, config.vocab_size, seed + 1);
  batch.tgt = Tensor::empty({rows, kTargetLength}, DType::i32);
  batch.labels = Tensor::empty({rows, kTargetLength}, DType::i32);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t length = real_length(r, kTargetLength);
    for (std::int64_t t = 0; t < kTargetLength; ++t) {
      const std::int64_t i = r * kTargetLength + t;
      const double next = t + 1 < length ? words.at(i) : t + 1 == length ? kEos : pad;
      batch.tgt.set(i, t == 0 ? kBos : t < length ? words.at(i - 1) : pad);
      batch.labels.set(i, next);
    }
  }
  return batch;
}

Tensor take_rows(const Tensor& matrix, const std::vector<std::int64_t>& rows) {
  const std::int64_t width = matrix.dim(1);
  Tensor out = Tensor::empty({static_cast<std::int64_t>(rows.size()), width}, matrix.dtype());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::int64_t i = 0; i < width; ++i) {
      out.set(static_cast<std::int64_t>(r) * width + i, matrix.at(rows[r] * width + i));
    }
  }
  return out;
}

std::vector<std::int64_t> real_rows(const Tensor& ids, std::int64_t pad_id, std::int64_t last) {
  std::vector<std::int64_t> rows;
  const std::int64_t length = ids.dim(1);
  for (std::int64_t b = 0; b < ids.dim(0); ++b) {
    for (std::int64_t t = 0; t <= std::min(last, length - 1); ++t) {
      if (ids.at(b * length + t) != static_cast<double>(pad_id)) rows.push_back(b * length + t);
    }
  }
  return rows;
}

}  // namespace trepro::testing
