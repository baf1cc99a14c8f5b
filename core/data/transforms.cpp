#include <brasa/data/transforms.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <brasa/tensor/indexing.h>

namespace brasa::data::transforms {

Example<> detail::per_example(Example<> batch, const std::function<Example<>(Example<>)>& fn) {
  BRASA_CHECK(batch.data.defined() && batch.data.dim() >= 1,
              "transforms::Lambda: expected a batch with examples along dim 0");
  std::vector<Example<>> out;
  out.reserve(static_cast<size_t>(batch.data.size(0)));
  for (int64_t i = 0; i < batch.data.size(0); ++i)
    out.push_back(fn({batch.data[i], batch.target.defined() ? batch.target[i] : Tensor()}));
  return data::detail::stack_examples(out);
}

Example<> normalize(Example<> e, const std::vector<double>& mean,
                    const std::vector<double>& stddev) {
  BRASA_CHECK(mean.size() == stddev.size(), "Normalize: ", mean.size(), " means but ",
              stddev.size(), " stddevs");
  if (mean.size() == 1) return {(e.data - mean[0]) / stddev[0], std::move(e.target)};
  BRASA_CHECK(e.data.dim() >= 2 && e.data.size(1) == static_cast<int64_t>(mean.size()),
              "Normalize: ", mean.size(), " per-channel values for a batch of shape ",
              e.data.sizes());
  DimVector shape(e.data.dim(), 1);
  shape[1] = static_cast<int64_t>(mean.size());
  Tensor m = tensor(mean, e.data.options()).view(shape),
         s = tensor(stddev, e.data.options()).view(shape);
  return {(e.data - m) / s, std::move(e.target)};
}

Example<> RandomHorizontalFlip::operator()(Example<> e) const {
  BRASA_CHECK(e.data.dim() == 4, "RandomHorizontalFlip: expected a batch [N, C, H, W], got shape ",
              e.data.sizes());
  Tensor coin = rand({e.data.size(0)}) < p_;
  Tensor flipped = e.data.flip({3});
  return {where(coin.view({-1, 1, 1, 1}), flipped, e.data), std::move(e.target)};
}

Example<> RandomCrop::operator()(Example<> e) const {
  BRASA_CHECK(e.data.dim() == 4, "RandomCrop: expected a batch [N, C, H, W], got shape ",
              e.data.sizes());
  const int64_t N = e.data.size(0), H = e.data.size(2) + 2 * padding_,
                W = e.data.size(3) + 2 * padding_;
  BRASA_CHECK(size_ <= H && size_ <= W, "RandomCrop: crop ", size_,
              " is larger than the padded image ", H, "x", W);
  Tensor padded = zeros({N, e.data.size(1), H, W}, e.data.options());
  using namespace indexing;
  padded.index_put_({Slice(), Slice(), Slice(padding_, padding_ + e.data.size(2)),
                     Slice(padding_, padding_ + e.data.size(3))},
                    e.data);
  Tensor top = randint(0, H - size_ + 1, {N}), left = randint(0, W - size_ + 1, {N});
  std::vector<Tensor> crops;
  for (int64_t n = 0; n < N; ++n)
    crops.push_back(padded[n]
                        .narrow(1, top[n].item<int64_t>(), size_)
                        .narrow(2, left[n].item<int64_t>(), size_));
  return {stack(crops, 0), std::move(e.target)};
}

}  // namespace brasa::data::transforms
