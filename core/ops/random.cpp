#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/random.h>
#include <brasa/ops/random.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <type_traits>

namespace brasa {
namespace {

Generator& pick(Generator* g) { return g ? *g : default_generator(); }

constexpr int64_t kWordBlock = 1024;  // words drawn at once (8 KiB on the stack)

// Copies the host buffer c into t when they differ; t's version moves on.
void finish_fill(Tensor& t, const Tensor& c) {
  if (!c.is_same(t)) detail::copy_kernel(t, c);
  t.bump_version();
}

constexpr auto word_to_float = &Generator::word_to_float;
constexpr auto word_to_double = &Generator::word_to_double;

// word_to_double(w) < p exactly when (w >> 11) < bernoulli_threshold(p), for
// p in [0, 1]: both sides scaled by 2^53 (exact), and an integer is below x
// when it is below ceil(x). An integer compare, without the conversion.
uint64_t bernoulli_threshold(double p) { return static_cast<uint64_t>(std::ceil(p * 0x1.0p53)); }

// log of x in (0, 1], in float, branch-free (so that loops of it vectorize):
// x = 2^e m with m in [sqrt(1/2), sqrt(2)), and log m = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| < 0.172, whose odd series to s^9 is within
// float rounding. x must be a normal float.
inline float log_unit(float x) {
  constexpr int32_t kRootHalf = 0x3F3504F3;  // the bits of sqrt(1/2)
  const int32_t bits = std::bit_cast<int32_t>(x);
  const int32_t e = (bits - kRootHalf) >> 23;
  const float m = std::bit_cast<float>(bits - e * (int32_t{1} << 23));
  const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
  const float series =
      s * (2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9)))));
  return static_cast<float>(e) * 0.693147180559945f + series;
}

// cos and sin of 2 pi u for u in [0, 1], in float, branch-free: u less its
// nearest quarter is exact, leaving an angle in [-pi/4, pi/4] for Taylor
// polynomials (to a^9 and a^10, within float rounding); the quarter picks
// the swap and the signs.
inline void sincos_turns(float u, float& cos_out, float& sin_out) {
  const int32_t quarter = static_cast<int32_t>(4.0f * u + 0.5f);
  const float a = (u - static_cast<float>(quarter) * 0.25f) * 6.28318530717959f, a2 = a * a;
  const float s =
      a *
      (1.0f + a2 * (-1.0f / 6 + a2 * (1.0f / 120 + a2 * (-1.0f / 5040 + a2 * (1.0f / 362880)))));
  const float c =
      1.0f +
      a2 * (-1.0f / 2 + a2 * (1.0f / 24 + a2 * (-1.0f / 720 + a2 * (1.0f / 40320 - a2 / 3628800))));
  const bool odd = quarter & 1;
  const float cos_v = odd ? s : c, sin_v = odd ? c : s;
  cos_out = ((quarter + 1) & 2) ? -cos_v : cos_v;  // quarters 1 and 2
  sin_out = (quarter & 2) ? -sin_v : sin_v;        // quarters 2 and 3
}

// n normal values into p by Box-Muller on pairs of words (u1 from the first,
// u2 from the second): r = sqrt(-2 log(1 - u1)), then r cos(2 pi u2) and
// r sin(2 pi u2); an odd last value uses its pair's first. Doubles through
// libm on 53-bit uniforms; the other types in float on 24-bit uniforms
// through the branch-free forms above, which vectorize (libm's calls kept a
// 512k-value randn at 18 ns a value).
template <class T>
void fill_normal_pairs(T* p, int64_t n, Generator& g, double mean, double std) {
  uint64_t words[kWordBlock];
  using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;
  Compute values[kWordBlock], u1[kWordBlock / 2], u2[kWordBlock / 2];
  const Compute m = static_cast<Compute>(mean), sd = static_cast<Compute>(std);
  for (int64_t i = 0; i < n; i += kWordBlock) {
    const int64_t count = std::min<int64_t>(kWordBlock, n - i), pairs = (count + 1) / 2;
    g.engine().fill(words, 2 * pairs);
    for (int64_t k = 0; k < pairs; ++k) {
      if constexpr (std::is_same_v<Compute, double>) {
        u1[k] = 1.0 - word_to_double(words[2 * k]);
        u2[k] = word_to_double(words[2 * k + 1]);
      } else {
        u1[k] = 1.0f - word_to_float(words[2 * k]);
        u2[k] = word_to_float(words[2 * k + 1]);
      }
    }
    for (int64_t k = 0; k < pairs; ++k) {
      if constexpr (std::is_same_v<Compute, double>) {
        const double r = std::sqrt(-2.0 * std::log(u1[k])), th = 2.0 * M_PI * u2[k];
        values[2 * k] = m + sd * r * std::cos(th);  // the grouping of the earlier sums
        values[2 * k + 1] = m + sd * (r * std::sin(th));
      } else {
        const float r = std::sqrt(-2.0f * log_unit(u1[k]));
        float c, s;
        sincos_turns(u2[k], c, s);
        values[2 * k] = m + sd * (r * c);
        values[2 * k + 1] = m + sd * (r * s);
      }
    }
    for (int64_t k = 0; k < count; ++k) p[i + k] = static_cast<T>(values[k]);
  }
}

// Fills t (any layout, any device) in index order, one word of g's stream
// per element: words are drawn a block at a time and convert(word) turns each
// into a value. The generators are host streams: values are drawn on the
// host (the same numbers whatever the device) and copied to t's device.
template <class Convert>
void fill_from_words(Tensor& t, Generator& g, const Convert& convert) {
  Tensor c =
      t.is_contiguous() && t.is_cpu() ? t : empty(t.sizes(), t.options().device(Device(kCPU)));
  BRASA_DISPATCH_ALL_TYPES_AND_BOOL(t.dtype(), "random", [&] {
    scalar_t* p = c.data_ptr<scalar_t>();
    uint64_t words[kWordBlock];
    for (int64_t i = 0; i < c.numel(); i += kWordBlock) {
      const int64_t n = std::min<int64_t>(kWordBlock, c.numel() - i);
      g.engine().fill(words, n);
      for (int64_t k = 0; k < n; ++k) p[i + k] = static_cast<scalar_t>(convert(words[k]));
    }
  });
  finish_fill(t, c);
}

// Fills t on its device when the device has a generator kernel (CUDA), from
// g's counter stream; false on the CPU, whose numbers come from the host
// stream (fill_from_words). The caller holds g's mutex.
bool fill_on_device(Tensor& t, RandomDistribution kind, double a, double b, Generator& g) {
  if (t.is_cpu() || !has_kernel<RandomFillKernel>(t.device())) return false;
  if (t.numel() == 0) return true;
  Tensor c = t.is_contiguous() ? t : empty(t.sizes(), t.options());
  g.device_offset() +=
      kernel<RandomFillKernel>(t.device())(c, kind, a, b, g.current_seed(), g.device_offset());
  if (!c.is_same(t)) detail::copy_kernel(t, c);
  t.bump_version();
  return true;
}

// The options of a *_like factory: t's dtype and device unless given.
TensorOptions like(const Tensor& t, TensorOptions o) {
  if (!o.has_dtype()) o = o.dtype(t.dtype());
  if (!o.has_device()) o = o.device(t.device());
  return o;
}

void check_float(const char* op, const Tensor& t) {
  BRASA_CHECK(t.is_floating_point(), op, ": expected a floating point tensor, got ", t.dtype());
}

}  // namespace

Generator& default_generator() {
  static Generator g;
  return g;
}

void manual_seed(uint64_t seed) { default_generator().set_current_seed(seed); }

Tensor& uniform_(Tensor& t, double from, double to, Generator* gen) {
  check_float("uniform_", t);
  BRASA_CHECK(from <= to, "uniform_: expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  Generator& g = pick(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  if (fill_on_device(t, RandomDistribution::kUniform, from, to, g)) return t;
  double span = to - from;
  if (t.dtype() == kDouble)
    fill_from_words(t, g, [&](uint64_t w) { return from + span * word_to_double(w); });
  else
    fill_from_words(t, g,
                    [&](uint64_t w) { return static_cast<float>(from + span * word_to_float(w)); });
  return t;
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  check_float("normal_", t);
  BRASA_CHECK(std >= 0, "normal_: expects std >= 0.0, but found std ", std);
  Generator& g = pick(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  if (fill_on_device(t, RandomDistribution::kNormal, mean, std, g)) return t;
  Tensor c =
      t.is_contiguous() && t.is_cpu() ? t : empty(t.sizes(), t.options().device(Device(kCPU)));
  if (c.dtype() == kDouble) {
    fill_normal_pairs<double>(c.data_ptr<double>(), c.numel(), g, mean, std);
  } else {
    BRASA_DISPATCH_FLOATING_TYPES(c.dtype(), "normal_", [&] {
      if constexpr (!std::is_same_v<scalar_t, double>)
        fill_normal_pairs<scalar_t>(c.data_ptr<scalar_t>(), c.numel(), g, mean, std);
    });
  }
  finish_fill(t, c);
  return t;
}

Tensor& bernoulli_(Tensor& t, double p, Generator* gen) {
  BRASA_CHECK(p >= 0 && p <= 1, "bernoulli_: expected p to be in [0, 1], but got p=", p);
  Generator& g = pick(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  if (fill_on_device(t, RandomDistribution::kBernoulli, p, 1, g)) return t;
  const uint64_t below = bernoulli_threshold(p);
  fill_from_words(t, g, [&](uint64_t w) { return (w >> 11) < below ? 1 : 0; });
  return t;
}

namespace detail {
Tensor& dropout_mask_(Tensor& t, double keep, Generator* gen) {
  BRASA_CHECK(keep > 0 && keep <= 1, "dropout: the kept fraction must be in (0, 1], got ", keep);
  Generator& g = pick(gen);
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    if (fill_on_device(t, RandomDistribution::kBernoulli, keep, 1 / keep, g)) return t;
  }
  // The CPU's mask in two passes, bernoulli_ then div_: one pass that wrote
  // 1 / keep directly was slower (its select of doubles did not vectorize).
  bernoulli_(t, keep, gen);
  return t.div_(keep);
}
}  // namespace detail

Tensor& random_(Tensor& t, int64_t from, int64_t to, Generator* gen) {
  BRASA_CHECK(from < to, "random_: expects 'from' to be less than 'to', but got from=", from,
              " >= to=", to);
  Generator& g = pick(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  // Bounds that a double holds exactly go to the device's generator.
  constexpr int64_t kExact = int64_t{1} << 53;
  if (from >= -kExact && to <= kExact &&
      fill_on_device(t, RandomDistribution::kRandomInt, static_cast<double>(from),
                     static_cast<double>(to), g))
    return t;
  uint64_t range = static_cast<uint64_t>(to - from);
  fill_from_words(t, g, [&](uint64_t w) { return from + static_cast<int64_t>(w % range); });
  return t;
}

namespace {
// `t` <- f(u) for u uniform in [0, 1), computed in double and converted
// (not recorded by autograd, as uniform_).
template <class F>
Tensor& fill_from_uniform(Tensor& t, Generator* gen, F&& f) {
  NoGradGuard no_grad;
  Tensor u = empty(t.sizes(), TensorOptions().dtype(kDouble).device(t.device()));
  uniform_(u, 0, 1, gen);
  t.copy_(f(u));
  return t;
}
}  // namespace

Tensor& exponential_(Tensor& t, double lambd, Generator* gen) {
  check_float("exponential_", t);
  BRASA_CHECK(lambd >= 0, "exponential_ expects lambda >= 0.0, but found lambda=", lambd);
  return fill_from_uniform(t, gen, [lambd](const Tensor& u) { return -log1p(-u) / lambd; });
}
Tensor& cauchy_(Tensor& t, double median, double sigma, Generator* gen) {
  check_float("cauchy_", t);
  return fill_from_uniform(t, gen,
                           [=](const Tensor& u) { return tan((u - 0.5) * M_PI) * sigma + median; });
}
Tensor& log_normal_(Tensor& t, double mean, double std, Generator* gen) {
  check_float("log_normal_", t);
  BRASA_CHECK(std > 0, "log_normal_ expects std > 0.0, but found std=", std);
  NoGradGuard no_grad;
  Tensor z = empty(t.sizes(), TensorOptions().dtype(kDouble).device(t.device()));
  normal_(z, mean, std, gen);
  return t.copy_(exp(z));
}
Tensor& geometric_(Tensor& t, double p, Generator* gen) {
  BRASA_CHECK(p > 0 && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  const double log_q = std::log1p(-p);
  return fill_from_uniform(t, gen, [log_q](const Tensor& u) {
    return ceil(log1p(-u) / log_q).clamp_min(1);  // 1 - u in (0, 1]
  });
}

Tensor rand(IntArrayRef size, const TensorOptions& o) { return rand(size, nullptr, o); }
Tensor rand(IntArrayRef size, Generator* gen, const TensorOptions& o) {
  Tensor t = empty(size, o.requires_grad(false));
  uniform_(t, 0, 1, gen);
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}
Tensor randn(IntArrayRef size, const TensorOptions& o) { return randn(size, nullptr, o); }
Tensor randn(IntArrayRef size, Generator* gen, const TensorOptions& o) {
  Tensor t = empty(size, o.requires_grad(false));
  normal_(t, 0, 1, gen);
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}
Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& o) {
  return randint(0, high, size, o);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& o) {
  Tensor t = empty(size, o.has_dtype() ? o : o.dtype(kLong));
  return random_(t, low, high);
}
Tensor randperm(int64_t n, const TensorOptions& o) { return randperm(n, nullptr, o); }
Tensor randperm(int64_t n, Generator* gen, const TensorOptions& o) {
  BRASA_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  Generator& g = pick(gen);
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(perm[i], perm[g.engine()() % static_cast<uint64_t>(i + 1)]);
  }
  Tensor t = empty({n}, (o.has_dtype() ? o : o.dtype(kLong)).device(Device(kCPU)));
  BRASA_DISPATCH_ALL_TYPES(t.dtype(), "randperm", [&] {
    scalar_t* p = t.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<scalar_t>(perm[i]);
  });
  return t.to(o.device());
}
Tensor rand_like(const Tensor& t, const TensorOptions& o) { return rand(t.sizes(), like(t, o)); }
Tensor randn_like(const Tensor& t, const TensorOptions& o) { return randn(t.sizes(), like(t, o)); }
Tensor randint_like(const Tensor& t, int64_t low, int64_t high) {
  return randint(low, high, t.sizes(), like(t, {}));
}

Tensor normal(double mean, double std, IntArrayRef size, Generator* gen, const TensorOptions& o) {
  Tensor t = empty(size, o);
  return normal_(t, mean, std, gen);
}

Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen) {
  Tensor z = empty(mean.sizes(), mean.options());
  normal_(z, 0, 1, gen);
  return z * std + mean;
}

Tensor bernoulli(const Tensor& p, Generator* gen) {
  check_float("bernoulli", p);
  if (!p.is_cpu() && has_kernel<RandomFillKernel>(p.device())) {
    BRASA_CHECK(all((p >= 0) & (p <= 1)).item<bool>(),
                "bernoulli: expected all probabilities in [0, 1], got ", amin(p).item<double>(),
                " to ", amax(p).item<double>());
    Tensor u = empty(p.sizes(), p.options().dtype(p.dtype() == kDouble ? kDouble : kFloat));
    uniform_(u, 0, 1, gen);
    return (u < p).to(p.dtype());
  }
  // Drawn on the host (see fill_from_words), then moved to p's device.
  Tensor pc = contiguous(p).to(Device(kCPU), kDouble);
  Tensor out = empty(p.sizes(), p.options().device(Device(kCPU)));
  Tensor u = empty(p.sizes(), TensorOptions().dtype(kDouble));
  uniform_(u, 0, 1, gen);
  const double* pp = pc.data_ptr<double>();
  const double* up = u.data_ptr<double>();
  BRASA_DISPATCH_FLOATING_TYPES(out.dtype(), "bernoulli", [&] {
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      BRASA_CHECK(pp[i] >= 0 && pp[i] <= 1, "bernoulli: expected all probabilities in [0, 1], got ",
                  pp[i]);
      o[i] = static_cast<scalar_t>(up[i] < pp[i] ? 1.0f : 0.0f);
    }
  });
  return out.to(p.device());
}
Tensor bernoulli(const Tensor& self, double p, Generator* gen) {
  Tensor t = empty(self.sizes(), self.options());
  return bernoulli_(t, p, gen);
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  BRASA_CHECK(probs.dim() == 1 || probs.dim() == 2,
              "multinomial: prob_dist must be 1 or 2 dim, got ", probs.dim());
  Tensor p2 = contiguous(probs.dim() == 1 ? probs.unsqueeze(0) : probs).to(Device(kCPU), kDouble);
  int64_t rows = p2.size(0), n = p2.size(1);
  BRASA_CHECK(replacement || num_samples <= n,
              "multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
              "without replacement (",
              num_samples, " > ", n, ")");
  Tensor out = empty({rows, num_samples}, TensorOptions().dtype(kLong));
  Generator& g = pick(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> w(p2.data_ptr<double>() + r * n, p2.data_ptr<double>() + (r + 1) * n);
    for (double v : w)
      BRASA_CHECK(v >= 0 && std::isfinite(v),
                  "multinomial: probability tensor contains either `inf`, `nan` or element < 0");
    for (int64_t s = 0; s < num_samples; ++s) {
      double total = std::accumulate(w.begin(), w.end(), 0.0);
      BRASA_CHECK(total > 0,
                  "multinomial: invalid multinomial distribution (sum of probabilities <= 0)");
      double u = g.next_double() * total, c = 0;
      int64_t pick_i = n - 1;
      for (int64_t i = 0; i < n; ++i) {
        c += w[i];
        if (u < c && w[i] > 0) {
          pick_i = i;
          break;
        }
      }
      out.data_ptr<int64_t>()[r * num_samples + s] = pick_i;
      if (!replacement) w[pick_i] = 0;
    }
  }
  out = out.to(probs.device());
  return probs.dim() == 1 ? out.squeeze(0) : out;
}

Tensor binomial(const Tensor& count, const Tensor& prob, Generator* gen) {
  BRASA_CHECK(
      count.defined() && prob.defined() && count.is_floating_point() && prob.is_floating_point(),
      "binomial: expected floating count and prob tensors");
  auto both = broadcast_tensors({count.detach(), prob.detach().to(count.device())});
  Tensor n = both[0].to(Device(kCPU), kDouble).contiguous(),
         p = both[1].to(Device(kCPU), kDouble).contiguous();
  Tensor out = empty(n.sizes(), TensorOptions().dtype(kDouble));
  Generator& g = pick(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  for (int64_t i = 0; i < n.numel(); ++i) {
    const double c = n.data_ptr<double>()[i], q = p.data_ptr<double>()[i];
    BRASA_CHECK(c >= 0 && c == std::floor(c) && q >= 0 && q <= 1,
                "binomial: expected integral counts >= 0 and probabilities in [0, 1], got count ",
                c, " and prob ", q);
    std::binomial_distribution<int64_t> draw(static_cast<int64_t>(c), q);
    out.data_ptr<double>()[i] = static_cast<double>(draw(g.engine()));
  }
  return out.to(count.scalar_type()).to(count.device());
}

Tensor poisson(const Tensor& self, Generator* gen) {
  BRASA_CHECK(self.defined() && self.is_floating_point(),
              "poisson: expected a floating tensor of rates");
  Tensor rate = self.detach().to(Device(kCPU), kDouble).contiguous();
  Tensor out = empty(rate.sizes(), TensorOptions().dtype(kDouble));
  Generator& g = pick(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  for (int64_t i = 0; i < rate.numel(); ++i) {
    const double r = rate.data_ptr<double>()[i];
    BRASA_CHECK(r >= 0 && std::isfinite(r), "poisson: expected finite rates >= 0, got ", r);
    std::poisson_distribution<int64_t> draw(r);
    out.data_ptr<double>()[i] = r == 0 ? 0.0 : static_cast<double>(draw(g.engine()));
  }
  return out.to(self.scalar_type()).to(self.device());
}

}  // namespace brasa
