#pragma once
// Counting, bucketing and order statistics (libtorch's bincount, histc,
// bucketize, searchsorted, median, mode). Counts and positions have no
// gradient; median and mode gather their values, so gradients flow to the
// chosen elements.
#include <brasa/tensor/tensor.h>

#include <optional>
#include <string>
#include <tuple>

namespace brasa {

// Occurrences of each value 0..max of a 1-D non-negative integer tensor
// (summing `weights` instead of counting when given); at least minlength long.
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights = {},
                int64_t minlength = 0);
// Histogram of `bins` equal bins over [min, max] (the data's range when both are 0);
// elements outside are ignored, max falls in the last bin.
Tensor histc(const Tensor& self, int64_t bins = 100, double min = 0, double max = 0);
// For each element, the index of the bucket of the sorted 1-D `boundaries` it falls
// in: i with boundaries[i-1] < x <= boundaries[i] (right: boundaries[i-1] <= x < boundaries[i]).
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);
// Where each value would be inserted into the innermost dim of sorted_sequence to
// keep it sorted (side "left" or "right"; `right` is the older spelling of side).
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32 = false,
                    bool right = false, const std::optional<std::string>& side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32 = false,
                    bool right = false, const std::optional<std::string>& side = std::nullopt,
                    const std::optional<Tensor>& sorter = std::nullopt);
// The lower median of all elements (NaN when there is one).
Tensor median(const Tensor& self);
// The lower median along dim and its index.
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim = false);
// median over the values that are not NaN (NaN where all are).
Tensor nanmedian(const Tensor& self);
std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim = false);
// The running maximum (minimum) along dim and where it was last reached;
// a NaN, once met, is the running value.
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim);
// log(cumsum(exp(self), dim)), computed without overflow (a running logaddexp).
Tensor logcumsumexp(const Tensor& self, int64_t dim);
// The most frequent value along dim (the smallest among ties) and an index of it.
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim = -1, bool keepdim = false);

}  // namespace brasa
