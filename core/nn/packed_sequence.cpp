#include <brasa/nn/packed_sequence.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/sort.h>

#include <algorithm>
#include <vector>

namespace brasa::nn::utils::rnn {
namespace {

// t's sizes with the first replaced by `first`.
std::vector<int64_t> with_first(const Tensor& t, int64_t first) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  sizes[0] = first;
  return sizes;
}

// `rows` rows of padding shaped like t's rows.
Tensor padding_rows(const Tensor& t, int64_t rows, double value) {
  return full(with_first(t, rows), value, t.options());
}

}  // namespace

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return {};
  BRASA_CHECK(permutation.dim() == 1, "invert_permutation: expected a 1-D permutation, got shape ",
              permutation.sizes());
  Tensor inverse = empty(permutation.sizes(), permutation.options().dtype(kLong));
  inverse.scatter_(0, permutation.to(kLong),
                   arange(permutation.numel(), permutation.options().dtype(kLong)));
  return inverse;
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices,
                               Tensor unsorted_indices) {
  BRASA_CHECK(batch_sizes.defined() && batch_sizes.is_cpu() && batch_sizes.dim() == 1 &&
                  batch_sizes.dtype() == kLong,
              "PackedSequence: batch_sizes should always be a 1-D int64 tensor on the CPU, got ",
              batch_sizes.defined() ? batch_sizes.toString() : std::string("undefined"),
              ". PackedSequences are made by pack_padded_sequence and pack_sequence.");
  if (!unsorted_indices.defined()) unsorted_indices = invert_permutation(sorted_indices);
  data_ = std::move(data);
  batch_sizes_ = std::move(batch_sizes);
  sorted_indices_ = std::move(sorted_indices);
  unsorted_indices_ = std::move(unsorted_indices);
}

PackedSequence PackedSequence::to(TensorOptions options) const {
  Tensor data = data_.to(options);
  if (data.is_same(data_)) return *this;
  auto index_options = TensorOptions().device(data.device()).dtype(kLong);
  auto move = [&](const Tensor& t) { return t.defined() ? t.to(index_options) : Tensor(); };
  return PackedSequence(data, batch_sizes_, move(sorted_indices_), move(unsorted_indices_));
}
PackedSequence PackedSequence::cuda() const { return to(TensorOptions().device(Device(kCUDA))); }
PackedSequence PackedSequence::cpu() const { return to(TensorOptions().device(Device(kCPU))); }
PackedSequence PackedSequence::pin_memory() const {
  auto pin = [](const Tensor& t) { return t.defined() ? t.pin_memory() : Tensor(); };
  return PackedSequence(data_.pin_memory(), batch_sizes_, pin(sorted_indices_),
                        pin(unsorted_indices_));
}

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first,
                                    bool enforce_sorted) {
  BRASA_CHECK(input.defined() && input.dim() >= 2,
              "pack_padded_sequence: expected input [T, B, *] (or [B, T, *] with batch_first), "
              "got shape ",
              input.defined() ? input.sizes() : IntArrayRef{});
  BRASA_CHECK(lengths.defined() && lengths.dim() == 1,
              "pack_padded_sequence: expected 'lengths' to be a 1-D tensor, got shape ",
              lengths.defined() ? lengths.sizes() : IntArrayRef{});
  const int64_t batch_dim = batch_first ? 0 : 1;
  BRASA_CHECK(lengths.numel() == input.size(batch_dim),
              "pack_padded_sequence: expected len(lengths) to be equal to batch_size, but got ",
              lengths.numel(), " (batch_size=", input.size(batch_dim), ")");
  lengths = lengths.to(TensorOptions().device(Device(kCPU)).dtype(kLong)).contiguous();
  Tensor sorted_indices;
  if (!enforce_sorted) {
    std::tie(lengths, sorted_indices) = sort(lengths, /*stable=*/true, 0, /*descending=*/true);
    input = input.index_select(batch_dim, sorted_indices.to(input.device()));
    sorted_indices = sorted_indices.to(input.device());
  }
  Tensor steps = batch_first ? input.transpose(0, 1) : input;  // [T, B, *]
  const int64_t T = steps.size(0), B = steps.size(1);
  const int64_t* len = lengths.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    BRASA_CHECK(len[b] > 0,
                "pack_padded_sequence: Length of all samples has to be greater than 0, but found "
                "an element in 'lengths' that is <= 0 (",
                len[b], " at ", b, ")");
    BRASA_CHECK(b == 0 || len[b] <= len[b - 1],
                "pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True (",
                len[b - 1], " then ", len[b], " at index ", b,
                "). You can pass `enforce_sorted=False` to pack_padded_sequence "
                "and/or pack_sequence to sidestep this requirement.");
  }
  BRASA_CHECK(B > 0 && len[0] <= T, "pack_padded_sequence: the longest length (",
              B > 0 ? len[0] : 0, ") exceeds the input's ", T, " steps");
  Tensor batch_sizes = empty({len[0]}, TensorOptions().dtype(kLong));
  std::vector<Tensor> pieces;
  for (int64_t t = 0, running = B; t < len[0]; ++t) {
    while (len[running - 1] <= t) --running;  // sequences that end before step t
    batch_sizes.data_ptr<int64_t>()[t] = running;
    pieces.push_back(steps[t].slice(0, 0, running));
  }
  return PackedSequence(cat(pieces, 0), batch_sizes, sorted_indices, {});
}

std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first,
                                               double padding_value,
                                               std::optional<int64_t> total_length) {
  const Tensor& sizes = sequence.batch_sizes();
  const Tensor& data = sequence.data();
  const int64_t T = sizes.numel();
  BRASA_CHECK(T > 0 && data.defined() && data.dim() >= 1,
              "pad_packed_sequence: expected a non-empty PackedSequence");
  const int64_t* bs = sizes.data_ptr<int64_t>();
  const int64_t B = bs[0];
  const int64_t steps = total_length.value_or(T);
  BRASA_CHECK(steps >= T,
              "pad_packed_sequence: Expected total_length to be at least the length of the "
              "longest sequence in input, but got total_length=",
              steps, " and max sequence length being ", T);
  std::vector<Tensor> rows;  // [B, *] per step
  int64_t offset = 0;
  for (int64_t t = 0; t < T; ++t) {
    Tensor step = data.narrow(0, offset, bs[t]);
    offset += bs[t];
    rows.push_back(bs[t] < B ? cat({step, padding_rows(data, B - bs[t], padding_value)}, 0) : step);
  }
  BRASA_CHECK(offset == data.size(0), "pad_packed_sequence: the batch sizes add up to ", offset,
              " steps but data has ", data.size(0));
  for (int64_t t = T; t < steps; ++t) rows.push_back(padding_rows(data, B, padding_value));
  Tensor padded = stack(rows, batch_first ? 1 : 0);  // [steps, B, *] or [B, steps, *]
  Tensor lengths = empty({B}, TensorOptions().dtype(kLong));
  for (int64_t b = 0, t = T; b < B; ++b) {
    while (t > 0 && bs[t - 1] <= b) --t;  // steps that still include sequence b
    lengths.data_ptr<int64_t>()[b] = t;
  }
  const Tensor& unsorted = sequence.unsorted_indices();
  if (!unsorted.defined()) return {padded, lengths};
  return {padded.index_select(batch_first ? 0 : 1, unsorted),
          lengths.index_select(0, unsorted.to(Device(kCPU)))};
}

Tensor pad_sequence(TensorList sequences, bool batch_first, double padding_value) {
  BRASA_CHECK(!sequences.empty(), "pad_sequence: received an empty list of sequences");
  int64_t longest = 0;
  for (const Tensor& s : sequences) {
    BRASA_CHECK(s.defined() && s.dim() >= 1 && s.dim() == sequences[0].dim() &&
                    s.sizes().slice(1) == sequences[0].sizes().slice(1),
                "pad_sequence: expected sequences [L, *] with the same trailing sizes, got ",
                s.defined() ? s.sizes() : IntArrayRef{}, " and ", sequences[0].sizes());
    longest = std::max(longest, s.size(0));
  }
  std::vector<Tensor> padded;
  for (const Tensor& s : sequences)
    padded.push_back(
        s.size(0) < longest ? cat({s, padding_rows(s, longest - s.size(0), padding_value)}, 0) : s);
  return stack(padded, batch_first ? 0 : 1);
}

PackedSequence pack_sequence(TensorList sequences, bool enforce_sorted) {
  Tensor lengths = empty({static_cast<int64_t>(sequences.size())}, TensorOptions().dtype(kLong));
  for (size_t i = 0; i < sequences.size(); ++i)
    lengths.data_ptr<int64_t>()[i] = sequences[i].defined() ? sequences[i].size(0) : 0;
  return pack_padded_sequence(pad_sequence(sequences), lengths, false, enforce_sorted);
}

}  // namespace brasa::nn::utils::rnn
