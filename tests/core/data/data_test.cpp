// Data pipeline: IDX reading (plain and gzip), errors naming the file,
// samplers covering every index once, loader batching.
#include <brasa/torch.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "../test_util.h"

namespace brasa {
namespace {

namespace fs = std::filesystem;

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

void write_plain(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}
void write_gz(const fs::path& p, const std::string& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / ("brasa_data_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

// Three 2x2 images and their labels.
std::string images() {
  return be32(2051) + be32(3) + be32(2) + be32(2) +
         std::string("\x00\xff\x10\x20\x01\x02\x03\x04\x05\x06\x07\x08", 12);
}
std::string labels() { return be32(2049) + be32(3) + std::string("\x07\x00\x09", 3); }

TEST(Data, MnistReadsPlainAndGzipIdx) {
  TempDir d;
  write_gz(d.path / "train-images-idx3-ubyte.gz", images());
  write_plain(d.path / "train-labels-idx1-ubyte", labels());
  data::datasets::MNIST ds(d.path.string());
  EXPECT_EQ(ds.size(), 3);
  EXPECT_SHAPE(ds.images(), {3, 1, 2, 2});
  EXPECT_VALUES(ds.targets(), {7, 0, 9});
  EXPECT_NEAR(ds.images()[0][0][0][1].item<double>(), 1.0, 1e-7);
  EXPECT_NEAR(ds.images()[0][0][1][0].item<double>(), 16.0 / 255, 1e-7);
  auto ex = ds.get(2);
  EXPECT_EQ(ex.target.item<int64_t>(), 9);
}

TEST(Data, MnistErrorsNameTheFileAndTheProblem) {
  TempDir d;
  auto expect_error = [&](const std::string& needle) {
    try {
      data::datasets::MNIST ds(d.path.string());
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("train-images-idx3-ubyte");  // missing
  write_plain(d.path / "train-images-idx3-ubyte", images().substr(0, 20));
  write_plain(d.path / "train-labels-idx1-ubyte", labels());
  expect_error("is truncated");
  write_plain(d.path / "train-images-idx3-ubyte", be32(1234) + images().substr(4));
  expect_error("bad magic number 1234");
  // Counts whose product overflows 64 bits (found by tests/fuzz).
  write_plain(d.path / "train-images-idx3-ubyte",
              be32(2051) + be32(0xffffffff) + be32(0xffffffff) + be32(0xffffffff));
  expect_error("(more than 2^63 bytes) but the file has 16 bytes");
  // A cut gzip stream: zlib's own words, read before the file is closed
  // (they live in the gzFile; afterwards they were freed memory).
  fs::remove(d.path / "train-images-idx3-ubyte");
  const fs::path gz = d.path / "train-images-idx3-ubyte.gz";
  write_gz(gz, images() + std::string(4000, '\x5a'));
  fs::resize_file(gz, fs::file_size(gz) - 6);
  expect_error("train-images-idx3-ubyte.gz' is corrupt: " + gz.string() +
               ": unexpected end of file");
}

TEST(Data, SamplersCoverEveryIndexOncePerEpochAndLoaderBatches) {
  manual_seed(5);
  data::samplers::RandomSampler rs(10);
  std::multiset<int64_t> seen;
  for (auto b = rs.next(4); !b.empty(); b = rs.next(4)) seen.insert(b.begin(), b.end());
  EXPECT_EQ(seen.size(), 10u);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(seen.count(i), 1u);

  Tensor x = arange(10, TensorOptions().dtype(kFloat)).view({10, 1}), y = arange(10);
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      data::TensorDataset(x, y), data::DataLoaderOptions(4));
  std::vector<int64_t> sizes;
  std::vector<double> firsts;
  for (auto& batch : *loader) {
    sizes.push_back(batch.data.size(0));
    firsts.push_back(batch.target[0].item<double>());
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(firsts, (std::vector<double>{0, 4, 8}));
  auto dropping = data::make_data_loader<data::samplers::RandomSampler>(
      data::TensorDataset(x, y), data::DataLoaderOptions(4).drop_last(true));
  int batches = 0;
  for (auto& batch : *dropping) batches += batch.data.size(0) == 4;
  EXPECT_EQ(batches, 2);
  EXPECT_THROW(data::TensorDataset(x, arange(3)), Error);
}

// A dataset written as for libtorch: get(index) and size() only.
struct Squares : data::datasets::Dataset<Squares> {
  explicit Squares(size_t n) : n(n) {}
  data::Example<> get(size_t i) override {
    double v = static_cast<double>(i);
    return {tensor({v, v * v}),
            scalar_tensor(static_cast<int64_t>(i) % 3, TensorOptions().dtype(kLong))};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n;
};
struct Unsized : data::datasets::Dataset<Unsized> {
  data::Example<> get(size_t) override { return {zeros({1}), zeros({})}; }
  std::optional<size_t> size() const override { return std::nullopt; }
};

TEST(Data, UserDatasetsWithGetAndSizeStackMapAndLoad) {
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      Squares(7)
          .map(data::transforms::Stack<>())
          .map(data::transforms::TensorLambda<>([](Tensor t) { return t + 1; })),
      data::DataLoaderOptions(3).workers(2));
  std::vector<double> firsts, squares;
  std::vector<int64_t> sizes;
  for (auto& batch : *loader) {
    sizes.push_back(batch.data.size(0));
    EXPECT_EQ(batch.target.dtype(), kLong);
    firsts.push_back(batch.data[0][0].item<double>());
    for (int64_t r = 0; r < batch.data.size(0); ++r)
      squares.push_back(batch.data[r][1].item<double>());
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 1}));
  EXPECT_EQ(firsts, (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(squares, (std::vector<double>{1, 2, 5, 10, 17, 26, 37}));
  Squares direct(4);
  auto batch = direct.get_batch({3, 1});
  EXPECT_SHAPE(batch.data, {2, 2});
  EXPECT_VALUES(batch.target, {0, 1});
  EXPECT_ERROR("only sized datasets can be loaded",
               data::make_data_loader(Unsized(), data::DataLoaderOptions(2)));
}

TEST(Data, DistributedSamplersSplitEveryEpochExactlyOnce) {
  for (bool shuffle : {false, true}) {
    std::multiset<int64_t> all;
    std::vector<std::vector<int64_t>> per_rank(3);
    for (int64_t r = 0; r < 3; ++r) {
      std::unique_ptr<data::samplers::Sampler> s;
      if (shuffle)
        s = std::make_unique<data::samplers::DistributedRandomSampler>(10, 3, r,
                                                                       /*allow_duplicates=*/false);
      else
        s = std::make_unique<data::samplers::DistributedSequentialSampler>(10, 3, r, false);
      for (auto b = s->next(2); !b.empty(); b = s->next(2))
        per_rank[r].insert(per_rank[r].end(), b.begin(), b.end());
      all.insert(per_rank[r].begin(), per_rank[r].end());
      EXPECT_EQ(per_rank[r].size(), 3u);  // 10 / 3 without duplicates
    }
    EXPECT_EQ(all.size(), 9u);
    for (int64_t i : all) EXPECT_EQ(all.count(i), 1u) << "index " << i << " seen twice";
  }
  // With duplicates: padded to 12, every index at least once.
  std::set<int64_t> seen;
  for (int64_t r = 0; r < 3; ++r) {
    data::samplers::DistributedRandomSampler s(10, 3, r);
    for (auto b = s.next(10); !b.empty(); b = s.next(10)) seen.insert(b.begin(), b.end());
  }
  EXPECT_EQ(seen.size(), 10u);
  // set_epoch reshuffles, identically on every replica.
  data::samplers::DistributedRandomSampler a(100, 2, 0), b(100, 2, 0);
  auto first = a.next(50);
  a.set_epoch(1);
  a.reset();
  b.set_epoch(1);
  b.reset();
  auto second = a.next(50);
  EXPECT_NE(first, second);
  EXPECT_EQ(second, b.next(50));
}

TEST(Data, ThreadWorkersKeepOrderAndReportErrors) {
  Tensor x = arange(100, TensorOptions().dtype(kFloat)).view({100, 1}), y = arange(100);
  auto serial = data::make_data_loader<data::samplers::SequentialSampler>(
      data::TensorDataset(x, y), data::DataLoaderOptions(7));
  auto threaded = data::make_data_loader<data::samplers::SequentialSampler>(
      data::TensorDataset(x, y), data::DataLoaderOptions(7).workers(3).prefetch_factor(2));
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<double> a, b;
    for (auto& batch : *serial) a.push_back(batch.target.sum().item<double>());
    for (auto& batch : *threaded) b.push_back(batch.target.sum().item<double>());
    EXPECT_EQ(a, b);
    EXPECT_EQ(b.size(), 15u);
  }
  // Leaving an epoch early joins the workers cleanly.
  for (auto& batch : *threaded) {
    (void)batch;
    break;
  }
  struct Failing {
    int64_t size() const { return 10; }
    data::Example<> get_batch(const std::vector<int64_t>& idx) const {
      BRASA_CHECK(idx[0] < 5, "dataset: sample ", idx[0], " is unreadable");
      return {zeros({1}), zeros({1})};
    }
  };
  auto failing = data::make_data_loader<data::samplers::SequentialSampler>(
      Failing{}, data::DataLoaderOptions(1).workers(2));
  try {
    for (auto& batch : *failing) (void)batch;
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sample 5 is unreadable"), std::string::npos) << e.what();
  }
  // Errors arrive in batch order after the good batches, and iterating on
  // after one moves to the next batch (each failing one raises its own).
  std::vector<std::string> seen;
  auto it = failing->begin();
  for (int64_t b = 0; b < 10; ++b) {
    try {
      if (b > 0) ++it;
      seen.push_back("ok");
    } catch (const Error& e) {
      seen.push_back(std::string(e.what()).substr(0, 27));
    }
  }
  EXPECT_EQ(seen[4], "ok");
  EXPECT_EQ(seen[5], "dataset: sample 5 is unread");
  EXPECT_EQ(seen[9], "dataset: sample 9 is unread");
}

TEST(Data, MapTransformsNormalizeFlipCropLambdaStack) {
  Tensor x = arange(2 * 1 * 2 * 3, TensorOptions().dtype(kFloat)).view({2, 1, 2, 3}), y = arange(2);
  auto ds = data::TensorDataset(x, y)
                .map(data::transforms::Normalize<>(1.0, 2.0))
                .map(data::transforms::TensorLambda<>([](Tensor t) { return t * 2; }))
                .map(data::transforms::Stack<>());
  auto b = ds.get_batch({1, 0});
  EXPECT_VALUES(b.data[1].flatten(), {-1, 0, 1, 2, 3, 4});  // ((v - 1) / 2) * 2
  EXPECT_VALUES(b.target, {1, 0});
  EXPECT_VALUES(ds.get(0).data.flatten(), {-1, 0, 1, 2, 3, 4});
  Tensor rgb = ones({1, 3, 1, 1});
  auto n = data::transforms::Normalize<>({0.5, 1.0, 2.0}, {0.5, 1.0, 2.0})({rgb, y});
  EXPECT_VALUES(n.data.flatten(), {1, 0, -0.5});
  auto flipped = data::transforms::RandomHorizontalFlip(1.0)({x, y});
  EXPECT_VALUES(flipped.data[0].flatten(), {2, 1, 0, 5, 4, 3});
  manual_seed(2);
  auto crop = data::transforms::RandomCrop(2, 1)({x, y});
  EXPECT_SHAPE(crop.data, {2, 1, 2, 2});
  auto loader =
      data::make_data_loader<data::samplers::SequentialSampler>(ds, data::DataLoaderOptions(2));
  for (auto& batch : *loader) EXPECT_SHAPE(batch.data, {2, 1, 2, 3});
}

TEST(Data, TensorDatasetOfOneTensorAndPerExampleLambda) {
  // libtorch's TensorDataset(tensor): examples without targets (TensorExample).
  Tensor x = arange(12, TensorOptions().dtype(kFloat)).view({4, 3});
  torch::data::datasets::TensorDataset ds(x);
  EXPECT_EQ(ds.size().value(), 4u);
  torch::data::TensorExample one = ds.get(2);
  EXPECT_VALUES(one.data, {6, 7, 8});
  // Lambda<Example<>> runs on each example (here: a per-example reduction
  // that a whole-batch call would get wrong), then the examples are stacked.
  auto centered =
      ds.map(torch::data::transforms::Lambda<torch::data::Example<>>([](torch::data::Example<> e) {
        return torch::data::Example<>{e.data - e.data.mean(), e.data.sum()};
      }));
  auto batch = centered.get_batch({0, 3});
  EXPECT_VALUES(batch.data.flatten(), {-1, 0, 1, -1, 0, 1});
  EXPECT_VALUES(batch.target, {3, 30});
  // A TensorExample lambda over a dataset without targets.
  auto doubled = ds.map(torch::data::transforms::Lambda<torch::data::TensorExample>(
      [](torch::data::TensorExample e) { return torch::data::TensorExample(e.data * 2); }));
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      doubled.map(torch::data::transforms::Stack<torch::data::TensorExample>()),
      torch::data::DataLoaderOptions(2));
  std::vector<double> firsts;
  for (auto& b : *loader) {
    EXPECT_FALSE(b.target.defined());
    firsts.push_back(b.data[0][0].item<double>());
  }
  EXPECT_EQ(firsts, (std::vector<double>{0, 12}));
  EXPECT_ERROR(
      "TensorDataset: expected a tensor of at least one dimension (examples along dim 0), "
      "got shape []",
      torch::data::datasets::TensorDataset(torch::tensor(1.0)));
}

}  // namespace
}  // namespace brasa
