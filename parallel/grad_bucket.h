#pragma once
// GradBucket: what a communication hook receives (PyTorch's
// torch.distributed.GradBucket) — the flat buffer of one bucket of
// gradients, the parameters it holds and where each one's gradient lies.
// CommHook: replaces the bucket's allreduce. It runs on the reducer's
// communication thread, in bucket order, and returns a Work whose first
// result tensor is the reduced bucket (the buffer itself when reduced in
// place); the reducer waits for it and copies the result into the buffer.

#include <brasa/comm/work.h>

#include <functional>
#include <memory>
#include <vector>

namespace brasa::nn::parallel {

class GradBucket {
 public:
  GradBucket(size_t index, size_t bucket_count, Tensor buffer, std::vector<Tensor> parameters,
             std::vector<int64_t> offsets)
      : index_(index),
        bucket_count_(bucket_count),
        buffer_(std::move(buffer)),
        parameters_(std::move(parameters)),
        offsets_(std::move(offsets)) {}

  // The bucket's position in reduction order (0 is reduced first).
  size_t index() const { return index_; }
  // The flat 1-D buffer holding every gradient of the bucket.
  Tensor& buffer() { return buffer_; }
  const Tensor& buffer() const { return buffer_; }
  // Replaces the buffer's contents (a hook reducing out of place).
  void set_buffer(const Tensor& t) { buffer_.copy_(t); }
  // The parameters whose gradients the bucket holds, in buffer order.
  const std::vector<Tensor>& parameters() const { return parameters_; }
  // Views of the buffer, one per parameter, shaped like it.
  std::vector<Tensor> gradients() const;
  // Element offset of each parameter's gradient in the buffer.
  const std::vector<int64_t>& offsets() const { return offsets_; }
  // The last bucket reduced in this iteration.
  bool is_last() const { return index_ + 1 == bucket_count_; }

  // c10d spellings.
  size_t getIndex() const { return index_; }
  Tensor& getBuffer() { return buffer_; }
  bool isLast() const { return is_last(); }

 private:
  size_t index_, bucket_count_;
  Tensor buffer_;
  std::vector<Tensor> parameters_;
  std::vector<int64_t> offsets_;
};

using CommHook = std::function<std::shared_ptr<distributed::Work>(GradBucket&)>;

}  // namespace brasa::nn::parallel
