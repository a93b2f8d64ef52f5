#include "conformance/properties/property_support.h"

namespace trepro::testing {

bool rows_well_spread(const Tensor& x, NormKind kind) {
  const std::int64_t rows = x.dim(0), d = x.dim(1);
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0.0, squares = 0.0;
    for (std::int64_t i = 0; i < d; ++i) {
      sum += x.at(r * d + i);
      squares += x.at(r * d + i) * x.at(r * d + i);
    }
    const double mean = kind == NormKind::layer ? sum / static_cast<double>(d) : 0.0;
    if (squares / static_cast<double>(d) - mean * mean < kMinNormSpread * kMinNormSpread) return false;
  }
  return true;
}

}  // namespace trepro::testing
