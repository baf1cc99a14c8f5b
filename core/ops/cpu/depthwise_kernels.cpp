// The weight gradient of a depthwise conv2d on float32 NCHW data, for the
// kernel sizes where oneDNN 2.x has only its GEMM-based weight gradient
// (its JIT depthwise one takes 3x3 only): 9.6 ms for a 7x7 on
// [16, 64, 16, 16], 40 times the forward (Zen 5, 1 thread).
//
// grad_w[c, i, j] = sum over n, oh, ow of grad_out[n, c, oh, ow] *
// x[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw].
//
// Per channel, every sample's input plane is copied zero-padded and split by
// stride phase, and every sample's grad_out plane laid at the same row pitch
// with zeros past its OW columns (ChannelPlanes). Then the values tap (i, j)
// meets for outputs (oh, ow) sit at one offset from grad_out's, and each
// tap's sum is a dot product over contiguous runs. Four taps go at once,
// each into 16 lane sums held in vector registers across all samples (a dot
// per output row, or per sample, spent more in loop overhead than in the
// sums on 8x8 outputs). The lanes are summed at the end in a fixed order:
// the result does not depend on the thread count (threads take channels).
#include <brasa/ops/cpu/variant.h>
#include <brasa/ops/cpu/register.h>

namespace brasa::cpu {
inline namespace BRASA_CPU_VARIANT {
namespace {

using detail::ConvGeometry;

constexpr int64_t kLanes = 16;  // partial sums per tap: a vector's worth

// One channel's planes over all samples. Sample n's input: the padded plane
// [H + 2ph, W + 2pw] as stride phases (a, b) holding padded[r*sh + a][q*sw + b]
// at row r, column q, each phase `rows` x `pitch`, at input(n). Sample n's
// grad_out: [OH, pitch] at grad(n), zero past column OW and past row OH up to
// a multiple of kLanes values. Tap (i, j) meets grad(n)[k] at
// input(n)[offset(i, j) + k]; where grad is a zero, the value met is another
// column's, another phase's or zero slack, and adds nothing (an inf or NaN
// input can spread to the other taps of its sample, as a NaN gradient).
class ChannelPlanes {
 public:
  explicit ChannelPlanes(const ConvGeometry& g)
      : g_(g),
        rows_((g.H + 2 * g.ph + g.sh - 1) / g.sh),
        pitch_((g.W + 2 * g.pw + g.sw - 1) / g.sw),
        grad_length_((g.OH * pitch_ + kLanes - 1) / kLanes * kLanes),
        // (a tap's run starts at most a row plus a column past its phase's
        // rows, and spans grad_length values)
        input_stride_(g.sh * g.sw * rows_ * pitch_ + pitch_ + grad_length_),
        input_(static_cast<size_t>(g.N * input_stride_), 0.0f),
        grad_(static_cast<size_t>(g.N * grad_length_), 0.0f) {}

  int64_t grad_length() const { return grad_length_; }
  const float* grad(int64_t n) const { return grad_.data() + n * grad_length_; }
  const float* input(int64_t n) const { return input_.data() + n * input_stride_; }
  int64_t offset(int64_t i, int64_t j) const {
    const int64_t a = i * g_.dh % g_.sh, b = j * g_.dw % g_.sw;
    return ((a * g_.sw + b) * rows_ + i * g_.dh / g_.sh) * pitch_ + j * g_.dw / g_.sw;
  }

  // Channel c's planes of every sample from x and grad_out (NCHW).
  void fill(const float* x, const float* grad_out, int64_t c) {
    const ConvGeometry& g = g_;
    for (int64_t n = 0; n < g.N; ++n) {
      fill_input(x + (n * g.C + c) * g.H * g.W, input_.data() + n * input_stride_);
      const float* dy = grad_out + (n * g.C + c) * g.OH * g.OW;
      float* to = grad_.data() + n * grad_length_;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        std::copy(dy + oh * g.OW, dy + (oh + 1) * g.OW, to + oh * pitch_);
    }
  }

 private:
  // The padding stays zero from construction.
  void fill_input(const float* x, float* phases) const {
    const ConvGeometry& g = g_;
    for (int64_t a = 0; a < g.sh; ++a) {
      for (int64_t r = 0; r < rows_; ++r) {
        const int64_t y = r * g.sh + a - g.ph;
        if (y < 0 || y >= g.H) continue;
        const float* src = x + y * g.W;
        for (int64_t b = 0; b < g.sw; ++b) {
          // Columns q with 0 <= q*sw + b - pw < W.
          const int64_t shift = b - g.pw;
          if (shift > g.W - 1) continue;  // (a stride wider than the padded row)
          const int64_t q0 = shift >= 0 ? 0 : (-shift + g.sw - 1) / g.sw;
          const int64_t q1 = std::min(pitch_, (g.W - 1 - shift) / g.sw + 1);
          float* dst = phases + ((a * g.sw + b) * rows_ + r) * pitch_;
          if (g.sw == 1)
            std::copy(src + q0 + shift, src + q1 + shift, dst + q0);
          else if (g.sw == 2)  // (a constant stride the compiler vectorizes)
            for (int64_t q = q0; q < q1; ++q) dst[q] = src[2 * q + shift];
          else
            for (int64_t q = q0; q < q1; ++q) dst[q] = src[q * g.sw + shift];
        }
      }
    }
  }

  const ConvGeometry& g_;
  int64_t rows_, pitch_, grad_length_, input_stride_;
  std::vector<float> input_, grad_;
};

// lanes[t][l] += the sum over samples n and k = l (mod kLanes) of
// grad(n)[k] * input(n)[offsets[t] + k], for up to four taps t at once: dot
// products the compiler vectorizes without reordering any float sum, whose
// independent sums hide the latency of each add. A tap past `taps` repeats
// tap 0 and is not stored.
void four_taps_into_lanes(const ChannelPlanes& planes, int64_t samples, const int64_t* offsets,
                          int taps, float* lanes) {
  const int64_t o0 = offsets[0], o1 = offsets[taps > 1 ? 1 : 0], o2 = offsets[taps > 2 ? 2 : 0],
                o3 = offsets[taps > 3 ? 3 : 0];
  const int64_t length = planes.grad_length();
  float s0[kLanes] = {}, s1[kLanes] = {}, s2[kLanes] = {}, s3[kLanes] = {};
  for (int64_t n = 0; n < samples; ++n) {
    const float* __restrict d = planes.grad(n);
    const float* __restrict in = planes.input(n);
    for (int64_t k = 0; k < length; k += kLanes) {
      for (int64_t l = 0; l < kLanes; ++l) {
        const float v = d[k + l];
        s0[l] += v * in[o0 + k + l];
        s1[l] += v * in[o1 + k + l];
        s2[l] += v * in[o2 + k + l];
        s3[l] += v * in[o3 + k + l];
      }
    }
  }
  for (int64_t l = 0; l < kLanes; ++l) {
    lanes[l] = s0[l];
    if (taps > 1) lanes[kLanes + l] = s1[l];
    if (taps > 2) lanes[2 * kLanes + l] = s2[l];
    if (taps > 3) lanes[3 * kLanes + l] = s3[l];
  }
}

void depthwise_weight_grad(const float* grad_out, const float* x, float* grad_w,
                           const ConvGeometry& g) {
  const int64_t taps = g.kh * g.kw;
  const int64_t grain =
      std::max<int64_t>(1, 65536 / std::max<int64_t>(1, g.N * g.OH * g.OW * taps));
  parallel_for(0, g.C, grain, [&](int64_t c0, int64_t c1) {
    ChannelPlanes planes(g);
    std::vector<int64_t> offsets;  // tap (i, j)'s at i * kw + j
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) offsets.push_back(planes.offset(i, j));
    std::vector<float> lanes(static_cast<size_t>(taps * kLanes));
    for (int64_t c = c0; c < c1; ++c) {
      planes.fill(x, grad_out, c);
      for (int64_t t = 0; t < taps; t += 4)
        four_taps_into_lanes(planes, g.N, offsets.data() + t,
                             static_cast<int>(std::min<int64_t>(4, taps - t)),
                             lanes.data() + t * kLanes);
      for (int64_t t = 0; t < taps; ++t) {
        float total = 0;
        for (int64_t l = 0; l < kLanes; ++l) total += lanes[static_cast<size_t>(t * kLanes + l)];
        grad_w[c * taps + t] = total;
      }
    }
  });
}

}  // namespace

void register_depthwise_kernels() {
  register_kernel<DepthwiseWeightGradKernel>(kCPU, depthwise_weight_grad);
}

}  // namespace BRASA_CPU_VARIANT
}  // namespace brasa::cpu
