// DataLoader process workers: PyTorch's DataLoader test properties — order,
// seeds, worker_init_fn, dead workers, exceptions, timeout, early break and
// persistent workers — with real forked workers.

#include <brasa/torch.h>
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <thread>

#include "../core/test_util.h"
#include "mp_test_util.h"

namespace {

using namespace brasa;
using brasa::testing::values;

Tensor all_batches(data::DataLoaderOptions options, bool shuffle, int64_t n = 50) {
  Tensor x = arange(n, TensorOptions().dtype(kFloat)).view({n, 1});
  Tensor y = arange(n, TensorOptions().dtype(kLong));
  data::TensorDataset ds(x, y);
  std::vector<Tensor> parts;
  manual_seed(3);
  if (shuffle) {
    auto loader = data::make_data_loader<data::samplers::RandomSampler>(ds, options);
    for (auto& b : *loader) parts.push_back(b.data.flatten() * 1000 + b.target.to(kFloat));
  } else {
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(ds, options);
    for (auto& b : *loader) parts.push_back(b.data.flatten() * 1000 + b.target.to(kFloat));
  }
  return cat(parts);
}

int children_of_this_process() {
  int n = 0;
  const std::string me = std::to_string(getpid());
  DIR* d = opendir("/proc");
  while (dirent* e = readdir(d)) {
    std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
    std::string pid, comm, state, ppid;
    if (stat >> pid >> comm >> state >> ppid && ppid == me) ++n;
  }
  closedir(d);
  return n;
}

TEST(DataLoaderProcessWorkers, SameBatchesInTheSameOrderAsZeroWorkers) {
  for (bool shuffle : {false, true}) {
    Tensor reference = all_batches(data::DataLoaderOptions(4), shuffle);
    for (int workers : {1, 2, 4}) {
      Tensor got = all_batches(
          data::DataLoaderOptions(4).workers(workers).process_workers(true).prefetch_factor(2),
          shuffle);
      EXPECT_TRUE(got.equal(reference)) << workers << " workers, shuffle " << shuffle;
    }
  }
  EXPECT_EQ(children_of_this_process(), 0);
}

// Each example reports the worker that made it, its seed, a random draw and
// what worker_init_fn drew.
struct Probe : data::datasets::Dataset<Probe> {
  data::Example<> get(size_t i) override {
    auto info = data::get_worker_info();
    const double id = info ? static_cast<double>(info->id) : -1;
    const double seed = info ? static_cast<double>(info->seed % 1000003) : -1;
    const double draw = rand({1}).item<double>();
    return {tensor({id, seed, draw, init_draw, static_cast<double>(count++)}),
            full({}, static_cast<double>(i), TensorOptions().dtype(kLong))};
  }
  std::optional<size_t> size() const override { return 16; }
  static inline double init_draw = -1;
  int64_t count = 0;
};

TEST(DataLoaderProcessWorkers, SeedsAreDistinctReproducibleAndSeenByWorkerInitFn) {
  auto run = [] {
    manual_seed(11);
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        Probe(), data::DataLoaderOptions(2).workers(2).process_workers(true).worker_init_fn(
                     [](int64_t) { Probe::init_draw = rand({1}).item<double>(); }));
    std::vector<Tensor> rows;
    for (auto& b : *loader) rows.push_back(b.data);
    return cat(rows);
  };
  Tensor a = run(), b = run();
  EXPECT_TRUE(a.equal(b));  // reproducible under manual_seed
  // Batch i came from worker i % 2, with seed base + worker.
  for (int64_t r = 0; r < a.size(0); ++r) EXPECT_EQ(a[r][0].item<double>(), (r / 2) % 2);
  const double seed0 = a[0][1].item<double>(), seed1 = a[2][1].item<double>();
  EXPECT_NE(seed0, seed1);
  EXPECT_NE(a[0][2].item<double>(), a[2][2].item<double>());  // different streams
  // worker_init_fn ran after seeding: its draw is the first of the seeded stream.
  auto info_seed = [&](int w) {
    manual_seed(11);
    return data::detail::draw_worker_seed() + static_cast<uint64_t>(w);
  };
  for (int w = 0; w < 2; ++w) {
    manual_seed(info_seed(w));
    EXPECT_FLOAT_EQ(static_cast<float>(a[2 * w][3].item<double>()), rand({1}).item<float>()) << w;
  }
  EXPECT_FALSE(data::get_worker_info().has_value());  // not in a worker
}

TEST(DataLoaderProcessWorkers, PersistentWorkersKeepTheirDatasetState) {
  auto counts = [](bool persistent) {
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        Probe(),
        data::DataLoaderOptions(4).workers(1).process_workers(true).persistent_workers(persistent));
    std::vector<double> out;
    for (int epoch = 0; epoch < 2; ++epoch)
      for (auto& b : *loader) out.push_back(b.data[0][4].item<double>());
    return out;
  };
  EXPECT_EQ(counts(true), (std::vector<double>{0, 4, 8, 12, 16, 20, 24, 28}));
  EXPECT_EQ(counts(false), (std::vector<double>{0, 4, 8, 12, 0, 4, 8, 12}));
  EXPECT_EQ(children_of_this_process(), 0);
}

struct Failing : data::datasets::Dataset<Failing> {
  explicit Failing(int how) : how(how) {}
  data::Example<> get(size_t i) override {
    if (i == 9 && data::get_worker_info()) {
      if (how == 0) kill(getpid(), SIGKILL);
      if (how == 1) raise(SIGSEGV);
      if (how == 2) throw std::runtime_error("bad sample 9");
      if (how == 3) std::this_thread::sleep_for(std::chrono::seconds(5));
    }
    return {full({1}, static_cast<double>(i)), full({}, 0.0, TensorOptions().dtype(kLong))};
  }
  std::optional<size_t> size() const override { return 40; }
  int how;
};

void expect_failure(int how, const std::string& needle, data::DataLoaderOptions options) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(Failing(how), options);
    for (auto& b : *loader) (void)b;
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.5);
  EXPECT_EQ(children_of_this_process(), 0);
}

TEST(DataLoaderProcessWorkers, ADeadWorkerAnExceptionOrATimeoutIsAnErrorNotAHang) {
  auto options = data::DataLoaderOptions(2).workers(2).process_workers(true);
  expect_failure(0, "is killed by signal: Killed", options);
  expect_failure(1, "is killed by signal: Segmentation fault", options);
  expect_failure(2, "bad sample 9", options);
  expect_failure(3, "DataLoader timed out after 300 ms",
                 options.timeout(std::chrono::milliseconds(300)));
}

TEST(DataLoaderProcessWorkers, BreakingOutOfAnEpochLeavesNoProcessBehind) {
  Tensor x = arange(400, TensorOptions().dtype(kFloat)).view({400, 1});
  data::TensorDataset ds(x, arange(400, TensorOptions().dtype(kLong)));
  {
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        ds, data::DataLoaderOptions(4).workers(2).process_workers(true));
    for (int epoch = 0; epoch < 3; ++epoch) {
      int seen = 0;
      for (auto& b : *loader) {
        EXPECT_EQ(b.data[0].item<double>(), 4.0 * seen);
        if (++seen == 3) break;
      }
    }
    EXPECT_GT(children_of_this_process(), 0);
  }
  EXPECT_EQ(children_of_this_process(), 0);
}

}  // namespace

namespace {

// Batches come in buffers the workers reuse: a batch the consumer still
// holds is never overwritten (beyond the pool, one-off buffers take over),
// and in steady state no descriptor and no new buffer is needed per batch.
TEST(DataLoaderProcessWorkers, BuffersAreReusedButNeverWhileHeld) {
  const int64_t n = 200;
  Tensor x = arange(n * 3, TensorOptions().dtype(kFloat)).view({n, 3});
  Tensor y = arange(n, TensorOptions().dtype(kLong));
  data::TensorDataset ds(x, y);
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      ds, data::DataLoaderOptions(2).workers(2).process_workers(true).persistent_workers(true));
  // Every batch of an epoch held at once: 50 per worker, more than its pool.
  std::vector<data::Example<>> held;
  for (auto& b : *loader) held.push_back(b);
  ASSERT_EQ(held.size(), 100u);
  for (size_t i = 0; i < held.size(); ++i) {
    ASSERT_TRUE(held[i].data.equal(x.slice(0, 2 * i, 2 * i + 2))) << "batch " << i;
    ASSERT_TRUE(held[i].target.equal(y.slice(0, 2 * i, 2 * i + 2))) << "batch " << i;
  }
  held.clear();
  // Steady state: batches dropped as they are used come back in a few buffers.
  for (auto& b : *loader) (void)b;
  const int fds = brasa::testing::open_fds();
  std::set<const void*> buffers;
  int64_t i = 0;
  for (auto& b : *loader) {
    buffers.insert(b.target.data_ptr());
    EXPECT_TRUE(b.data.equal(x.slice(0, 2 * i, 2 * i + 2)));
    ++i;
  }
  EXPECT_EQ(i, 100);
  EXPECT_LE(buffers.size(), 8u);
  EXPECT_EQ(brasa::testing::open_fds(), fds);
}

}  // namespace
