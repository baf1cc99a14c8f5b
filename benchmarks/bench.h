#pragma once
// The interface between the benchmark driver and the two compilations of ops_bench.inc.
#include <functional>
#include <string>
#include <vector>

struct BenchResult {
  std::string name;
  double seconds;       // per iteration (median)
  double bytes = 0;     // memory traffic per iteration, for GB/s
  double items = 0;     // samples per iteration, for items/s
};

struct Side {
  const char* name;
  std::function<void(int)> set_threads;
  std::function<std::vector<BenchResult>()> run;
};

Side brasa_side();
Side libtorch_side();
