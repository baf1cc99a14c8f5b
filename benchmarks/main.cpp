// Runs every benchmark on Brasa and on libtorch at 1 and 2 threads and prints
// one `ratio` line per metric: time ratio brasa/libtorch (< 1: Brasa faster).
// Each side runs in a fresh process of this same program (`--side NAME
// --threads N`), so neither library's thread or BLAS settings leak into the
// other's measurements; the parent collects the results and prints the ratios.
// This VM's speed drifts by 10-20% over tens of seconds (shared host), so the
// two sides run alternately for several rounds and each side's best time per
// metric is compared.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

#include "bench.h"

static int run_side(const std::string& side, int threads) {
  Side s = side == "brasa" ? brasa_side() : libtorch_side();
  s.set_threads(threads);
  for (auto& r : s.run()) std::printf("%s %.9g %.9g %.9g\n", r.name.c_str(), r.seconds, r.bytes, r.items);
  return 0;
}

static std::map<std::string, BenchResult> spawn(const char* self, const std::string& side, int threads) {
  // OpenBLAS reads OPENBLAS_NUM_THREADS when it loads: setting it for the
  // child makes libtorch's BLAS honour the thread count too (Brasa pins its
  // BLAS to one thread and splits GEMMs over its own pool either way).
  std::string cmd = "OPENBLAS_NUM_THREADS=" + std::to_string(threads) + " " + std::string(self) + " --side " + side +
                    " --threads " + std::to_string(threads);
  std::map<std::string, BenchResult> out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[512];
  while (std::fgets(line, sizeof line, p)) {
    std::istringstream is(line);
    BenchResult r;
    if (is >> r.name >> r.seconds >> r.bytes >> r.items) out[r.name] = r;
  }
  if (pclose(p) != 0) std::fprintf(stderr, "ops_bench: the %s side failed\n", side.c_str());
  return out;
}

// Keeps the faster of the two results of each metric in `best`.
static void keep_best(std::map<std::string, BenchResult>& best, const std::map<std::string, BenchResult>& round) {
  for (const auto& [name, r] : round)
    if (!best.count(name) || r.seconds < best[name].seconds) best[name] = r;
}

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--side") == 0) return run_side(argv[2], std::atoi(argv[4]));
  // ops_bench [THREADS] [--rounds R]
  std::vector<int> threads = {1, 2};
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (std::atoi(argv[i]) > 0) {
      threads = {std::atoi(argv[i])};
    } else {
      std::fprintf(stderr, "usage: %s [THREADS] [--rounds R]  (default: 1 and 2 threads, 3 rounds)\n", argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) return 1;
  for (int t : threads) {
    std::map<std::string, BenchResult> br, lt;
    for (int r = 0; r < rounds; ++r) {
      keep_best(br, spawn(self, "brasa", t));
      keep_best(lt, spawn(self, "libtorch", t));
    }
    for (auto& [name, b] : br) {
      const BenchResult& l = lt[name];
      std::printf("%-28s threads=%d  brasa %10.3f us  libtorch %10.3f us", name.c_str(), t, b.seconds * 1e6,
                  l.seconds * 1e6);
      if (b.bytes > 0)
        std::printf("  brasa %6.2f GB/s  libtorch %6.2f GB/s", b.bytes / b.seconds / 1e9, l.bytes / l.seconds / 1e9);
      if (b.items > 0)
        std::printf("  brasa %8.0f samples/s  libtorch %8.0f samples/s", b.items / b.seconds, l.items / l.seconds);
      std::printf("\n");
    }
    for (auto& [name, b] : br)
      if (lt.count(name))
        std::printf("ratio %s threads=%d brasa/libtorch time = %.3f (best of %d alternating rounds)\n", name.c_str(), t,
                    b.seconds / lt[name].seconds, rounds);
  }
  return 0;
}
