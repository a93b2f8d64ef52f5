// A batch without a token (B = 0 sequences, or T = 0 positions) is an error naming the input,
// on every path that takes token ids: B = 0 used to divide by zero in attention (SIGFPE), and
// T = 0 has no defined output (attention over no key, a mean loss over no label).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/model/model_testing.h"
#include "conformance/support/backend_fixture.h"
#include "model/incremental_decoder.h"

namespace trepro::testing {
namespace {

using ::testing::HasSubstr;

class EmptyBatchTest : public BackendTest {};

// The message of the std::invalid_argument that `call` throws.
template <class Call>
std::string error_of(Call call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_P(EmptyBatchTest, ForwardNamesTheEmptyInput) {
  for (Architecture architecture :
       {Architecture::encoder_decoder, Architecture::decoder_only, Architecture::encoder_only}) {
    const ModelConfig config = with_architecture(tiny_config(), architecture);
    Transformer model(config, backend());
    model.initialize(1);
    const bool has_src = architecture != Architecture::decoder_only;
    const char* input = has_src ? "batch.src" : "batch.tgt";
    for (const Shape& shape : {Shape{0, 3}, Shape{2, 0}, Shape{0, 0}}) {
      SCOPED_TRACE(to_string(architecture) + " " + shape_string(shape));
      Batch batch = tiny_batch(config, 1);
      (has_src ? batch.src : batch.tgt) = Tensor::empty(shape, DType::i32);
      EXPECT_EQ(error_of([&] { model.forward(batch); }),
                std::string(input) + ": shape " + shape_string(shape) +
                    " holds no token: a batch needs B >= 1 sequences of T >= 1 tokens");
    }
  }
}

TEST_P(EmptyBatchTest, AnEncoderDecoderTargetOfNoPositionIsAnError) {
  const ModelConfig config = tiny_config();
  Transformer model(config, backend());
  model.initialize(1);
  Batch batch = tiny_batch(config, 1);
  batch.tgt = Tensor::empty({2, 0}, DType::i32);
  EXPECT_THAT(error_of([&] { model.forward(batch); }), HasSubstr("batch.tgt: shape [2, 0] holds no token"));
}

TEST_P(EmptyBatchTest, IncrementalDecodingOfNoSentenceIsAnError) {
  Transformer model(tiny_config(), backend());
  model.initialize(1);
  EXPECT_THAT(error_of([&] { IncrementalDecoder(model, Tensor::empty({0, 5}, DType::i32), 0); }),
              HasSubstr("batch.src: shape [0, 5] holds no token"));
}

TR_INSTANTIATE_FOR_ALL_BACKENDS(EmptyBatchTest);

}  // namespace
}  // namespace trepro::testing
