#include <brasa/autograd/record.h>
#include <brasa/nn/ctc_loss.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/reduction.h>

#include <cmath>
#include <limits>
#include <vector>

namespace brasa {

namespace {

using autograd::FormulaNode;
using autograd::variable_list;

const autograd::BackwardName kCtcLossBackward("CtcLossBackward0");
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double hi = std::max(a, b);
  return hi + std::log1p(std::exp(std::min(a, b) - hi));
}

// One sample: its frames' log-probabilities lp[t * classes + c] (t < frames)
// and its target labels.
struct Sample {
  const double* lp;
  int64_t frames, classes;
  std::vector<int64_t> labels;
};

// The label at position s of the targets interleaved with blanks.
int64_t extended(const Sample& x, int64_t s, int64_t blank) {
  return s % 2 == 0 ? blank : x.labels[s / 2];
}

// Whether s may be reached from s - 2 (skipping a blank between two different labels).
bool can_skip(const Sample& x, int64_t s, int64_t blank) {
  return s >= 2 && extended(x, s, blank) != blank &&
         extended(x, s, blank) != extended(x, s - 2, blank);
}

// alpha[t][s]: log-probability of the prefixes ending at position s at frame t.
std::vector<double> forward_variables(const Sample& x, int64_t blank) {
  const int64_t states = 2 * static_cast<int64_t>(x.labels.size()) + 1;
  std::vector<double> alpha(x.frames * states, kNegInf);
  if (x.frames == 0) return alpha;
  alpha[0] = x.lp[blank];
  if (states > 1) alpha[1] = x.lp[extended(x, 1, blank)];
  for (int64_t t = 1; t < x.frames; ++t)
    for (int64_t s = 0; s < states; ++s) {
      const double* prev = &alpha[(t - 1) * states];
      double v = prev[s];
      if (s >= 1) v = log_add(v, prev[s - 1]);
      if (can_skip(x, s, blank)) v = log_add(v, prev[s - 2]);
      alpha[t * states + s] =
          v == kNegInf ? kNegInf : v + x.lp[t * x.classes + extended(x, s, blank)];
    }
  return alpha;
}

// beta[t][s]: log-probability of the suffixes from position s at frame t
// (frame t's emission included, as in alpha).
std::vector<double> backward_variables(const Sample& x, int64_t blank) {
  const int64_t states = 2 * static_cast<int64_t>(x.labels.size()) + 1;
  std::vector<double> beta(x.frames * states, kNegInf);
  if (x.frames == 0) return beta;
  const int64_t last = x.frames - 1;
  beta[last * states + states - 1] = x.lp[last * x.classes + blank];
  if (states > 1)
    beta[last * states + states - 2] = x.lp[last * x.classes + extended(x, states - 2, blank)];
  for (int64_t t = last - 1; t >= 0; --t)
    for (int64_t s = 0; s < states; ++s) {
      const double* next = &beta[(t + 1) * states];
      double v = next[s];
      if (s + 1 < states) v = log_add(v, next[s + 1]);
      if (s + 2 < states && can_skip(x, s + 2, blank)) v = log_add(v, next[s + 2]);
      beta[t * states + s] =
          v == kNegInf ? kNegInf : v + x.lp[t * x.classes + extended(x, s, blank)];
    }
  return beta;
}

double negative_log_likelihood(const Sample& x, const std::vector<double>& alpha) {
  const int64_t states = 2 * static_cast<int64_t>(x.labels.size()) + 1;
  if (x.frames == 0) return x.labels.empty() ? 0.0 : std::numeric_limits<double>::infinity();
  const double* end = &alpha[(x.frames - 1) * states];
  double l = end[states - 1];
  if (states > 1) l = log_add(l, end[states - 2]);
  return -l;
}

// The samples of a batch of `frames` x `batch` x `classes`, checked (their
// lp pointers are set by the caller).
std::vector<Sample> samples_of(int64_t frames, int64_t batch, int64_t classes,
                               const Tensor& targets, const std::vector<int64_t>& input_lengths,
                               const std::vector<int64_t>& target_lengths, int64_t blank) {
  const char* op = "ctc_loss";
  BRASA_CHECK(blank >= 0 && blank < classes, op, ": blank must be in label range, got blank ",
              blank, " for ", classes, " classes");
  BRASA_CHECK(static_cast<int64_t>(input_lengths.size()) == batch, op,
              ": input_lengths must be of size batch_size (", batch, "), got ",
              input_lengths.size());
  BRASA_CHECK(static_cast<int64_t>(target_lengths.size()) == batch, op,
              ": target_lengths must be of size batch_size (", batch, "), got ",
              target_lengths.size());
  Tensor t = targets.to(kCPU).to(kLong).contiguous();
  const int64_t* pt = t.data_ptr<int64_t>();
  const bool concatenated = t.dim() == 1;
  int64_t offset = 0;
  std::vector<Sample> out;
  for (int64_t n = 0; n < batch; ++n) {
    const int64_t length = input_lengths[n], labels = target_lengths[n];
    BRASA_CHECK(length >= 0 && length <= frames, op,
                ": Expected input_lengths to have value at most ", frames, ", but got value ",
                length, " (while checking arguments for ctc_loss_cpu)");
    BRASA_CHECK(labels >= 0, op, ": target_lengths must be non-negative, got ", labels);
    Sample x{nullptr, length, classes, {}};
    for (int64_t i = 0; i < labels; ++i) {
      int64_t label;
      if (concatenated) {
        BRASA_CHECK(offset + i < t.numel(), op, ": the concatenated targets hold ", t.numel(),
                    " labels, fewer than the target_lengths add up to");
        label = pt[offset + i];
      } else {
        BRASA_CHECK(labels <= t.size(1), op, ": Expected tensor to have size at least ", labels,
                    " at dimension 1, but got size ", t.size(1),
                    " for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
        label = pt[n * t.size(1) + i];
      }
      BRASA_CHECK(label >= 0 && label < classes && label != blank, op, ": target label ", label,
                  " of sample ", n, " is out of range or the blank (", classes, " classes, blank ",
                  blank, ")");
      x.labels.push_back(label);
    }
    offset += labels;
    out.push_back(std::move(x));
  }
  return out;
}

// Per-sample losses [N] (zero_infinity applied) with PyTorch's gradient.
Tensor ctc_losses(const Tensor& log_probs, const Tensor& targets,
                  const std::vector<int64_t>& input_lengths,
                  const std::vector<int64_t>& target_lengths, int64_t blank, bool zero_infinity) {
  BRASA_CHECK(log_probs.is_floating_point(), "ctc_loss: expected floating-point log_probs, got ",
              log_probs.scalar_type());
  autograd::Recorder r(kCtcLossBackward, log_probs);
  // Per sample, its frames laid out contiguously: [N, T, C].
  Tensor lp = log_probs.detach().to(kCPU).to(kDouble).transpose(0, 1).contiguous();
  const int64_t batch = lp.size(0), frames = lp.size(1), classes = lp.size(2);
  std::vector<Sample> xs =
      samples_of(frames, batch, classes, targets, input_lengths, target_lengths, blank);
  Tensor losses = empty({batch}, TensorOptions().dtype(kDouble));
  for (int64_t n = 0; n < batch; ++n) {
    xs[n].lp = lp.data_ptr<double>() + n * frames * classes;
    double nll = negative_log_likelihood(xs[n], forward_variables(xs[n], blank));
    if (zero_infinity && std::isinf(nll)) nll = 0;
    losses.data_ptr<double>()[n] = nll;
  }
  Tensor out = losses.to(log_probs.scalar_type()).to(log_probs.device());
  if (r)
    r.save(log_probs).finish(out, [targets, input_lengths, target_lengths, blank, zero_infinity](
                                      FormulaNode& node, const variable_list& g) {
      Tensor saved = node.saved(0);
      Tensor lp = saved.detach().to(kCPU).to(kDouble).transpose(0, 1).contiguous();
      const int64_t batch = lp.size(0), frames = lp.size(1), classes = lp.size(2);
      std::vector<Sample> xs =
          samples_of(frames, batch, classes, targets, input_lengths, target_lengths, blank);
      Tensor grad = zeros({batch, frames, classes}, TensorOptions().dtype(kDouble));
      Tensor scale = g[0].detach().to(kCPU).to(kDouble).contiguous();
      for (int64_t n = 0; n < batch; ++n) {
        Sample& x = xs[n];
        x.lp = lp.data_ptr<double>() + n * frames * classes;
        std::vector<double> alpha = forward_variables(x, blank);
        std::vector<double> beta = backward_variables(x, blank);
        const double nll = negative_log_likelihood(x, alpha);
        if (std::isinf(nll) && zero_infinity) continue;
        const int64_t states = 2 * static_cast<int64_t>(x.labels.size()) + 1;
        double* pg = grad.data_ptr<double>() + n * frames * classes;
        const double s = scale.data_ptr<double>()[n];
        for (int64_t t = 0; t < x.frames; ++t) {
          std::vector<double> occupied(classes, kNegInf);
          for (int64_t st = 0; st < states; ++st) {
            double& o = occupied[extended(x, st, blank)];
            o = log_add(o, alpha[t * states + st] + beta[t * states + st]);
          }
          for (int64_t c = 0; c < classes; ++c) {
            const double l = x.lp[t * classes + c];
            pg[t * classes + c] = s * (std::exp(l) - std::exp(occupied[c] + nll - l));
          }
        }
      }
      return variable_list{
          grad.transpose(0, 1).to(saved.scalar_type()).to(saved.device()).contiguous()};
    });
  return out;
}

std::vector<int64_t> lengths_of(const Tensor& t, const char* what) {
  BRASA_CHECK(t.defined() && t.dim() <= 1, "ctc_loss: expected ", what,
              " as a 1-D tensor of integers, got ", t.defined() ? t.sizes() : IntArrayRef{});
  Tensor l = t.to(kCPU).to(kLong).contiguous().reshape({-1});
  return std::vector<int64_t>(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel());
}

Tensor reduce_ctc(const Tensor& losses, const std::vector<int64_t>& target_lengths,
                  Reduction reduction) {
  if (reduction == Reduction::None) return losses;
  if (reduction == Reduction::Sum) return losses.sum();
  std::vector<double> divisors;
  for (int64_t l : target_lengths) divisors.push_back(static_cast<double>(std::max<int64_t>(l, 1)));
  Tensor d = tensor(divisors, TensorOptions().dtype(losses.scalar_type()).device(losses.device()));
  return (losses / d).mean();
}

Tensor ctc(const Tensor& log_probs, const Tensor& targets, std::vector<int64_t> input_lengths,
           std::vector<int64_t> target_lengths, int64_t blank, Reduction reduction,
           bool zero_infinity) {
  BRASA_CHECK(log_probs.defined() && targets.defined(),
              "ctc_loss: expected defined log_probs and targets");
  BRASA_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2,
              "ctc_loss: expected log_probs [T, N, C] or [T, C], got ", log_probs.sizes());
  if (log_probs.dim() == 2) {
    // One unbatched sample: targets [S].
    Tensor losses = ctc_losses(log_probs.unsqueeze(1), targets.reshape({1, -1}), input_lengths,
                               target_lengths, blank, zero_infinity);
    Tensor out = reduce_ctc(losses, target_lengths, reduction);
    return reduction == Reduction::None ? out.squeeze(0) : out;
  }
  Tensor losses =
      ctc_losses(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
  return reduce_ctc(losses, target_lengths, reduction);
}

Reduction reduction_of(int64_t r) {
  BRASA_CHECK(r >= 0 && r <= 2, "ctc_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got ",
              r);
  return r == 0 ? Reduction::None : r == 1 ? Reduction::Mean : Reduction::Sum;
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  return ctc(log_probs, targets, input_lengths.vec(), target_lengths.vec(), blank,
             reduction_of(reduction), zero_infinity);
}
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, int64_t reduction,
                bool zero_infinity) {
  return ctc(log_probs, targets, lengths_of(input_lengths, "input_lengths"),
             lengths_of(target_lengths, "target_lengths"), blank, reduction_of(reduction),
             zero_infinity);
}

namespace nn {
namespace functional {
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options) {
  return ctc(log_probs, targets, lengths_of(input_lengths, "input_lengths"),
             lengths_of(target_lengths, "target_lengths"), options.blank_, options.reduction_,
             options.zero_infinity_);
}
}  // namespace functional

Tensor CTCLossImpl::forward(const Tensor& log_probs, const Tensor& targets,
                            const Tensor& input_lengths, const Tensor& target_lengths) {
  return functional::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
}
}  // namespace nn

}  // namespace brasa
