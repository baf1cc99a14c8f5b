#pragma once
// Op codes of a device's fused embedding bags (optional: a device without
// them runs nn::functional::embedding_bag's composite of index_select and
// index_add). Every bag is reduced straight from the table, without the
// [ids, width] matrix of looked-up rows that the composite builds.
//
// weight: [rows, width], contiguous, float or double. ids: [T] int64,
// contiguous, each in [0, rows). starts: [B] int64, contiguous, bag b
// holding ids[starts[b], starts[b + 1]) (the last bag runs to T).
// per_sample_weights: [T] in weight's dtype, or undefined. Ids equal to
// padding_idx (-1: none) are left out of their bag, and of its count.
#include <brasa/tensor/tensor.h>

#include <cstdint>
#include <tuple>

namespace brasa {

enum class EmbeddingBagReduction : int64_t { Sum = 0, Mean = 1, Max = 2 };

// Returns (out [B, width], max_rows): max_rows is [B, width] int64, the row
// of weight that gave each maximum (-1 for an empty bag, whose output is 0),
// for Max alone (undefined otherwise).
struct EmbeddingBagKernel {
  static constexpr const char* name = "embedding_bag";
  using Fn = std::tuple<Tensor, Tensor> (*)(const Tensor& weight, const Tensor& ids,
                                            const Tensor& starts, EmbeddingBagReduction reduction,
                                            const Tensor& per_sample_weights, int64_t padding_idx);
};

// Returns (grad_weight [rows, width], grad_per_sample_weights [T]) for a
// contiguous grad_out [B, width]; each only when wanted (undefined otherwise).
struct EmbeddingBagBackwardKernel {
  static constexpr const char* name = "embedding_bag backward";
  using Fn = std::tuple<Tensor, Tensor> (*)(const Tensor& grad_out, const Tensor& weight,
                                            const Tensor& ids, const Tensor& starts,
                                            EmbeddingBagReduction reduction,
                                            const Tensor& per_sample_weights,
                                            const Tensor& max_rows, int64_t padding_idx,
                                            bool want_weight, bool want_per_sample_weights);
};

}  // namespace brasa
