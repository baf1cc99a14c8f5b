// The caching allocator's bookkeeping over a fake device: a RawMemory that
// hands out addresses from a counter, with a capacity, and events whose
// completion the test decides.
#include <brasa/cuda/caching_allocator_core.h>

#include "../test_util.h"

#include <map>

namespace brasa::cuda {
namespace {

class FakeDevice : public RawMemory {
 public:
  explicit FakeDevice(size_t capacity) : capacity_(capacity) {}
  void* malloc(int, size_t bytes) override {
    if (used_ + bytes > capacity_) return nullptr;
    used_ += bytes;
    char* p = next_;
    next_ += bytes + 4096;  // gaps, so that segments are never adjacent
    live_[p] = bytes;
    ++mallocs;
    return p;
  }
  void free(int, void* ptr) override {
    auto it = live_.find(static_cast<char*>(ptr));
    ASSERT_NE(it, live_.end()) << "free of an address the device never gave";
    used_ -= it->second;
    live_.erase(it);
    ++frees;
  }
  void mem_info(int, size_t* free_bytes, size_t* total_bytes) override {
    *free_bytes = capacity_ - used_;
    *total_bytes = capacity_;
  }
  void* record_event(int, StreamId stream) override {
    events_.push_back({stream, false, false});
    return reinterpret_cast<void*>(events_.size());  // 1-based index
  }
  bool event_done(void* e) override { return event(e).done; }
  void event_wait(void* e) override {
    event(e).done = true;
    ++host_waits;
  }
  void event_release(void* e) override { event(e).released = true; }

  // The work queued on `stream` so far has finished.
  void finish(StreamId stream) {
    for (auto& e : events_)
      if (e.stream == stream) e.done = true;
  }
  size_t live_allocations() const { return live_.size(); }
  bool all_events_released() const {
    for (auto& e : events_)
      if (!e.released) return false;
    return true;
  }
  size_t events_recorded() const { return events_.size(); }
  int mallocs = 0, frees = 0, host_waits = 0;

 private:
  struct FakeEvent {
    StreamId stream;
    bool done, released;
  };
  FakeEvent& event(void* e) { return events_.at(reinterpret_cast<size_t>(e) - 1); }
  size_t capacity_, used_ = 0;
  char* next_ = reinterpret_cast<char*>(uintptr_t{1} << 40);
  std::map<char*, size_t> live_;
  std::vector<FakeEvent> events_;
};

constexpr size_t MiB = size_t{1} << 20;
constexpr StreamId kStream = 7, kOtherStream = 9;

TEST(CachingAllocator, RoundsTo512BytesAndPicksThePool) {
  EXPECT_EQ(round_size(1), 512u);
  EXPECT_EQ(round_size(512), 512u);
  EXPECT_EQ(round_size(513), 1024u);
  EXPECT_EQ(segment_size(round_size(100)), 2 * MiB);
  EXPECT_EQ(segment_size(MiB), 2 * MiB);
  EXPECT_EQ(segment_size(MiB + 512), 20 * MiB);
  EXPECT_EQ(segment_size(10 * MiB), 10 * MiB);
  EXPECT_EQ(segment_size(11 * MiB + 1), 12 * MiB);
  EXPECT_EQ(format_bytes(100), "100 bytes");
  EXPECT_EQ(format_bytes(3 * MiB / 2), "1.50 MiB");
}

TEST(CachingAllocator, SmallRequestsShareOneSegmentAndReuseFreedBlocks) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev);
  Block* x = a.malloc(0, 1000, kStream);
  Block* y = a.malloc(0, 3000, kStream);
  EXPECT_EQ(x->size, 1024u);
  EXPECT_EQ(y->size, 3072u);
  EXPECT_EQ(y->ptr, x->ptr + 1024) << "the second block is cut from the same segment";
  EXPECT_EQ(dev.mallocs, 1);
  a.free(x);
  Block* z = a.malloc(0, 900, kStream);
  EXPECT_EQ(z->ptr, y->ptr - 1024) << "the freed block is reused";
  EXPECT_EQ(dev.mallocs, 1);
  auto s = a.stats(0);
  EXPECT_EQ(s.allocated_bytes.current, 1024 + 3072);
  EXPECT_EQ(s.reserved_bytes.current, static_cast<int64_t>(2 * MiB));
  EXPECT_EQ(s.requested_bytes.current, 900 + 3000);
  EXPECT_EQ(s.allocation.current, 2);
  EXPECT_EQ(s.segment.current, 1);
  a.free(y);
  a.free(z);
}

TEST(CachingAllocator, FreedNeighboursMergeBackIntoTheWholeSegment) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev);
  Block* b1 = a.malloc(0, 4 * MiB, kStream);
  Block* b2 = a.malloc(0, 4 * MiB, kStream);
  Block* b3 = a.malloc(0, 4 * MiB, kStream);
  EXPECT_EQ(dev.mallocs, 1) << "three 4 MiB blocks fit in one 20 MiB segment";
  ASSERT_EQ(a.snapshot().size(), 1u);
  EXPECT_EQ(a.snapshot()[0].blocks, 4);  // three allocated, the 8 MiB rest free
  EXPECT_EQ(a.segment_base(b3), b1->ptr) << "IPC shares the whole segment";
  a.free(b1);
  a.free(b3);  // merges with the free rest after it
  EXPECT_EQ(a.snapshot()[0].blocks, 3);
  a.free(b2);  // merges with both sides
  auto segs = a.snapshot();
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].blocks, 1);
  EXPECT_EQ(segs[0].total_size, 20 * MiB);
  EXPECT_EQ(segs[0].allocated_size, 0u);
  // The whole segment serves a request that needs all of it.
  Block* big = a.malloc(0, 20 * MiB, kStream);
  EXPECT_EQ(dev.mallocs, 1);
  a.free(big);
}

TEST(CachingAllocator, LargeBlocksAreSplitOnlyWhenTheRestExceedsOneMiB) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev);
  Block* b = a.malloc(0, 19 * MiB + 512, kStream);  // in a 20 MiB segment: rest < 1 MiB
  EXPECT_EQ(b->size, 20 * MiB) << "the rest is too small to be worth a block";
  EXPECT_EQ(a.snapshot()[0].blocks, 1);
  a.free(b);
  Block* c = a.malloc(0, 12 * MiB, kStream);
  EXPECT_EQ(c->size, 12 * MiB);
  EXPECT_EQ(a.snapshot()[0].blocks, 2);
  a.free(c);
}

TEST(CachingAllocator, BlocksAreReusedOnlyByTheirOwnStream) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev);
  Block* x = a.malloc(0, 5 * MiB, kStream);
  char* p = x->ptr;
  a.free(x);
  Block* y = a.malloc(0, 5 * MiB, kOtherStream);
  EXPECT_NE(y->ptr, p) << "another stream gets a segment of its own";
  EXPECT_EQ(dev.mallocs, 2);
  Block* z = a.malloc(0, 5 * MiB, kStream);
  EXPECT_EQ(z->ptr, p);
  a.free(y);
  a.free(z);
}

TEST(CachingAllocator, RecordStreamDefersReuseUntilThatStreamsWorkIsDone) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev);
  Block* x = a.malloc(0, 4096, kStream);
  char* p = x->ptr;
  a.record_stream(x, kOtherStream);
  a.record_stream(x, kStream);  // its own stream: nothing to wait for
  a.free(x);
  EXPECT_EQ(dev.events_recorded(), 1u) << "one event, on the other stream";
  EXPECT_EQ(dev.host_waits, 0) << "freeing never waits for the device";
  EXPECT_EQ(a.stats(0).allocated_bytes.current, 0);
  EXPECT_EQ(a.stats(0).active_bytes.current, 4096) << "still in use by the other stream";

  Block* y = a.malloc(0, 4096, kStream);
  EXPECT_NE(y->ptr, p) << "not reused while the other stream may still use it";
  dev.finish(kOtherStream);
  Block* z = a.malloc(0, 4096, kStream);
  EXPECT_EQ(z->ptr, p) << "reused once the event completed";
  EXPECT_TRUE(dev.all_events_released());
  EXPECT_EQ(a.stats(0).active_bytes.current, 2 * 4096);
  a.free(y);
  a.free(z);
}

TEST(CachingAllocator, EmptyCacheWaitsForPendingBlocksAndReleasesUnusedSegments) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev);
  Block* kept = a.malloc(0, 4096, kStream);             // small segment, stays in use
  Block* pending = a.malloc(0, 12 * MiB, kStream);      // large segment, freed with an event
  Block* cached = a.malloc(0, 12 * MiB, kOtherStream);  // large segment, freed at once
  a.record_stream(pending, kOtherStream);
  a.free(pending);
  a.free(cached);
  EXPECT_EQ(dev.live_allocations(), 3u);
  a.empty_cache();
  EXPECT_EQ(dev.host_waits, 1);
  EXPECT_EQ(dev.live_allocations(), 1u) << "only the segment with a live block is kept";
  auto s = a.stats(0);
  EXPECT_EQ(s.reserved_bytes.current, static_cast<int64_t>(2 * MiB));
  EXPECT_EQ(s.num_device_free, 2);
  a.free(kept);
  a.empty_cache();
  EXPECT_EQ(dev.live_allocations(), 0u);
  EXPECT_EQ(a.stats(0).reserved_bytes.current, 0);
}

TEST(CachingAllocator, RetriesAfterReleasingTheCacheThenReportsOutOfMemory) {
  FakeDevice dev(64 * MiB);
  CachingAllocatorCore a(&dev);
  Block* x = a.malloc(0, 30 * MiB, kStream);
  Block* y = a.malloc(0, 30 * MiB, kOtherStream);
  a.free(y);                                  // cached on the other stream
  Block* z = a.malloc(0, 30 * MiB, kStream);  // needs y's memory back from the cache
  EXPECT_EQ(a.stats(0).num_alloc_retries, 1);
  EXPECT_EQ(dev.frees, 1);
  try {
    a.malloc(0, 8 * MiB, kStream);
    ADD_FAILURE() << "expected an out-of-memory error";
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.message();
    EXPECT_NE(m.find("CUDA out of memory. Tried to allocate 8.00 MiB. GPU 0 has a total "
                     "capacity of 64.00 MiB of which 4.00 MiB is free."),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("60.00 MiB is allocated by Brasa, and 0 bytes is reserved by Brasa but "
                     "unallocated"),
              std::string::npos)
        << m;
  }
  EXPECT_EQ(a.stats(0).num_ooms, 1);
  a.free(x);
  a.free(z);
}

TEST(CachingAllocator, MemoryFractionCapsWhatIsReserved) {
  FakeDevice dev(100 * MiB);
  CachingAllocatorCore a(&dev);
  a.set_memory_fraction(0.25, 0);
  Block* x = a.malloc(0, 20 * MiB, kStream);
  EXPECT_ERROR("memory fraction 0.25 allows 25.00 MiB", a.malloc(0, 20 * MiB, kStream));
  EXPECT_EQ(dev.mallocs, 1) << "the driver is not even asked past the limit";
  EXPECT_ERROR("invalid fraction 1.5", a.set_memory_fraction(1.5, 0));
  a.free(x);
}

TEST(CachingAllocator, PeakStatsResetToCurrent) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev);
  Block* x = a.malloc(0, 30 * MiB, kStream);
  Block* y = a.malloc(0, 2 * MiB, kStream);
  a.free(x);
  auto s = a.stats(0);
  EXPECT_EQ(s.allocated_bytes.peak, static_cast<int64_t>(32 * MiB));
  EXPECT_EQ(s.allocated_bytes.current, static_cast<int64_t>(2 * MiB));
  EXPECT_EQ(s.allocation.allocated, 2);
  EXPECT_EQ(s.allocation.freed, 1);
  a.reset_peak_stats(0);
  EXPECT_EQ(a.stats(0).allocated_bytes.peak, static_cast<int64_t>(2 * MiB));
  a.reset_accumulated_stats(0);
  EXPECT_EQ(a.stats(0).allocation.allocated, 0);
  EXPECT_EQ(a.stats(0).allocated_bytes.current, static_cast<int64_t>(2 * MiB));
  a.free(y);
}

TEST(CachingAllocator, WithoutCachingEveryBlockGoesToTheDriverAndBack) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev, /*caching=*/false);
  Block* x = a.malloc(0, 1000, kStream);
  EXPECT_EQ(x->size, 1024u) << "still rounded, but no 2 MiB segment";
  EXPECT_EQ(a.stats(0).reserved_bytes.current, 1024);
  a.record_stream(x, kOtherStream);
  a.free(x);
  EXPECT_EQ(dev.host_waits, 1) << "the other stream is waited for before the driver frees";
  EXPECT_EQ(dev.live_allocations(), 0u);
  Block* y = a.malloc(0, 1000, kStream);
  EXPECT_EQ(dev.mallocs, 2);
  a.free(y);
  EXPECT_EQ(dev.frees, 2);
}

TEST(CachingAllocator, DevicesAreKeptApartAndIndicesChecked) {
  FakeDevice dev(1 << 30);
  CachingAllocatorCore a(&dev);
  Block* x = a.malloc(0, 4096, kStream);
  Block* y = a.malloc(3, 4096, kStream);
  EXPECT_EQ(y->device, 3);
  EXPECT_EQ(a.stats(3).allocated_bytes.current, 4096);
  EXPECT_EQ(a.stats(1).allocated_bytes.current, 0);
  EXPECT_ERROR("device index 64 is out of range", a.malloc(64, 1, kStream));
  a.free(x);
  a.free(y);
  EXPECT_ERROR("not allocated", a.free(y));
}

TEST(CachingAllocator, DestructionReturnsTheCacheToTheDriver) {
  FakeDevice dev(1 << 30);
  {
    CachingAllocatorCore a(&dev);
    a.free(a.malloc(0, 4096, kStream));
    a.free(a.malloc(0, 40 * MiB, kStream));
    EXPECT_EQ(dev.live_allocations(), 2u);
  }
  EXPECT_EQ(dev.live_allocations(), 0u);
}

}  // namespace
}  // namespace brasa::cuda
