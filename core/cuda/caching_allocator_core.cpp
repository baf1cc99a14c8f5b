#include <brasa/cuda/caching_allocator_core.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace brasa::cuda {

void Stat::increase(int64_t n) {
  current += n;
  allocated += n;
  peak = std::max(peak, current);
}

void Stat::decrease(int64_t n) {
  current -= n;
  freed += n;
}

size_t round_size(size_t bytes) {
  if (bytes < kMinBlockSize) return kMinBlockSize;
  return (bytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t segment_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

std::string format_bytes(size_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

// Pools are ordered by stream, then size, then address: the first block at
// or after (stream, size) is the smallest that fits on that stream.
bool CachingAllocatorCore::BySize::operator()(const Block* a, const Block* b) const {
  return std::tie(a->stream, a->size, a->ptr) < std::tie(b->stream, b->size, b->ptr);
}

CachingAllocatorCore::CachingAllocatorCore(RawMemory* raw, bool caching)
    : raw_(raw), caching_(caching) {
  BRASA_CHECK(raw != nullptr, "CUDA caching allocator: expected a raw memory interface");
}

CachingAllocatorCore::~CachingAllocatorCore() {
  for (auto& c : devices_) {
    if (!c) continue;
    std::lock_guard<std::mutex> lock(c->mu);
    wait_all_events(*c);
    release_cached(*c);
  }
}

CachingAllocatorCore::DeviceCache& CachingAllocatorCore::cache(int device) const {
  BRASA_CHECK(device >= 0 && device < kMaxDevices, "CUDA caching allocator: device index ", device,
              " is out of range [0, ", kMaxDevices, ")");
  std::lock_guard<std::mutex> lock(devices_mu_);
  auto& c = devices_[device];
  if (!c) c = std::make_unique<DeviceCache>();
  return *c;
}

Block* CachingAllocatorCore::find_free(DeviceCache& c, Pool& pool, size_t size, StreamId stream) {
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

Block* CachingAllocatorCore::new_segment(DeviceCache& c, int device, size_t size, bool small,
                                         StreamId stream) {
  if (c.stats.reserved_bytes.current + static_cast<int64_t>(size) >
      static_cast<int64_t>(std::min<size_t>(c.limit, INT64_MAX)))
    return nullptr;
  void* p = raw_->malloc(device, size);
  if (!p) return nullptr;
  auto* b = new Block;
  b->device = device;
  b->stream = stream;
  b->size = size;
  b->ptr = static_cast<char*>(p);
  b->small = small;
  c.segments.push_back(b);
  c.stats.segment.increase(1);
  c.stats.reserved_bytes.increase(static_cast<int64_t>(size));
  ++c.stats.num_device_alloc;
  return b;
}

// Cuts `block` to `size`; the rest goes back to the pool as a free block.
Block* CachingAllocatorCore::split(DeviceCache& c, Block* block, size_t size) {
  const size_t rest = block->size - size;
  const bool worth = block->small ? rest >= kMinBlockSize : rest > kSmallSize;
  if (!caching_ || !worth) return block;
  auto* r = new Block;
  r->device = block->device;
  r->stream = block->stream;
  r->small = block->small;
  r->ptr = block->ptr + size;
  r->size = rest;
  r->prev = block;
  r->next = block->next;
  if (r->next) r->next->prev = r;
  block->next = r;
  block->size = size;
  (r->small ? c.small : c.large).insert(r);
  return block;
}

Block* CachingAllocatorCore::malloc(int device, size_t bytes, StreamId stream) {
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  const size_t size = round_size(bytes);
  const bool small = size <= kSmallSize;
  Block* b = nullptr;
  if (caching_) {
    process_events(c);
    b = find_free(c, small ? c.small : c.large, size, stream);
  }
  const size_t alloc_size = caching_ ? segment_size(size) : size;
  if (!b) b = new_segment(c, device, alloc_size, small, stream);
  if (!b && caching_) {
    // Give the cached segments back to the driver and try once more.
    ++c.stats.num_alloc_retries;
    wait_all_events(c);
    release_cached(c);
    b = new_segment(c, device, alloc_size, small, stream);
  }
  if (!b) out_of_memory(c, device, bytes, alloc_size);
  b = split(c, b, size);
  b->allocated = true;
  b->requested = bytes;
  c.stats.allocation.increase(1);
  c.stats.active.increase(1);
  c.stats.allocated_bytes.increase(static_cast<int64_t>(b->size));
  c.stats.active_bytes.increase(static_cast<int64_t>(b->size));
  c.stats.requested_bytes.increase(static_cast<int64_t>(bytes));
  return b;
}

void CachingAllocatorCore::out_of_memory(DeviceCache& c, int device, size_t bytes,
                                         size_t alloc_size) {
  ++c.stats.num_ooms;
  size_t free_bytes = 0, total_bytes = 0;
  raw_->mem_info(device, &free_bytes, &total_bytes);
  const auto allocated = static_cast<size_t>(c.stats.allocated_bytes.current);
  const auto reserved = static_cast<size_t>(c.stats.reserved_bytes.current);
  std::string limit;
  if (c.limit != SIZE_MAX)
    limit = detail::str(" The per-process memory fraction ", c.fraction, " allows ",
                        format_bytes(c.limit), " and ", format_bytes(reserved + alloc_size),
                        " would be reserved.");
  throw OutOfMemoryError(
      detail::str("CUDA out of memory. Tried to allocate ", format_bytes(bytes), ". GPU ", device,
                  " has a total capacity of ", format_bytes(total_bytes), " of which ",
                  format_bytes(free_bytes), " is free. Of the allocated memory ",
                  format_bytes(allocated), " is allocated by Brasa, and ",
                  format_bytes(reserved - std::min(reserved, allocated)),
                  " is reserved by Brasa but unallocated.", limit),
      "", __FILE__, __LINE__);
}

void CachingAllocatorCore::free(Block* b) {
  if (!b) return;
  DeviceCache& c = cache(b->device);
  std::lock_guard<std::mutex> lock(c.mu);
  BRASA_CHECK(b->allocated, "CUDA caching allocator: free of a block that is not allocated");
  b->allocated = false;
  c.stats.allocation.decrease(1);
  c.stats.allocated_bytes.decrease(static_cast<int64_t>(b->size));
  c.stats.requested_bytes.decrease(static_cast<int64_t>(b->requested));
  // Streams other than the allocating one may still read or write it: the
  // block waits for an event on each of them instead of synchronising.
  for (StreamId s : b->stream_uses) {
    c.events.emplace_back(raw_->record_event(b->device, s), b);
    ++b->pending_events;
  }
  b->stream_uses.clear();
  if (b->pending_events > 0) {
    if (!caching_) wait_all_events(c);  // the driver frees it now, so wait first
    return;
  }
  return_block(c, b);
}

// A block nobody uses any more: back to its pool, merged with its free
// neighbours (or, without caching, back to the driver).
void CachingAllocatorCore::return_block(DeviceCache& c, Block* b) {
  c.stats.active.decrease(1);
  c.stats.active_bytes.decrease(static_cast<int64_t>(b->size));
  if (!caching_) {
    release_segment(c, b);
    return;
  }
  Pool& pool = b->small ? c.small : c.large;
  if (Block* p = b->prev; p && p->is_free()) {
    pool.erase(p);
    b->ptr = p->ptr;
    b->size += p->size;
    b->prev = p->prev;
    if (b->prev) b->prev->next = b;
    std::replace(c.segments.begin(), c.segments.end(), p, b);
    delete p;
  }
  if (Block* n = b->next; n && n->is_free()) {
    pool.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (b->next) b->next->prev = b;
    delete n;
  }
  pool.insert(b);
}

void CachingAllocatorCore::record_stream(Block* b, StreamId stream) {
  if (!b) return;
  DeviceCache& c = cache(b->device);
  std::lock_guard<std::mutex> lock(c.mu);
  if (stream != b->stream) b->stream_uses.insert(stream);
}

char* CachingAllocatorCore::segment_base(const Block* b) const {
  DeviceCache& c = cache(b->device);
  std::lock_guard<std::mutex> lock(c.mu);
  while (b->prev) b = b->prev;
  return b->ptr;
}

void CachingAllocatorCore::process_events(DeviceCache& c) {
  for (auto it = c.events.begin(); it != c.events.end();) {
    if (!raw_->event_done(it->first)) {
      ++it;
      continue;
    }
    raw_->event_release(it->first);
    Block* b = it->second;
    it = c.events.erase(it);
    if (--b->pending_events == 0) return_block(c, b);
  }
}

void CachingAllocatorCore::wait_all_events(DeviceCache& c) {
  for (auto& [event, block] : c.events) raw_->event_wait(event);
  process_events(c);
}

// Returns every free whole segment to the driver.
void CachingAllocatorCore::release_cached(DeviceCache& c) {
  for (Pool* pool : {&c.small, &c.large}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev || b->next) {
        ++it;
        continue;
      }
      it = pool->erase(it);
      release_segment(c, b);
    }
  }
}

void CachingAllocatorCore::release_segment(DeviceCache& c, Block* b) {
  raw_->free(b->device, b->ptr);
  c.segments.erase(std::remove(c.segments.begin(), c.segments.end(), b), c.segments.end());
  c.stats.segment.decrease(1);
  c.stats.reserved_bytes.decrease(static_cast<int64_t>(b->size));
  ++c.stats.num_device_free;
  delete b;
}

void CachingAllocatorCore::empty_cache() {
  for (auto& c : devices_) {
    if (!c) continue;
    std::lock_guard<std::mutex> lock(c->mu);
    wait_all_events(*c);
    release_cached(*c);
  }
}

void CachingAllocatorCore::set_memory_fraction(double fraction, int device) {
  BRASA_CHECK(fraction >= 0 && fraction <= 1, "set_per_process_memory_fraction: invalid fraction ",
              fraction, ", expected a value in [0, 1]");
  size_t free_bytes = 0, total_bytes = 0;
  raw_->mem_info(device, &free_bytes, &total_bytes);
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  c.fraction = fraction;
  c.limit = static_cast<size_t>(fraction * static_cast<double>(total_bytes));
}

DeviceStats CachingAllocatorCore::stats(int device) const {
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  return c.stats;
}

void CachingAllocatorCore::reset_peak_stats(int device) {
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  for (Stat* s : {&c.stats.allocation, &c.stats.segment, &c.stats.active, &c.stats.allocated_bytes,
                  &c.stats.reserved_bytes, &c.stats.active_bytes, &c.stats.requested_bytes})
    s->peak = s->current;
}

void CachingAllocatorCore::reset_accumulated_stats(int device) {
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mu);
  for (Stat* s : {&c.stats.allocation, &c.stats.segment, &c.stats.active, &c.stats.allocated_bytes,
                  &c.stats.reserved_bytes, &c.stats.active_bytes, &c.stats.requested_bytes})
    s->allocated = s->freed = 0;
  c.stats.num_alloc_retries = c.stats.num_ooms = 0;
  c.stats.num_device_alloc = c.stats.num_device_free = 0;
}

std::vector<SegmentInfo> CachingAllocatorCore::snapshot() const {
  std::vector<SegmentInfo> out;
  for (int d = 0; d < kMaxDevices; ++d) {
    DeviceCache* c;
    {
      std::lock_guard<std::mutex> lock(devices_mu_);
      c = devices_[d].get();
    }
    if (!c) continue;
    std::lock_guard<std::mutex> lock(c->mu);
    for (Block* first : c->segments) {
      SegmentInfo s{d, first->stream, first->small, 0, 0, 0};
      for (Block* b = first; b; b = b->next) {
        s.total_size += b->size;
        if (b->allocated) s.allocated_size += b->size;
        ++s.blocks;
      }
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace brasa::cuda
