#include <brasa/torch.h>
#include <unistd.h>

#include <cstdio>
#include <limits>

#include "../test_util.h"

using namespace brasa;

TEST(Factory, ZerosOnesFullEye) {
  EXPECT_VALUES(zeros({2, 2}), {0, 0, 0, 0});
  EXPECT_VALUES(ones({3}, kInt), {1, 1, 1});
  EXPECT_EQ(ones({3}, kInt).dtype(), kInt);
  EXPECT_VALUES(full({2}, 3.5), {3.5, 3.5});
  EXPECT_EQ(full({2}, 3).dtype(), kLong);
  EXPECT_EQ(full({2}, true).dtype(), kBool);
  EXPECT_EQ(full({2}, 2.5).dtype(), kFloat);
  EXPECT_VALUES(eye(2, 3), {1, 0, 0, 0, 1, 0});
  EXPECT_VALUES(eye(2, kLong), {1, 0, 0, 1});
  EXPECT_EQ(empty({0, 3}).numel(), 0);
  EXPECT_EQ(zeros({}).dim(), 0);
  EXPECT_EQ(zeros({}).numel(), 1);
}

TEST(Factory, ArangeLinspaceLogspace) {
  EXPECT_VALUES(arange(5), {0, 1, 2, 3, 4});
  EXPECT_EQ(arange(5).dtype(), kLong);
  EXPECT_VALUES(arange(1, 10, 3), {1, 4, 7});
  EXPECT_VALUES(arange(5, 0, -2), {5, 3, 1});
  EXPECT_EQ(arange(0.0, 1.0, 0.25).dtype(), kFloat);
  EXPECT_VALUES(arange(0.0, 1.0, 0.25), {0, 0.25, 0.5, 0.75});
  EXPECT_EQ(arange(0, 0).numel(), 0);
  EXPECT_CLOSE(linspace(0, 1, 5), std::vector<double>({0, 0.25, 0.5, 0.75, 1}), 1e-7);
  EXPECT_CLOSE(linspace(-1, 1, 2), std::vector<double>({-1, 1}), 0);
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  EXPECT_CLOSE(logspace(0, 2, 3), std::vector<double>({1, 10, 100}), 1e-4);
}

TEST(Factory, TensorFromNestedLists) {
  auto a = tensor({{1, 2, 3}, {4, 5, 6}});
  EXPECT_SHAPE(a, {2, 3});
  EXPECT_EQ(a.dtype(), kLong);
  EXPECT_VALUES(a, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(tensor({1.0, 2.0}).dtype(), kFloat);
  EXPECT_EQ(tensor({1, 2}, kDouble).dtype(), kDouble);
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  auto s = tensor(3.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 3.5f);
  std::vector<float> v{1, 2, 3};
  EXPECT_VALUES(tensor(v), {1, 2, 3});
  auto d3 = tensor({{{1}, {2}}, {{3}, {4}}});
  EXPECT_SHAPE(d3, {2, 2, 1});
  EXPECT_THROW(tensor({{1, 2}, {3}}), Error);
}

TEST(Factory, FromBlobIsZeroCopyAndRunsDeleter) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  auto t = from_blob(data, {2, 3});
  EXPECT_EQ(t.data_ptr<float>(), data);
  data[4] = 50;
  EXPECT_EQ(t.index({1, 1}).item<float>(), 50.0f);
  t.index_put_({0, 0}, 10);
  EXPECT_EQ(data[0], 10.0f);
  auto st = from_blob(data, {3}, {2});
  EXPECT_VALUES(st, {10, 3, 50});
  int deleted = 0;
  {
    auto* heap = new double[2]{7, 8};
    auto owned = from_blob(
        heap, {2},
        [&](void* p) {
          delete[] static_cast<double*>(p);
          ++deleted;
        },
        kDouble);
    auto view = owned.view({1, 2});
    owned.reset();
    EXPECT_EQ(deleted, 0);
    EXPECT_VALUES(view, {7, 8});
  }
  EXPECT_EQ(deleted, 1);
}

TEST(Factory, LikeFunctionsKeepShapeAndDtype) {
  auto t = zeros({2, 3}, kInt);
  EXPECT_EQ(ones_like(t).dtype(), kInt);
  EXPECT_SHAPE(empty_like(t), {2, 3});
  EXPECT_VALUES(full_like(t, 7), {7, 7, 7, 7, 7, 7});
  EXPECT_EQ(zeros_like(t, kFloat).dtype(), kFloat);
}

// As libtorch: a vector's integers keep their C++ type's dtype, floating
// values take the default dtype, options override both; the values are
// copied (the vector may go away).
TEST(Factory, TensorFromVectorsKeepsLibtorchsDtypes) {
  std::vector<int> ints{3, -1, 7};
  std::vector<int64_t> longs{1LL << 40, -2};
  std::vector<uint8_t> bytes{0, 255};
  std::vector<int16_t> shorts{-300, 2};
  std::vector<double> doubles{0.5, 1e-3};
  EXPECT_EQ(tensor(ints).dtype(), kInt);
  EXPECT_EQ(tensor(longs).dtype(), kLong);
  EXPECT_EQ(tensor(bytes).dtype(), kByte);
  EXPECT_EQ(tensor(shorts).dtype(), kShort);
  EXPECT_EQ(tensor(doubles).dtype(), kFloat);
  EXPECT_EQ(tensor(ints, kFloat).dtype(), kFloat);
  EXPECT_VALUES(tensor(ints), {3, -1, 7});
  EXPECT_EQ(tensor(longs)[0].item<int64_t>(), 1LL << 40);
  EXPECT_VALUES(tensor(bytes), {0, 255});
  EXPECT_VALUES(tensor(shorts, kDouble), {-300, 2});
  EXPECT_CLOSE(tensor(doubles), doubles, 1e-9);
  EXPECT_EQ(tensor(doubles, kDouble)[1].item<double>(), 1e-3);
  EXPECT_EQ(tensor(std::vector<float>{}).numel(), 0);
  std::vector<bool> flags{true, false};
  EXPECT_EQ(tensor(flags).dtype(), kBool);
  set_default_dtype(kDouble);
  EXPECT_EQ(tensor(std::vector<float>{1.5f}).dtype(), kDouble);
  set_default_dtype(kFloat);
}

TEST(Factory, DefaultDtypeCanChange) {
  set_default_dtype(kDouble);
  EXPECT_EQ(zeros({1}).dtype(), kDouble);
  EXPECT_EQ(tensor({1.5}).dtype(), kDouble);
  set_default_dtype(kFloat);
  EXPECT_EQ(zeros({1}).dtype(), kFloat);
  EXPECT_THROW(set_default_dtype(kInt), Error);
}

// Sizes whose element or byte counts overflow int64 are refused: wrapped,
// they would make a small allocation that claims to be huge.
TEST(Factory, SizesThatOverflowAreRefused) {
  EXPECT_ERROR("empty: a tensor of size [4611686018427387904] and dtype Float needs more than",
               zeros({int64_t{1} << 62}));
  EXPECT_ERROR("numel: integer multiplication overflow: size [1099511627776, 1099511627776]",
               empty({int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_ERROR("numel: integer multiplication overflow",
               ones({1}).expand({int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_ERROR("empty_strided: size [4611686018427387904, 4] with stride [4, 1] spans more bytes",
               empty_strided({int64_t{1} << 62, 4}, {4, 1}));
  EXPECT_EQ(zeros({int64_t{1} << 20, 0}).numel(), 0);  // large but empty is fine
  // Empty, with other sizes whose product overflows: strides saturate.
  Tensor e = empty({0, int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.stride(2), 1);
  EXPECT_EQ(e.stride(1), int64_t{1} << 40);
  EXPECT_EQ(e.stride(0), std::numeric_limits<int64_t>::max());
}

namespace {

// torch::from_file (ops/from_file.h): a private copy or the file itself.
TEST(FromFile, ReadsAndSharesTheFile) {
  using namespace brasa;
  const std::string path = ::testing::TempDir() + "brasa_from_file_" + std::to_string(getpid());
  {
    std::vector<float> values{1.5f, -2.0f, 3.25f, 4.0f};
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(values.data(), sizeof(float), values.size(), f);
    std::fclose(f);
  }
  Tensor copy = torch::from_file(path, false, 3, torch::kFloat);
  EXPECT_TRUE(copy.equal(torch::tensor({1.5f, -2.0f, 3.25f})));
  copy.fill_(0);  // a private mapping: the file keeps its bytes
  Tensor shared = torch::from_file(path, true, 4, torch::kFloat);
  EXPECT_TRUE(shared.equal(torch::tensor({1.5f, -2.0f, 3.25f, 4.0f})));
  shared[1] = 7.0f;  // a shared mapping writes through
  EXPECT_EQ(torch::from_file(path, false, 4, torch::kFloat)[1].item<float>(), 7.0f);
  EXPECT_EQ(torch::from_file(path, std::nullopt, 0, torch::kFloat).numel(), 0);
  EXPECT_ERROR("holds 16 bytes, fewer than the 40 of 5 elements of Double",
               torch::from_file(path, false, 5, torch::kDouble));
  EXPECT_ERROR("from_file: cannot open", torch::from_file(path + ".missing", false, 1));
  EXPECT_ERROR("from_file: size must be non-negative, got -1", torch::from_file(path, false, -1));
  std::remove(path.c_str());
}

}  // namespace
