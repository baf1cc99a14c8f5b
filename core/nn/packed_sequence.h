#pragma once
// Batches of sequences of different lengths for the recurrent modules, as
// libtorch's torch::nn::utils::rnn: a PackedSequence holds the steps of all
// sequences, longest first, step by step (`data` [sum of lengths, *]), with
// how many sequences are still running at each step (`batch_sizes`, int64 on
// the CPU). LSTM, GRU and RNN run one through forward_with_packed_input,
// stepping each sequence only as far as its length.
//   auto packed = pack_padded_sequence(padded, lengths, /*batch_first=*/true,
//                                      /*enforce_sorted=*/false);
//   auto [out, state] = lstm->forward_with_packed_input(packed);
//   auto [padded_out, out_lengths] = pad_packed_sequence(out, true);
#include <brasa/tensor/tensor.h>

#include <optional>
#include <tuple>

namespace brasa::nn::utils::rnn {

// The inverse of a permutation of 0..n-1 (undefined for undefined).
Tensor invert_permutation(const Tensor& permutation);

class PackedSequence {
 public:
  // unsorted_indices defaults to the inverse of sorted_indices. Made by the
  // functions below; batch_sizes must be on the CPU.
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {},
                          Tensor unsorted_indices = {});
  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  // The original batch positions in the packed (longest first) order, and
  // back; undefined when the batch came sorted.
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }

  // data (and the indices) moved; batch_sizes stays on the CPU.
  PackedSequence to(TensorOptions options) const;
  PackedSequence cuda() const;
  PackedSequence cpu() const;
  PackedSequence pin_memory() const;
  bool is_cuda() const { return data_.is_cuda(); }
  bool is_pinned() const { return data_.is_pinned(); }

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

// input [T, B, *] (or [B, T, *] with batch_first) whose sequence b is its
// first lengths[b] steps. With enforce_sorted the lengths must be
// non-increasing; otherwise the batch is sorted here and the order kept in
// the result. Differentiable in input.
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false,
                                    bool enforce_sorted = true);

// The padded batch [T, B, *] (or [B, T, *]) back, T = the longest length
// or total_length, padding_value past each sequence's end, in the original
// batch order; and the lengths (int64). Differentiable in the data.
std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

// Sequences [L_i, *] stacked into [max L, B, *] (or [B, max L, *]), padded
// with padding_value at their ends.
Tensor pad_sequence(TensorList sequences, bool batch_first = false, double padding_value = 0);

// pack_padded_sequence of pad_sequence(sequences).
PackedSequence pack_sequence(TensorList sequences, bool enforce_sorted = true);

}  // namespace brasa::nn::utils::rnn
