#pragma once
// The bookkeeping of a cache of freed memory blocks kept for reuse, shared
// by the host allocator's large blocks (storage.cpp) and the shared-memory
// blocks (shared_memory.cpp): blocks by size, a request served by a block
// up to 5/4 of its (rounded) size, at most a byte limit and a block count.
// The caller rounds sizes, locks, and frees what is refused or drained.
#include <cstddef>
#include <limits>
#include <map>
#include <vector>

namespace brasa::detail {

template <class Block>
class FreeBlocks {
 public:
  explicit FreeBlocks(size_t limit_bytes, size_t max_blocks = std::numeric_limits<size_t>::max())
      : limit_(limit_bytes), max_blocks_(max_blocks) {}

  // A block of `size` bytes up to size + size / 4, taken out; null if none.
  Block* take(size_t size) {
    auto it = blocks_.lower_bound(size);
    if (it == blocks_.end() || it->first > size + size / 4) return nullptr;
    Block* b = it->second;
    bytes_ -= it->first;
    blocks_.erase(it);
    return b;
  }
  // Keeps `b` of `size` bytes; false (nothing kept) past the limits.
  bool put(size_t size, Block* b) {
    if (bytes_ + size > limit_ || blocks_.size() >= max_blocks_) return false;
    blocks_.emplace(size, b);
    bytes_ += size;
    return true;
  }
  // Every block, taken out.
  std::vector<Block*> take_all() {
    std::vector<Block*> all;
    for (auto& [size, b] : blocks_) all.push_back(b);
    blocks_.clear();
    bytes_ = 0;
    return all;
  }
  size_t bytes() const { return bytes_; }

 private:
  std::multimap<size_t, Block*> blocks_;
  size_t bytes_ = 0;
  size_t limit_;
  size_t max_blocks_;
};

}  // namespace brasa::detail
