#include <brasa/nn/image_modules.h>
#include <brasa/ops/shape.h>

namespace brasa::nn {

Tensor functional::pixel_shuffle(const Tensor& x, const PixelShuffleFuncOptions& o) {
  const int64_t r = o.upscale_factor_;
  BRASA_CHECK(x.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got ",
              "input with ", x.dim(), " dimension(s)");
  BRASA_CHECK(r > 0, "pixel_shuffle expects a positive upscale_factor, but got ", r);
  const int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  BRASA_CHECK(c % (r * r) == 0, "pixel_shuffle expects its input's 'channel' dimension to be ",
              "divisible by the square of upscale_factor, but input.size(-3)=", c,
              " is not divisible by ", r * r);
  std::vector<int64_t> lead(x.sizes().begin(), x.sizes().end() - 3);
  const int64_t nl = static_cast<int64_t>(lead.size());
  std::vector<int64_t> split = lead;
  split.insert(split.end(), {c / (r * r), r, r, h, w});
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nl; ++i) perm.push_back(i);
  perm.insert(perm.end(), {nl, nl + 3, nl + 1, nl + 4, nl + 2});  // C, H, r, W, r
  std::vector<int64_t> out = lead;
  out.insert(out.end(), {c / (r * r), h * r, w * r});
  return x.reshape(split).permute(perm).reshape(out);
}

Tensor functional::pixel_unshuffle(const Tensor& x, const PixelUnshuffleFuncOptions& o) {
  const int64_t r = o.downscale_factor_;
  BRASA_CHECK(x.dim() >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but ",
              "got input with ", x.dim(), " dimension(s)");
  BRASA_CHECK(r > 0, "pixel_unshuffle expects a positive downscale_factor, but got ", r);
  const int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  BRASA_CHECK(h % r == 0 && w % r == 0, "pixel_unshuffle expects height and width to be ",
              "divisible by downscale_factor, but got ", h, " x ", w, " and ", r);
  std::vector<int64_t> lead(x.sizes().begin(), x.sizes().end() - 3);
  const int64_t nl = static_cast<int64_t>(lead.size());
  std::vector<int64_t> split = lead;
  split.insert(split.end(), {c, h / r, r, w / r, r});
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nl; ++i) perm.push_back(i);
  perm.insert(perm.end(), {nl, nl + 2, nl + 4, nl + 1, nl + 3});  // C, r, r, H, W
  std::vector<int64_t> out = lead;
  out.insert(out.end(), {c * r * r, h / r, w / r});
  return x.reshape(split).permute(perm).reshape(out);
}

Tensor UpsampleImpl::forward(const Tensor& x) {
  functional::InterpolateFuncOptions o;
  o.size(options.size_)
      .scale_factor(options.scale_factor_)
      .mode(options.mode_)
      .align_corners(options.align_corners_);
  return functional::interpolate(x, o);
}

}  // namespace brasa::nn
