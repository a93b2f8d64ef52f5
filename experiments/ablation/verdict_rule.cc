#include "experiments/ablation/verdict_rule.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include <boost/math/distributions/chi_squared.hpp>

namespace trepro {

namespace {

std::vector<std::size_t> ascending_order(const std::vector<double>& p) {
  for (double v : p) {
    if (!(v >= 0.0 && v <= 1.0)) throw std::invalid_argument("multiplicity adjustment: a p value outside [0, 1]: " + std::to_string(v));
  }
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  return order;
}

}  // namespace

std::vector<double> holm_adjusted(const std::vector<double>& p) {
  const std::vector<std::size_t> order = ascending_order(p);
  const double m = static_cast<double>(p.size());
  std::vector<double> adjusted(p.size());
  double running = 0.0;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    running = std::max(running, std::min(1.0, (m - static_cast<double>(rank)) * p[order[rank]]));
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
  const std::vector<std::size_t> order = ascending_order(p);
  const double m = static_cast<double>(p.size());
  std::vector<double> q(p.size());
  double running = 1.0;
  for (std::size_t rank = order.size(); rank-- > 0;) {
    running = std::min(running, p[order[rank]] * m / static_cast<double>(rank + 1));
    q[order[rank]] = running;
  }
  return q;
}

PooledVariance pool_variances(const std::vector<SeedSample>& samples) {
  PooledVariance pooled;
  double sum = 0.0;
  for (const SeedSample& s : samples) {
    if (s.n < 2) continue;
    if (!(s.variance >= 0.0) || !std::isfinite(s.variance)) {
      throw std::invalid_argument("pool_variances: a variance that is negative or not finite: " + std::to_string(s.variance));
    }
    sum += static_cast<double>(s.n - 1) * s.variance;
    pooled.df += static_cast<double>(s.n - 1);
    ++pooled.configs;
  }
  if (pooled.df > 0) pooled.variance = sum / pooled.df;
  return pooled;
}

std::optional<Calibration> calibrate(const std::vector<CalibrationSample>& samples) {
  Calibration c;
  double sum = 0.0;
  for (const CalibrationSample& s : samples) {
    if (s.n < 2 || !(s.bootstrap_variance > 0.0)) continue;
    sum += static_cast<double>(s.n - 1) * s.seed_variance / s.bootstrap_variance;
    c.df += static_cast<double>(s.n - 1);
    ++c.configs;
  }
  if (c.df == 0) return std::nullopt;
  c.factor = sum / c.df;
  const boost::math::chi_squared_distribution<double> chi2(c.df);
  c.interval = {sum / boost::math::quantile(chi2, 0.975), sum / boost::math::quantile(chi2, 0.025)};
  return c;
}

ErrorModel error_model(double seed_variance, double seed_df, std::size_t n_better, std::size_t n_worse,
                       double test_set_variance) {
  if (n_better == 0 || n_worse == 0) throw std::invalid_argument("error_model: an arm without seeds");
  if (!(seed_df > 0.0)) throw std::invalid_argument("error_model: the seed variance has no degrees of freedom");
  const double seed_part = seed_variance * (1.0 / static_cast<double>(n_better) + 1.0 / static_cast<double>(n_worse));
  const double total = seed_part + test_set_variance;
  ErrorModel e;
  e.standard_error = std::sqrt(total);
  // Welch-Satterthwaite with the test-set part's df infinite: df = seed_df * (total / seed_part)^2.
  e.df = seed_part > 0.0 ? seed_df * (total / seed_part) * (total / seed_part) : INFINITY;
  return e;
}

DifferenceTest directional_test(double estimate, const ErrorModel& error) {
  DifferenceTest t;
  if (!(error.standard_error > 0.0)) throw std::invalid_argument("directional_test: a standard error of 0");
  t.statistic = estimate / error.standard_error;
  t.p_value = student_t_two_sided_p(t.statistic, error.df);
  const double half = student_t_quantile(0.975, error.df) * error.standard_error;
  t.interval = {estimate - half, estimate + half};
  return t;
}

EquivalenceTest equivalence_test(double estimate, const ErrorModel& error, double margin) {
  if (!(margin > 0.0)) throw std::invalid_argument("equivalence_test: a margin must be > 0");
  if (!(error.standard_error > 0.0)) throw std::invalid_argument("equivalence_test: a standard error of 0");
  const double se = error.standard_error;
  // Upper tails: P(T >= (d + m) / se) is H0 d <= -m's p, P(T <= (d - m) / se) is H0 d >= m's.
  const double p_above_lower = 1.0 - student_t_cdf((estimate + margin) / se, error.df);
  const double p_below_upper = student_t_cdf((estimate - margin) / se, error.df);
  EquivalenceTest t;
  t.p_equivalent = std::max(p_above_lower, p_below_upper);
  // Beyond: H0 -m <= d <= m against d > m (or d < -m).
  const double p_beyond_upper = 1.0 - student_t_cdf((estimate - margin) / se, error.df);
  const double p_beyond_lower = student_t_cdf((estimate + margin) / se, error.df);
  t.p_beyond = std::min(1.0, 2.0 * std::min(p_beyond_upper, p_beyond_lower));
  const double half = student_t_quantile(0.95, error.df) * se;
  t.interval = {estimate - half, estimate + half};
  return t;
}

double directional_power(double effect, const ErrorModel& error, double level) {
  const double critical = student_t_quantile(1.0 - level / 2.0, error.df);
  const double shift = effect / error.standard_error;
  return 1.0 - student_t_cdf(critical - shift, error.df) + student_t_cdf(-critical - shift, error.df);
}

double equivalence_power(double effect, const ErrorModel& error, double margin, double level) {
  const double critical = student_t_quantile(1.0 - level, error.df);
  const double se = error.standard_error;
  // Both one-sided tests reject: -m + c se < d < m - c se.
  const double upper = (margin - effect) / se - critical, lower = (-margin - effect) / se + critical;
  if (upper <= lower) return 0.0;
  return std::max(0.0, student_t_cdf(upper, error.df) - student_t_cdf(lower, error.df));
}

std::optional<std::size_t> seeds_for_power(const PowerQuestion& q, double target) {
  if (!(q.level > 0.0 && q.level < 1.0)) throw std::invalid_argument("seeds_for_power: a level outside (0, 1)");
  for (std::size_t n = 2; n <= kMaxSeedsPerArm; ++n) {
    const double added = n > q.seeds_now ? 2.0 * static_cast<double>(n - q.seeds_now) : 0.0;
    const ErrorModel e = error_model(q.seed_variance, q.seed_df + added, n, n, q.test_set_variance);
    const double power = q.margin > 0.0 ? equivalence_power(q.effect, e, q.margin, q.level)
                                        : directional_power(q.effect, e, q.level);
    if (power >= target) return n;
  }
  return std::nullopt;
}

}  // namespace trepro
