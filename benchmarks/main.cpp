// Runs every benchmark on Brasa and on libtorch at 1 and 2 threads and prints
// one `ratio` line per metric: time ratio brasa/libtorch (< 1: Brasa faster).
// Each side runs in a process of its own (this same program, `--serve SIDE
// THREADS`), so neither library's thread or BLAS settings leak into the
// other's measurements. Both processes stay up for the whole run and take
// turns repetition by repetition, so the two sides of a metric are measured
// milliseconds apart; the side waiting its turn is stopped (SIGSTOP), so its
// idle BLAS or OpenMP threads cannot spin while the other side measures.
// This VM's speed drifts by up to 50% within seconds (shared host); each
// round gives one paired ratio per metric, and the reported ratio is the
// median over the rounds.
// Both sides run with glibc's malloc thresholds pinned (`--malloc pinned`,
// the default): libtorch's CPU allocator calls malloc for every tensor, and
// with glibc's dynamic mmap threshold a tensor of a few MB is a fresh mmap,
// its pages faulted in on every use, until the process happens to free a
// block large enough to raise the threshold. Its speed then depends on its
// history (a KAN step took 19 or 50 ms from one run to the next). Pinned,
// large blocks stay in the heap for reuse: the libtorch that a tuned
// deployment runs. `--malloc dynamic` measures glibc's defaults.
#include <fcntl.h>
#include <immintrin.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <brasa/util/cli.h>

#include "bench.h"

namespace {

Side make_side(const std::string& name) { return name == "brasa" ? brasa_side() : libtorch_side(); }

void print_results(const std::vector<BenchResult>& results) {
  for (const auto& r : results)
    std::printf("%s %.9g %.9g %.9g\n", r.name.c_str(), r.seconds, r.bytes, r.items);
}

// `--side SIDE --threads N [GROUP...]`: runs the groups (all by default) once
// and prints their raw results.
int run_side(const std::string& side, int threads, const std::vector<std::string>& only) {
  Side s = make_side(side);
  s.set_threads(threads);
  for (auto& g : s.groups) {
    if (!only.empty() && std::find(only.begin(), only.end(), g.name) == only.end()) continue;
    std::vector<BenchResult> results;
    g.run(results);
    print_results(results);
    std::fflush(stdout);
  }
  return 0;
}

bool g_serving = false;

// `--serve SIDE THREADS`: reads group indices from stdin and runs each group,
// answering with its results and a line `end`. It runs only on its turn: it
// says `turn` and waits for `go` when it gets the group and before each
// repetition of a measurement.
int serve(const std::string& side, int threads) {
  Side s = make_side(side);
  s.set_threads(threads);
  g_serving = true;
  char line[64];
  while (std::fgets(line, sizeof line, stdin)) {
    const size_t g = std::strtoul(line, nullptr, 10);
    bench_turn();
    std::vector<BenchResult> results;
    if (g < s.groups.size()) s.groups[g].run(results);
    print_results(results);
    std::printf("end\n");
    std::fflush(stdout);
  }
  return 0;
}

// One serving side, driven through two pipes.
class Server {
 public:
  Server(const char* self, const std::string& side, int threads, bool pin_malloc) {
    // Close-on-exec, so that the other side's process holds no copy of this
    // side's ends (the child would then never see the end of its input).
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return;
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(in[0]);
      close(in[1]);
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      // A process group of its own: a group that holds a stopped process
      // gets SIGHUP when the shell that started it exits (as for a run in
      // the background), which would end the driver too.
      setpgid(0, 0);
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[1]);
      close(out[0]);
      // OpenBLAS reads OPENBLAS_NUM_THREADS when it loads: setting it for
      // the child makes libtorch's BLAS honour the thread count too (Brasa
      // pins its BLAS to one thread and splits GEMMs over its own pool).
      setenv("OPENBLAS_NUM_THREADS", std::to_string(threads).c_str(), 1);
      if (pin_malloc)  // glibc reads it when the program starts; a user's own setting wins
        setenv("GLIBC_TUNABLES",
               "glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=1073741824", 0);
      const std::string t = std::to_string(threads);
      execl(self, self, "--serve", side.c_str(), t.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = fdopen(in[1], "w");
    from_ = fdopen(out[0], "r");
  }
  ~Server() {
    resume();
    if (to_) std::fclose(to_);  // the child sees end of input and exits
    if (from_) std::fclose(from_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }

  // Hands the side group `g`; it waits for its first turn. False when the
  // child died.
  bool start(size_t g) {
    done_ = false;
    return send(std::to_string(g)) && read_until_turn(nullptr);
  }
  // Gives the side one turn: it runs until its next turn or the group's end
  // (then done() is true and `results` holds the group's results).
  bool step(std::map<std::string, BenchResult>& results) {
    return send("go") && read_until_turn(&results);
  }
  bool done() const { return done_; }
  // Stops the side, all its threads (idle BLAS or OpenMP threads may spin
  // for a while after a job), so that it costs the other side nothing.
  void pause() {
    if (pid_ <= 0 || kill(pid_, SIGSTOP) != 0) return;
    int status;
    waitpid(pid_, &status, WUNTRACED);  // until it has stopped
  }
  void resume() {
    if (pid_ > 0) kill(pid_, SIGCONT);
  }

 private:
  bool send(const std::string& line) {
    return to_ && std::fprintf(to_, "%s\n", line.c_str()) >= 0 && std::fflush(to_) == 0;
  }
  bool read_until_turn(std::map<std::string, BenchResult>* results) {
    char line[512];
    while (from_ && std::fgets(line, sizeof line, from_)) {
      if (std::strcmp(line, "turn\n") == 0) return true;
      if (std::strcmp(line, "end\n") == 0) return done_ = true;
      std::istringstream is(line);
      BenchResult r;
      if (results && is >> r.name >> r.seconds >> r.bytes >> r.items) (*results)[r.name] = r;
    }
    return false;
  }

  pid_t pid_ = -1;
  bool done_ = false;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

struct Rounds {
  std::vector<BenchResult> brasa, anchor;  // one per round
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

const BenchResult& fastest(const std::vector<BenchResult>& v) {
  return *std::min_element(v.begin(), v.end(),
                           [](auto& a, auto& b) { return a.seconds < b.seconds; });
}

void report(const std::map<std::string, Rounds>& metrics, const std::string& anchor, int threads) {
  for (const auto& [name, m] : metrics) {
    const BenchResult &b = fastest(m.brasa), &l = fastest(m.anchor);
    std::printf("%-32s threads=%d  brasa %10.3f us  %s %10.3f us", name.c_str(), threads,
                b.seconds * 1e6, anchor.c_str(), l.seconds * 1e6);
    if (b.bytes > 0)
      std::printf("  brasa %6.2f GB/s  %s %6.2f GB/s", b.bytes / b.seconds / 1e9, anchor.c_str(),
                  l.bytes / l.seconds / 1e9);
    if (b.items > 0)
      std::printf("  brasa %8.0f samples/s  %s %8.0f samples/s", b.items / b.seconds,
                  anchor.c_str(), l.items / l.seconds);
    std::printf("\n");
  }
  for (const auto& [name, m] : metrics) {
    std::vector<double> paired;
    for (size_t r = 0; r < m.brasa.size(); ++r)
      paired.push_back(m.brasa[r].seconds / m.anchor[r].seconds);
    const auto [lo, hi] = std::minmax_element(paired.begin(), paired.end());
    std::printf(
        "ratio %s threads=%d brasa/%s time = %.3f (median of %zu paired rounds, range %.3f-%.3f)\n",
        name.c_str(), threads, anchor.c_str(), median(paired), paired.size(), *lo, *hi);
  }
  // Brasa's bandwidth as a fraction of the machine's, measured by the same
  // process in the same round: STREAM scale with streaming stores (the bytes
  // that move) and as stream.c measures it, with ordinary stores (each
  // written line is also read first, which STREAM does not count).
  const std::pair<const char*, const char*> yardsticks[] = {
      {"stream_scale_16M", "STREAM scale, streaming stores"},
      {"stream_scale_plain_16M", "STREAM scale, ordinary stores as stream.c"}};
  for (const auto& [stick, label] : yardsticks) {
    const auto stream = metrics.find(stick);
    if (stream == metrics.end()) continue;
    for (const auto& [name, m] : metrics) {
      if (name.rfind("stream_scale", 0) == 0 || m.brasa[0].bytes <= 0) continue;
      std::vector<double> fraction;
      for (size_t r = 0; r < m.brasa.size(); ++r)
        fraction.push_back(stream->second.brasa[r].seconds / stream->second.brasa[r].bytes *
                           m.brasa[r].bytes / m.brasa[r].seconds);
      std::printf("bandwidth %s threads=%d brasa = %.2f of %s (median of %zu rounds)\n",
                  name.c_str(), threads, median(fraction), label, fraction.size());
    }
  }
}

// Runs group `g` on both sides, which take turns repetition by repetition;
// `first` starts. False when a side died.
bool run_group(size_t g, Server& first, Server& second,
               std::map<std::string, BenchResult>& first_results,
               std::map<std::string, BenchResult>& second_results) {
  if (!first.start(g) || !second.start(g)) return false;
  Server* sides[2] = {&first, &second};
  std::map<std::string, BenchResult>* results[2] = {&first_results, &second_results};
  second.pause();
  bool ok = true;
  for (int h = 0; ok && (!first.done() || !second.done());) {
    ok = sides[h]->step(*results[h]);
    if (ok && !sides[1 - h]->done()) {
      sides[h]->pause();
      sides[1 - h]->resume();
      h = 1 - h;
    }
  }
  first.resume();
  second.resume();
  return ok;
}

}  // namespace

// STREAM's "scale" on one part of the arrays, with AVX stores (the build is
// for any x86-64; the benchmark machines all have AVX2).
__attribute__((target("avx2"))) static void stream_scale_part(float* b, const float* a,
                                                              int64_t begin, int64_t end,
                                                              bool streaming) {
  int64_t i = begin;
  for (; i < end && reinterpret_cast<uintptr_t>(b + i) % 32 != 0; ++i) b[i] = 3.0f * a[i];
  const __m256 three = _mm256_set1_ps(3.0f);
  if (streaming)
    for (; i + 8 <= end; i += 8)
      _mm256_stream_ps(b + i, _mm256_mul_ps(three, _mm256_loadu_ps(a + i)));
  else
    for (; i + 8 <= end; i += 8)
      _mm256_store_ps(b + i, _mm256_mul_ps(three, _mm256_loadu_ps(a + i)));
  for (; i < end; ++i) b[i] = 3.0f * a[i];
  _mm_sfence();
}

void stream_scale_kernel(float* b, const float* a, int64_t n, int threads, bool streaming) {
  std::vector<std::thread> helpers;
  const int64_t per = (n / threads + 15) / 16 * 16;
  for (int t = 1; t < threads; ++t)
    helpers.emplace_back(stream_scale_part, b, a, std::min(n, t * per), std::min(n, (t + 1) * per),
                         streaming);
  stream_scale_part(b, a, 0, std::min(n, per), streaming);
  for (auto& h : helpers) h.join();
}

void bench_turn() {
  if (!g_serving) return;
  std::printf("turn\n");
  std::fflush(stdout);
  char line[16];
  if (!std::fgets(line, sizeof line, stdin)) std::exit(0);  // the driver is gone
}

int main(int argc, char** argv) {
  try {  // the internal modes
    if (argc >= 5 && std::strcmp(argv[1], "--side") == 0)
      return run_side(argv[2],
                      static_cast<int>(brasa::cli::parse_int("--threads", argv[4], 1, 1024)),
                      std::vector<std::string>(argv + 5, argv + argc));
    if (argc == 4 && std::strcmp(argv[1], "--serve") == 0)
      return serve(argv[2], static_cast<int>(brasa::cli::parse_int("--serve", argv[3], 1, 1024)));
  } catch (const brasa::cli::UsageError& e) {
    std::fprintf(stderr, "ops_bench: %s\n", e.what());
    return 2;
  }
  int one_thread_count = 0, rounds = 5;
  std::string anchor = "libtorch", only_list, malloc_mode = "pinned";
  brasa::cli::Parser(
      "ops_bench",
      "Runs every benchmark group on Brasa and on libtorch 1.13 at 1 and 2 threads and prints\n"
      "`ratio` lines (time brasa/libtorch; < 1: Brasa faster). `--anchor brasa` measures Brasa\n"
      "against itself, which shows the noise of a paired ratio. Internal modes: --side SIDE\n"
      "--threads N [GROUP...] prints one side's raw results; --serve SIDE N serves the driver.")
      .positional("THREADS", &one_thread_count, 1, 1024, "one thread count instead of 1 and 2")
      .option("--rounds", &rounds, 1, 1000, "rounds per group (default 5)")
      .option("--anchor", &anchor, "what Brasa is measured against (default libtorch)",
              {"libtorch", "brasa"})
      .option("--only", &only_list, "comma-separated groups to run (default all)")
      .metavar("GROUP[,GROUP...]")
      .option("--malloc", &malloc_mode,
              "glibc malloc of both sides: mmap and trim thresholds pinned at 1 GiB (default), or "
              "glibc's dynamic defaults",
              {"pinned", "dynamic"})
      .parse_or_exit(argc, argv);
  std::vector<int> threads = {1, 2};
  if (one_thread_count > 0) threads = {one_thread_count};
  std::vector<std::string> only;
  std::stringstream names(only_list);
  for (std::string n; std::getline(names, n, ',');) only.push_back(n);
  const std::vector<BenchGroup> groups = brasa_side().groups;  // the same list on both sides
  std::vector<size_t> chosen;
  for (size_t g = 0; g < groups.size(); ++g)
    if (only.empty() || std::find(only.begin(), only.end(), groups[g].name) != only.end())
      chosen.push_back(g);
  if (chosen.size() != (only.empty() ? groups.size() : only.size())) {
    std::fprintf(stderr, "ops_bench: unknown group in --only; the groups are:");
    for (auto& g : groups) std::fprintf(stderr, " %s", g.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) return 1;
  std::signal(SIGPIPE, SIG_IGN);  // a dead child is reported, not fatal
  for (int t : threads) {
    const bool pin = malloc_mode == "pinned";
    Server brasa(self, "brasa", t, pin), other(self, anchor, t, pin);
    std::map<std::string, Rounds> metrics;
    for (int r = 0; r < rounds; ++r) {
      for (size_t k = 0; k < chosen.size(); ++k) {
        std::map<std::string, BenchResult> b, l;
        // Alternate which side goes first.
        const bool ok = (r + k) % 2 == 0 ? run_group(chosen[k], brasa, other, b, l)
                                         : run_group(chosen[k], other, brasa, l, b);
        if (!ok) {
          std::fprintf(stderr, "ops_bench: a side died in group %s\n", groups[chosen[k]].name);
          return 1;
        }
        for (auto& [name, result] : b)
          if (l.count(name))
            metrics[name].brasa.push_back(result), metrics[name].anchor.push_back(l[name]);
      }
    }
    report(metrics, anchor, t);
    std::fflush(stdout);
  }
  return 0;
}
