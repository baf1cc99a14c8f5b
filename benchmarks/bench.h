#pragma once
// The interface between the benchmark driver and the two compilations of ops_bench.inc.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct BenchResult {
  std::string name;
  double seconds;    // per iteration (median)
  double bytes = 0;  // memory traffic per iteration, for GB/s
  double items = 0;  // samples per iteration, for items/s
};

// A few related metrics that set up their own inputs and can run alone.
struct BenchGroup {
  const char* name;
  std::function<void(std::vector<BenchResult>&)> run;
};

struct Side {
  const char* name;
  std::function<void(int)> set_threads;
  std::vector<BenchGroup> groups;
};

// Called before each repetition of a measurement (with its setup); when the
// driver interleaves the two sides repetition by repetition, it waits here
// for this side's turn.
void bench_turn();

// STREAM's "scale" kernel, b = 3a, split over `threads` threads: the
// machine's memory bandwidth. With streaming stores the bytes it counts (one
// read, one write) are the bytes that move; with ordinary stores, as stream.c
// compiled plainly runs, each written line is read first, and the kernel
// understates the bandwidth (here 16-18 GB/s instead of 20-22 at one thread,
// 20-24 instead of 31-32 at two).
void stream_scale_kernel(float* b, const float* a, int64_t n, int threads, bool streaming);

Side brasa_side();
Side libtorch_side();
