// Runs every benchmark on Brasa and on libtorch at 1 and 2 threads and prints
// one `ratio` line per metric: time ratio brasa/libtorch (< 1: Brasa faster).
#include <cstdio>
#include <cstdlib>
#include <map>

#include "bench.h"

int main(int argc, char** argv) {
  std::vector<int> threads = {1, 2};
  if (argc > 1) threads = {std::atoi(argv[1])};
  Side sides[2] = {brasa_side(), libtorch_side()};
  for (int t : threads) {
    std::map<std::string, BenchResult> res[2];
    for (int s = 0; s < 2; ++s) {
      sides[s].set_threads(t);
      for (auto& r : sides[s].run()) res[s][r.name] = r;
    }
    for (auto& [name, br] : res[0]) {
      const BenchResult& lr = res[1][name];
      std::printf("%-28s threads=%d  brasa %10.3f us  libtorch %10.3f us", name.c_str(), t, br.seconds * 1e6,
                  lr.seconds * 1e6);
      if (br.bytes > 0)
        std::printf("  brasa %6.2f GB/s  libtorch %6.2f GB/s", br.bytes / br.seconds / 1e9, lr.bytes / lr.seconds / 1e9);
      if (br.items > 0)
        std::printf("  brasa %8.0f samples/s  libtorch %8.0f samples/s", br.items / br.seconds, lr.items / lr.seconds);
      std::printf("\n");
    }
    for (auto& [name, br] : res[0])
      std::printf("ratio %s threads=%d brasa/libtorch time = %.3f\n", name.c_str(), t, br.seconds / res[1][name].seconds);
  }
  return 0;
}
