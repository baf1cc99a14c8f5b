#pragma once
// The oneDNN primitives of one 2-D convolution geometry (made on first use
// and kept), the moves of our NCHW/OIHW data into the layouts they prefer
// and back, and the per-thread buffers and stream they run with. Used by
// ops/cpu/conv_onednn.cpp (which splits the work and runs them); empty in
// builds without oneDNN.
#ifdef BRASA_WITH_ONEDNN
#include <brasa/ops/kernels/conv.h>
#include <brasa/util/error.h>

#include <cstdint>
#include <cstdlib>
#include <dnnl.hpp>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

namespace brasa::detail {

// The batch slice size of the first of one slice per thread of our pool
// (the batch split of the forward and the gradients).
int64_t first_slice_size(int64_t N);

namespace onednn_conv {

using dnnl::memory;

const dnnl::engine& cpu_engine();
// This thread's stream (oneDNN held to one OpenMP thread on it).
dnnl::stream& thread_stream();

// A move between our plain layout and the one a primitive prefers; none
// when they are the same. Moves between NCHW and NHWC (channels last, the
// layout of oneDNN's brgconv kernels) or channel blocks (nChw16c, nChw8c:
// NHWC within each block of channels) go through Brasa's blocked transposes
// (ops/cpu/copy_kernels.cpp) rather than a oneDNN reorder: 0.10-0.19 ms
// against 0.5-0.6 ms for [16, 64, 32, 32] to NHWC (Zen 5, 1 thread), six
// moves per convolution and training step.
struct Relayout {
  enum class Transpose { kNone, kToNhwc, kToNchw };
  memory::desc from, to;
  std::optional<dnnl::reorder> reorder;
  Transpose transpose = Transpose::kNone;
  int64_t block = 0;  // channels per transposed block (C for NHWC)
  Relayout() = default;
  Relayout(const memory::desc& f, const memory::desc& t) : from(f), to(t) {
    if (f == t) return;
    const memory::dims dims = f.dims();
    if (dims.size() == 4 && f.data_type() == memory::data_type::f32) {
      const auto f32 = memory::data_type::f32;
      const memory::desc nchw(dims, f32, memory::format_tag::nchw);
      const std::pair<int64_t, memory::desc> blocked[] = {
          {dims[1], memory::desc(dims, f32, memory::format_tag::nhwc)},
          {16, memory::desc(dims, f32, memory::format_tag::nChw16c)},
          {8, memory::desc(dims, f32, memory::format_tag::nChw8c)}};
      for (const auto& [channels, layout] : blocked) {
        if (channels == 0 || dims[1] % channels != 0) continue;  // (a partial block is padded)
        if (f == nchw && t == layout) transpose = Transpose::kToNhwc;
        if (f == layout && t == nchw) transpose = Transpose::kToNchw;
        if (transpose != Transpose::kNone) {
          block = channels;
          break;
        }
      }
    }
    if (transpose == Transpose::kNone)
      reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), f, cpu_engine(), t));
  }
  bool moves() const { return reorder || transpose != Transpose::kNone; }
};

// dst (r.to's layout) <- src (r.from's) for an NCHW <-> NHWC or channel-block
// move: each block of channels is an NCHW <-> NHWC transpose of its own.
void transpose_move(const Relayout& r, const float* src, float* dst);

// The forward on our plain layouts.
struct Prepared {
  memory::desc src, weights, bias, dst, scratchpad;  // the caller provides the scratchpad
  dnnl::convolution_forward primitive;
  bool reference = false;  // oneDNN's reference loops, not a JIT kernel
};

// The gradients' primitives on the layouts oneDNN prefers for them
// (format_tag::any: blocked ones on AVX-512 and AVX2, where its JIT kernels
// run), with the moves of our NCHW/OIHW tensors in and out. The bias
// gradient is a sum the caller does.
struct PreparedBackward {
  dnnl::convolution_backward_data data;
  dnnl::convolution_backward_weights weights_grad;
  memory::desc data_scratchpad, weights_scratchpad;
  Relayout dy_for_data, w_for_data, dx_out;        // backward data
  Relayout x_for_weights, dy_for_weights, dw_out;  // backward weights
  bool weights_by_gemm = false;                    // oneDNN's weight gradient is its GEMM-based one
  bool reference = false;                          // either gradient is oneDNN's reference loops
};

// The forward on oneDNN's preferred layouts, for the shapes where its JIT
// kernels beat the plain-layout forward (the caller's rule).
struct PreparedBlockedForward {
  dnnl::convolution_forward primitive;
  bool reference = false;
  bool by_gemm = false;  // oneDNN's GEMM-based kernel (im2col inside), not a direct one
  memory::desc bias, scratchpad;
  Relayout x_in, w_in, y_out;
};

// The primitives of a geometry for a batch slice of `n` samples, made on
// first use and kept (an error naming the shapes where oneDNN has none).
const Prepared& prepared(const ConvGeometry& g, int64_t n, bool bias);
const PreparedBackward& prepared_backward(const ConvGeometry& g, int64_t n, bool winograd,
                                          bool x_nhwc);
const PreparedBlockedForward& prepared_blocked_forward(const ConvGeometry& g, int64_t n, bool bias,
                                                       bool winograd, bool x_nhwc);

// Whether the layer takes oneDNN's Winograd kernels (see the rule in
// conv_onednn_primitives.cpp).
bool use_winograd(const ConvGeometry& g);

// A buffer kept by a thread between calls, grown when asked for more, and
// aligned to 64 bytes: oneDNN's Winograd kernels store with aligned
// non-temporal moves, which fault on std::vector's 16-byte alignment.
class AlignedBuffer {
 public:
  char* reserve(size_t bytes) {
    if (bytes > size_) {
      data_.reset();
      data_.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      BRASA_CHECK(data_ != nullptr, "conv2d: out of memory for a ", bytes, "-byte oneDNN buffer");
      size_ = bytes;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

// Runs `primitive` with `args` and a scratchpad of `desc`'s size on this
// thread's stream. (The scratchpad is this thread's, reused: allocating
// and zeroing a fresh one, 6-9 MB for the Winograd kernels, cost more than
// a tenth of their time.)
void execute(const dnnl::primitive& primitive, std::unordered_map<int, memory>& args,
             const memory::desc& scratchpad);

}  // namespace onednn_conv
}  // namespace brasa::detail
#endif  // BRASA_WITH_ONEDNN
