#pragma once
// The bookkeeping of the CUDA caching allocator, after PyTorch's: device
// memory is taken from the driver in segments and cut into blocks that are
// cached and reused instead of being returned, because cudaMalloc and
// cudaFree synchronise the device and cost tens of microseconds.
//
//  - Requests are rounded up to 512 bytes. Those of at most 1 MiB come from
//    the small pool (2 MiB segments), the others from the large pool
//    (20 MiB segments below 10 MiB, otherwise the request rounded to 2 MiB).
//  - A free block larger than the request is split; a freed block merges
//    with its free neighbours of the same segment.
//  - A block is reused only by the stream it was allocated on. When other
//    streams used it (record_stream), freeing it records an event on each of
//    them and the block returns to the pool once they have all completed,
//    so freeing never waits for the device.
//  - When the driver has no room, the cached free segments are released and
//    the allocation is tried once more before an OutOfMemoryError.
//
// The device itself is reached through RawMemory, so that this logic is
// tested without a GPU over a fake one (tests/core/cuda/).
#include <brasa/util/error.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace brasa {

// An allocation failed for lack of device memory (torch::OutOfMemoryError).
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

namespace cuda {

// A stream's identity for the allocator (the cudaStream_t's value).
using StreamId = int64_t;

// What the caching allocator needs from the device.
class RawMemory {
 public:
  virtual ~RawMemory() = default;
  // `bytes` of memory on `device`, or null when the device has no room.
  virtual void* malloc(int device, size_t bytes) = 0;
  virtual void free(int device, void* ptr) = 0;
  virtual void mem_info(int device, size_t* free_bytes, size_t* total_bytes) = 0;
  // An event recorded now on `stream`; done once the stream's work so far is.
  virtual void* record_event(int device, StreamId stream) = 0;
  virtual bool event_done(void* event) = 0;
  // Waits on the host until the event is done.
  virtual void event_wait(void* event) = 0;
  virtual void event_release(void* event) = 0;
};

constexpr size_t kMinBlockSize = 512;
constexpr size_t kSmallSize = size_t{1} << 20;
constexpr size_t kSmallBuffer = size_t{2} << 20;
constexpr size_t kMinLargeAlloc = size_t{10} << 20;
constexpr size_t kLargeBuffer = size_t{20} << 20;
constexpr size_t kRoundLarge = size_t{2} << 20;

// A piece of a segment. `prev`/`next` link the blocks of one segment by address.
struct Block {
  int device = 0;
  StreamId stream = 0;
  size_t size = 0;       // bytes, a multiple of 512
  size_t requested = 0;  // what the caller asked for
  char* ptr = nullptr;
  bool small = false;  // from the small pool
  bool allocated = false;
  int pending_events = 0;  // streams still using the freed block
  Block* prev = nullptr;
  Block* next = nullptr;
  std::set<StreamId> stream_uses;  // streams other than `stream` that used it
  bool is_free() const { return !allocated && pending_events == 0; }
};

// One counter with its high-water mark and totals, as in torch.cuda.memory_stats.
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t n);
  void decrease(int64_t n);
};

struct DeviceStats {
  Stat allocation;       // blocks handed out
  Stat segment;          // driver allocations held
  Stat active;           // blocks allocated or waiting for their streams
  Stat allocated_bytes;  // bytes in blocks handed out
  Stat reserved_bytes;   // bytes held from the driver
  Stat active_bytes;
  Stat requested_bytes;           // bytes asked for (before rounding)
  int64_t num_alloc_retries = 0;  // allocations that released the cache and retried
  int64_t num_ooms = 0;
  int64_t num_device_alloc = 0;  // driver allocations made
  int64_t num_device_free = 0;   // and released
};

// A segment as seen by memory_snapshot: its address, size and blocks.
struct SegmentInfo {
  int device;
  StreamId stream;
  bool small;
  size_t total_size;
  size_t allocated_size;
  int blocks;
};

size_t round_size(size_t bytes);
// The driver allocation that serves a rounded request.
size_t segment_size(size_t rounded);
// "2.00 MiB"
std::string format_bytes(size_t bytes);

class CachingAllocatorCore {
 public:
  static constexpr int kMaxDevices = 64;
  // With `caching` false every block is its own driver allocation, freed
  // when the block is (for memory checkers; BRASA_NO_CUDA_MEMORY_CACHING=1).
  explicit CachingAllocatorCore(RawMemory* raw, bool caching = true);
  // Releases the cached segments; blocks still allocated are left to the driver.
  ~CachingAllocatorCore();
  CachingAllocatorCore(const CachingAllocatorCore&) = delete;
  CachingAllocatorCore& operator=(const CachingAllocatorCore&) = delete;

  // A block of at least `bytes` for use on `stream`, or an OutOfMemoryError.
  Block* malloc(int device, size_t bytes, StreamId stream);
  void free(Block* block);
  // Marks the block as used by `stream` too, so that it is not reused before
  // the work queued there so far is done.
  void record_stream(Block* block, StreamId stream);
  // The start of the driver allocation that holds the block (CUDA IPC shares whole segments).
  char* segment_base(const Block* block) const;
  // Waits for pending events and returns every unused segment to the driver.
  void empty_cache();
  // Caps the memory this process reserves on `device` at fraction × total.
  void set_memory_fraction(double fraction, int device);
  DeviceStats stats(int device) const;
  void reset_peak_stats(int device);
  void reset_accumulated_stats(int device);
  std::vector<SegmentInfo> snapshot() const;
  bool caching() const { return caching_; }

 private:
  struct BySize {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BySize>;
  struct DeviceCache {
    mutable std::mutex mu;
    Pool small, large;
    std::deque<std::pair<void*, Block*>> events;  // (event, block waiting on it)
    std::vector<Block*> segments;                 // first block of each segment held
    size_t limit = SIZE_MAX;                      // set_memory_fraction
    double fraction = 1.0;
    DeviceStats stats;
  };

  DeviceCache& cache(int device) const;
  Block* find_free(DeviceCache& c, Pool& pool, size_t size, StreamId stream);
  Block* new_segment(DeviceCache& c, int device, size_t size, bool small, StreamId stream);
  Block* split(DeviceCache& c, Block* block, size_t size);
  void return_block(DeviceCache& c, Block* block);
  void process_events(DeviceCache& c);
  void wait_all_events(DeviceCache& c);
  void release_cached(DeviceCache& c);
  void release_segment(DeviceCache& c, Block* block);
  [[noreturn]] void out_of_memory(DeviceCache& c, int device, size_t bytes, size_t alloc_size);

  RawMemory* raw_;
  bool caching_;
  mutable std::mutex devices_mu_;
  mutable std::array<std::unique_ptr<DeviceCache>, kMaxDevices> devices_;
};

}  // namespace cuda
}  // namespace brasa
