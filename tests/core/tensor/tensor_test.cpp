#include <brasa/torch.h>

#include "../test_util.h"

using namespace brasa;

TEST(ScalarType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promoteTypes(kByte, kChar), kShort);
  EXPECT_EQ(promoteTypes(kInt, kLong), kLong);
  EXPECT_EQ(promoteTypes(kBool, kInt), kInt);
  EXPECT_EQ(promoteTypes(kInt, kFloat), kFloat);
  EXPECT_EQ(promoteTypes(kHalf, kBFloat16), kFloat);
  EXPECT_EQ(promoteTypes(kHalf, kFloat), kFloat);
  EXPECT_EQ(promoteTypes(kFloat, kDouble), kDouble);
  EXPECT_EQ(promoteTypes(kLong, kHalf), kHalf);
  EXPECT_EQ(elementSize(kBFloat16), 2u);
}

TEST(ScalarType, WrappedNumbersAndZeroDimTensorsDoNotUpcast) {
  auto i32 = ones({2}, kInt);
  EXPECT_EQ((i32 + 2).dtype(), kInt);
  EXPECT_EQ((i32 + 2.5).dtype(), kFloat);
  EXPECT_EQ((ones({2}, kHalf) * 2.5).dtype(), kHalf);
  EXPECT_EQ((ones({2}, kBool) + 1).dtype(), kLong);
  // A 0-dim double tensor does not upcast a float tensor; a 1-dim one does.
  EXPECT_EQ((ones({2}) + scalar_tensor(1.0, kDouble)).dtype(), kFloat);
  EXPECT_EQ((ones({2}) + ones({1}, kDouble)).dtype(), kDouble);
  // But a 0-dim float tensor does lift an integer tensor.
  EXPECT_EQ((i32 + scalar_tensor(1.0, kDouble)).dtype(), kDouble);
}

TEST(Half, RoundTripsAndRounds) {
  EXPECT_EQ(static_cast<float>(Half(1.0f)), 1.0f);
  EXPECT_EQ(static_cast<float>(Half(-2.5f)), -2.5f);
  EXPECT_EQ(static_cast<float>(Half(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.0f))));
  EXPECT_EQ(static_cast<float>(Half(1.0f + 1.0f / 4096)), 1.0f);    // rounds to even
  EXPECT_NEAR(static_cast<float>(Half(5.96e-8f)), 5.96e-8f, 1e-9);  // subnormal
  EXPECT_EQ(Half(1.0f).x, 0x3c00);
  EXPECT_EQ(BFloat16(1.0f).x, 0x3f80);
  EXPECT_EQ(static_cast<float>(BFloat16(3.140625f)), 3.140625f);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(NAN))));
}

TEST(Tensor, MetadataAndContiguity) {
  auto t = zeros({2, 3, 4});
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_SHAPE(t, {2, 3, 4});
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.transpose(0, 2).is_contiguous());
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.element_size(), 4);
  EXPECT_EQ(t.nbytes(), 96u);
  EXPECT_EQ(t.dtype(), kFloat);
  EXPECT_TRUE(t.device().is_cpu());
  Tensor undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_THROW(undefined.dim(), Error);
}

TEST(Tensor, ViewsShareStorageAndVersion) {
  auto t = arange(6, kFloat).view({2, 3});
  auto v = t.select(0, 1);
  EXPECT_TRUE(v.is_alias_of(t));
  EXPECT_EQ(t._version(), 0u);
  v.fill_(7);
  EXPECT_EQ(t._version(), 1u);
  EXPECT_EQ(v._version(), 1u);
  EXPECT_VALUES(t, {0, 1, 2, 7, 7, 7});
  t.add_(1);
  EXPECT_EQ(v._version(), 2u);
  EXPECT_VALUES(v, {8, 8, 8});
  auto c = t.clone();
  EXPECT_FALSE(c.is_alias_of(t));
  EXPECT_EQ(c._version(), 0u);
}

TEST(Tensor, ItemDataPtrAccessor) {
  auto t = tensor({{1.5, 2.5}, {3.5, 4.5}});
  EXPECT_EQ(t.index({1, 0}).item<float>(), 3.5f);
  EXPECT_EQ(t.sum().item<double>(), 12.0);
  EXPECT_EQ(t.data_ptr<float>()[3], 4.5f);
  auto a = t.accessor<float, 2>();
  EXPECT_EQ(a[0][1], 2.5f);
  a[1][1] = 9;
  EXPECT_EQ(t.index({1, 1}).item<float>(), 9.0f);
  auto tt = t.t();
  auto at = tt.accessor<float, 2>();
  EXPECT_EQ(at[0][1], 3.5f);  // strided accessor
  EXPECT_THROW(t.data_ptr<double>(), Error);
  EXPECT_THROW(t.item(), Error);
  EXPECT_EQ(tensor({7}).item<int64_t>(), 7);
}

TEST(Tensor, ToAndCopyAcrossDtypesAndStrides) {
  auto t = tensor({{1.7, -2.2}, {3.9, 250.0}});
  EXPECT_VALUES(t.to(kInt), {1, -2, 3, 250});
  EXPECT_VALUES(t.to(kByte), {1, 254, 3, 250});
  EXPECT_VALUES(t.to(kBool), {1, 1, 1, 1});
  EXPECT_CLOSE(t.to(kHalf), std::vector<double>({1.7001953125, -2.19921875, 3.900390625, 250.0}),
               0);
  EXPECT_CLOSE(t.to(kBFloat16).to(kFloat), std::vector<double>({1.703125, -2.203125, 3.90625, 250}),
               0);
  auto dst = zeros({2, 2}, kDouble);
  dst.t().copy_(t);  // writes through a transposed view
  EXPECT_CLOSE(dst, std::vector<double>({1.7, 3.9, -2.2, 250.0}), 1e-6);
  auto row = zeros({3, 2}, kLong);
  row.copy_(tensor({5, 6}));  // broadcast source
  EXPECT_VALUES(row, {5, 6, 5, 6, 5, 6});
  EXPECT_TRUE(t.to(kFloat).is_same(t));  // same dtype: no copy
  EXPECT_FALSE(t.to(kFloat, false, true).is_same(t));
}

TEST(Tensor, LargeTransposedCopyUsesTiles) {
  auto a = arange(300 * 200, kFloat).view({300, 200});
  auto b = a.t().contiguous();
  EXPECT_SHAPE(b, {200, 300});
  auto ba = b.accessor<float, 2>();
  EXPECT_EQ(ba[7][13], 13 * 200 + 7);
  EXPECT_EQ(ba[199][299], 299 * 200 + 199);
  EXPECT_TRUE(b.t().equal(a));
  // Whole 64x64 tiles, edges and every element size; also into a strided view.
  for (auto [rows, cols] :
       std::vector<std::pair<int64_t, int64_t>>{{128, 192}, {65, 130}, {300, 200}})
    for (ScalarType t : {kFloat, kInt, kLong, kShort, kByte}) {
      Tensor src = arange(rows * cols, kLong).remainder(97).to(t).view({rows, cols});
      EXPECT_TRUE(src.t().contiguous().t().equal(src)) << rows << "x" << cols << " " << t;
      Tensor wide = zeros({cols, rows + 5}, t);
      wide.narrow(1, 2, rows).copy_(src.t());
      EXPECT_TRUE(wide.narrow(1, 2, rows).t().equal(src))
          << rows << "x" << cols << " " << t << " into a view";
      EXPECT_EQ(wide.narrow(1, 0, 2).abs().sum().item<double>(), 0.0);
    }
}

// A transpose of the last two dims of each slice of a batch (NCHW <-> NHWC)
// goes through the tiles slice by slice: every element size, edges, narrow
// slices (the plain loop), a strided batch dim and a destination view.
TEST(Tensor, BatchedTransposedCopyUsesTilesPerSlice) {
  // [N, C, H, W] -> [N, H, W, C] and back, as oneDNN's channels-last layouts.
  for (auto [C, HW] : std::vector<std::pair<int64_t, int64_t>>{{64, 1024}, {20, 81}, {3, 784}})
    for (ScalarType t : {kFloat, kInt, kLong, kShort, kByte, kDouble}) {
      const int64_t H = HW == 81 ? 9 : 32, W = HW / H;
      Tensor x = arange(5 * C * H * W, kLong).remainder(251).to(t).view({5, C, H, W});
      Tensor nhwc = x.permute({0, 2, 3, 1}).contiguous();
      ASSERT_TRUE(nhwc.is_contiguous());
      for (int64_t n : {0, 4})
        for (int64_t c : {int64_t(0), C - 1})
          EXPECT_TRUE(nhwc[n].select(2, c).equal(x[n][c])) << C << " " << t;
      Tensor back = nhwc.permute({0, 3, 1, 2}).contiguous();
      EXPECT_TRUE(back.equal(x)) << C << "x" << HW << " " << t;
      // Every other sample (a strided batch dim) into a view with a margin.
      Tensor wide = zeros({3, H * W, C + 3}, t);
      wide.narrow(2, 1, C).copy_(x.slice(0, 0, 5, 2).flatten(2).transpose(1, 2));
      EXPECT_TRUE(wide.narrow(2, 1, C).transpose(1, 2).equal(x.slice(0, 0, 5, 2).flatten(2)));
      EXPECT_EQ(wide.narrow(2, 0, 1).abs().sum().item<double>(), 0.0);
    }
}

// Destinations of 8 MiB and more take the streaming path: 64-row strips (in
// parallel at two threads), then one 32-row strip and single columns, each
// with a row tail. A misaligned destination falls back to the tiles.
TEST(Tensor, HugeTransposedCopyStreams) {
  const int before = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    // dst 2061 x 1064: 1064 = 16 * 64 + 32 + 8 columns (strips of 64, one of 32,
    // single values), 2061 = 4 * 512 + 8 + 5 rows (tiles of 512, one of 8, single rows)
    Tensor src = arange(1064 * 2061, kInt).view({1064, 2061});
    Tensor dst = src.t().contiguous();
    auto d = dst.accessor<int32_t, 2>();
    EXPECT_EQ(d[0][1063], 1063 * 2061);
    EXPECT_EQ(d[2060][1063], 1063 * 2061 + 2060);
    EXPECT_EQ(d[2049][1027], 1027 * 2061 + 2049);
    EXPECT_EQ(d[2050][1040], 1040 * 2061 + 2050);
    EXPECT_TRUE(dst.t().equal(src)) << threads << " threads";
    Tensor shifted = zeros({2061 * 1064 + 1}, kFloat);
    Tensor view =
        shifted.narrow(0, 1, 2061 * 1064).view({2061, 1064});  // 4-byte offset: not 32-byte aligned
    Tensor srcf = src.to(kFloat);
    view.copy_(srcf.t());
    EXPECT_TRUE(view.t().equal(srcf));
    EXPECT_EQ(shifted[0].item<float>(), 0.0f);
  }
  set_num_threads(before);
}

// Conversions between float and double and fills of 8 MiB and more write
// with streaming stores: the same values as element by element, at 1 and 2
// threads, into an aligned or a misaligned (4 bytes past) destination.
TEST(Tensor, LargeConversionsAndFillsStream) {
  const int before = get_num_threads();
  const int64_t n = (int64_t(9) << 20) / 4 + 37;  // 9 MiB of floats, not a whole number of runs
  Tensor a = arange(n, kFloat).remainder(1000).mul(0.37);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor ad = a.to(kDouble);
    EXPECT_EQ(ad.dtype(), kDouble);
    for (int64_t i : {int64_t(0), int64_t(12345), n - 1})
      EXPECT_EQ(ad[i].item<double>(), double(a[i].item<float>())) << i;
    EXPECT_TRUE(ad.to(kFloat).equal(a)) << threads;  // float -> double -> float is exact
    Tensor shifted = zeros({n + 1}, kDouble);
    shifted.narrow(0, 1, n).copy_(a);
    EXPECT_TRUE(shifted.narrow(0, 1, n).equal(ad)) << threads << " threads, misaligned";
    EXPECT_EQ(shifted[0].item<double>(), 0.0);
    Tensor filled = empty({n}, kFloat);
    filled.fill_(2.5);
    EXPECT_EQ(filled.eq(2.5).sum().item<int64_t>(), n);
    Tensor ints = zeros({n + 1}, kInt);
    ints.narrow(0, 1, n).fill_(-7);
    EXPECT_EQ(ints[0].item<int32_t>(), 0);
    EXPECT_EQ(ints.narrow(0, 1, n).eq(-7).sum().item<int64_t>(), n);
    EXPECT_EQ(ints[n].item<int32_t>(), -7);
    Tensor broadcast = empty({n}, kDouble);
    broadcast.copy_(scalar_tensor(1.25f).expand({n}));  // one float value, converted
    EXPECT_EQ(broadcast.eq(1.25).sum().item<int64_t>(), n);
  }
  set_num_threads(before);
}

TEST(Tensor, FillZeroClone) {
  auto t = empty({3}, kInt);
  t.fill_(4);
  EXPECT_VALUES(t, {4, 4, 4});
  t.zero_();
  EXPECT_VALUES(t, {0, 0, 0});
  t.fill_(scalar_tensor(9));
  EXPECT_VALUES(t, {9, 9, 9});
  auto nc = arange(6).view({2, 3}).t();
  auto c = nc.clone();
  EXPECT_VALUES(c, {0, 3, 1, 4, 2, 5});
}

TEST(Tensor, DeviceParsing) {
  EXPECT_TRUE(Device("cpu").is_cpu());
  Device d("cuda:1");
  EXPECT_TRUE(d.is_cuda());
  EXPECT_EQ(d.index(), 1);
  EXPECT_EQ(d.str(), "cuda:1");
  EXPECT_THROW(Device("tpu"), Error);
  if (cuda::is_available())
    EXPECT_TRUE(zeros({2}, Device(kCUDA)).is_cuda());
  else
    EXPECT_THROW(zeros({2}, Device(kCUDA)), Error);
}

TEST(Tensor, TorchAliasCompiles) {
  namespace t2 = torch;
  t2::Tensor x = t2::ones({2, 2}, t2::TensorOptions().dtype(t2::kFloat64));
  EXPECT_EQ(x.dtype(), t2::kDouble);
}

TEST(Allocator, LargeBlocksAreCachedAndReleased) {
  release_cached_cpu_memory();
  EXPECT_EQ(cached_cpu_memory(), 0u);
  void* first;
  {
    auto big = empty({1 << 20});  // 4 MiB
    first = big.data_ptr();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % (2 << 20), 0u);  // huge-page aligned
  }
  EXPECT_GE(cached_cpu_memory(), size_t(4) << 20);
  auto again = empty({1 << 20});
  EXPECT_EQ(again.data_ptr(), first);  // reused, no fresh page faults
  again.reset();
  release_cached_cpu_memory();
  EXPECT_EQ(cached_cpu_memory(), 0u);
  auto small = empty({3});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data_ptr()) % 64, 0u);
}

TEST(Tensor, CopyBetweenEveryPairOfDtypes) {
  const ScalarType all[] = {kByte, kChar,  kShort,  kInt,  kLong,
                            kHalf, kFloat, kDouble, kBool, kBFloat16};
  for (auto from : all)
    for (auto to : all) {
      auto src = tensor({0, 1, 2, 3}, from);  // bool turns this into {0, 1, 1, 1}
      auto dst = empty({2, 2}, to).t();       // strided destination
      dst.copy_(src.view({2, 2}).t());
      std::vector<double> expect = from == kBool || to == kBool ? std::vector<double>{0, 1, 1, 1}
                                                                : std::vector<double>{0, 1, 2, 3};
      EXPECT_EQ(brasa::testing::values(dst.t().reshape({4})), expect) << from << " -> " << to;
    }
}

TEST(Tensor, UnaryOnSixteenBitFloats) {
  for (auto t : {kHalf, kBFloat16}) {
    auto x = tensor({0.5, -1.0, 2.0}, t);
    EXPECT_EQ(x.exp().dtype(), t);
    EXPECT_CLOSE(x.exp(), std::vector<double>({std::exp(0.5), std::exp(-1.0), std::exp(2.0)}),
                 0.05);
    EXPECT_VALUES(x.abs(), {0.5, 1, 2});
    EXPECT_VALUES(x.relu(), {0.5, 0, 2});
    EXPECT_CLOSE(x.sigmoid(), std::vector<double>({0.6225, 0.2689, 0.8808}), 0.01);
    EXPECT_VALUES(x.clamp(0, 1), {0.5, 0, 1});
  }
}

// libtorch's method spellings give what the functions of the same name
// give (each method is the function; the values are the functions' own,
// tested with them), and the new_* factories take this tensor's dtype and
// device unless told otherwise.
TEST(Tensor, MethodSpellingsOfFunctions) {
  Tensor x = tensor({0.25, -0.5, 0.75});
  Tensor y = tensor({2.0, 0.5, -1.0});
  auto same = [](const Tensor& a, const Tensor& b) { return a.equal(b) || a.allclose(b); };
  EXPECT_TRUE(same(x.absolute(), abs(x)));
  EXPECT_TRUE(same(x.arcsin(), asin(x)));
  EXPECT_TRUE(same(x.arctanh(), atanh(x)));
  EXPECT_TRUE(same(x.erfc(), erfc(x)));
  EXPECT_TRUE(same(x.lgamma(), lgamma(x)));
  EXPECT_TRUE(same(x.sinc(), sinc(x)));
  EXPECT_TRUE(same(x.logit(0.1), logit(x, 0.1)));
  EXPECT_VALUES(x.fix(), {0, 0, 0});
  EXPECT_VALUES(x.negative(), {-0.25, 0.5, -0.75});
  EXPECT_VALUES(x.signbit().to(kLong), {0, 1, 0});
  EXPECT_VALUES(x.multiply(y), {0.5, -0.25, -0.75});
  EXPECT_VALUES(x.subtract(y, 2), {-3.75, -1.5, 2.75});
  EXPECT_VALUES(x.divide(y), {0.125, -1, -0.75});
  EXPECT_VALUES(x.fmax(y), {2, 0.5, 0.75});
  EXPECT_VALUES(x.greater(y).to(kLong), {0, 0, 1});
  EXPECT_VALUES(x.less_equal(y).to(kLong), {1, 1, 0});
  EXPECT_TRUE(same(x.hypot(y), hypot(x, y)));
  EXPECT_TRUE(same(x.xlogy(y.abs()), xlogy(x, y.abs())));
  EXPECT_CLOSE(x.clip(-0.3, 0.3), std::vector<double>({0.25, -0.3, 0.3}), 1e-7);
  Tensor c = x.clone();
  c.clip_(0.0, std::nullopt);
  EXPECT_VALUES(c, {0.25, 0, 0.75});
  EXPECT_TRUE(x.is_same_size(y));
  EXPECT_FALSE(x.is_same_size(y.view({3, 1})));
  // Reductions, sorting and shapes.
  Tensor m = tensor({3.0, 1.0, 2.0, 5.0, 4.0, 0.0}).view({2, 3});
  EXPECT_VALUES(m.median(), {2});
  EXPECT_VALUES(std::get<0>(m.median(1)), {2, 4});
  EXPECT_VALUES(std::get<0>(m.kthvalue(1, 1)), {1, 0});
  EXPECT_VALUES(std::get<0>(m.cummax(1)), {3, 3, 3, 5, 5, 5});
  EXPECT_VALUES(std::get<1>(m.aminmax()), {5});
  EXPECT_VALUES(m.count_nonzero(), {5});
  EXPECT_VALUES(m.msort(), {3, 1, 0, 5, 4, 2});
  EXPECT_VALUES(m.diff(1, 1), {-2, 1, -1, -4});
  EXPECT_VALUES(m.fliplr(), {2, 1, 3, 0, 4, 5});
  EXPECT_VALUES(m.flipud(), {5, 4, 0, 3, 1, 2});
  EXPECT_SHAPE(m.swapaxes(0, 1), {3, 2});
  EXPECT_SHAPE(m.moveaxis(0, 1), {3, 2});
  EXPECT_SHAPE(m.ravel(), {6});
  EXPECT_SHAPE(m.broadcast_to({4, 2, 3}), {4, 2, 3});
  EXPECT_EQ(m.tensor_split(3, 1).size(), 3u);
  EXPECT_EQ(m.hsplit(3).size(), 3u);
  EXPECT_VALUES(m.repeat_interleave(2, 0).select(1, 0), {3, 3, 5, 5});
  EXPECT_VALUES(m.take_along_dim(tensor({int64_t(2), int64_t(0)}).view({2, 1}), 1), {2, 5});
  EXPECT_VALUES(tensor({int64_t(1), int64_t(1), int64_t(3)}).bincount(), {0, 2, 0, 1});
  // Matrices.
  Tensor a = tensor({4.0, 1.0, 1.0, 3.0}).view({2, 2});
  EXPECT_CLOSE(a.det(), std::vector<double>({11.0}), 1e-12);
  EXPECT_CLOSE(a.trace(), std::vector<double>({7.0}), 1e-12);
  EXPECT_TRUE(same(a.inverse().matmul(a), eye(2, a.options())));
  EXPECT_TRUE(same(a.matrix_power(2), a.matmul(a)));
  Tensor l = a.cholesky();
  EXPECT_TRUE(same(l.matmul(l.t()), a));
  auto [u, s, v] = a.svd();
  EXPECT_TRUE(same(u.matmul(s.diag()).matmul(v.t()), a));
  EXPECT_VALUES(tensor({1.0, 2.0}).diag(), {1, 0, 0, 2});
  EXPECT_VALUES(tensor({1.0, 2.0}).kron(tensor({1.0, 10.0})), {1, 10, 2, 20});
  EXPECT_VALUES(tensor({1.0, 2.0}).inner(tensor({3.0, 4.0})), {11});
  // new_*: this tensor's dtype and device unless the options say otherwise.
  Tensor h = ones({2}, TensorOptions().dtype(kDouble));
  EXPECT_EQ(h.new_zeros({3}).dtype(), kDouble);
  EXPECT_VALUES(h.new_ones({2, 2}), {1, 1, 1, 1});
  EXPECT_VALUES(h.new_full({2}, 7), {7, 7});
  EXPECT_EQ(h.new_empty({4}, kLong).dtype(), kLong);
  EXPECT_TRUE(h.new_zeros({1}, TensorOptions().requires_grad(true)).requires_grad());
  // Sampling draws from the same generator as the functions.
  manual_seed(7);
  Tensor p = tensor({0.0, 1.0, 0.0});
  EXPECT_VALUES(p.multinomial(2, true), {1, 1});
  EXPECT_VALUES(full({3}, 1.0).bernoulli(), {1, 1, 1});
  EXPECT_VALUES(full({3}, 1.0).bernoulli(0.0), {0, 0, 0});
}

// The in-place spellings write the function's result into the tensor (and
// its dtype: a comparison in place gives 0 and 1 in a float tensor, as
// libtorch's), and autograd sees through them.
TEST(Tensor, InPlaceMethodSpellings) {
  Tensor x = tensor({0.25, -0.5, 0.75});
  Tensor y = tensor({2.0, 0.5, -1.0});
  Tensor a = x.clone();
  a.multiply_(y);
  EXPECT_VALUES(a, {0.5, -0.25, -0.75});
  a.subtract_(y, 2);
  EXPECT_VALUES(a, {-3.5, -1.25, 1.25});
  a.divide_(tensor({-3.5, 1.25, 1.25}));
  EXPECT_VALUES(a, {1, -1, 1});
  a.negative_();
  EXPECT_VALUES(a, {-1, 1, -1});
  Tensor b = x.clone();
  b.greater_(y);
  EXPECT_EQ(b.dtype(), x.dtype());
  EXPECT_VALUES(b, {0, 0, 1});
  Tensor c = x.clone();
  c.arcsin_();
  EXPECT_TRUE(c.allclose(asin(x)));
  Tensor d = x.abs();
  d.lgamma_();
  EXPECT_TRUE(d.allclose(lgamma(x.abs())));
  Tensor e = x.abs();
  e.digamma_();
  EXPECT_TRUE(e.allclose(x.abs().digamma()));
  Tensor f = tensor({1.0, 2.0, 3.0});
  f.cumsum_(0);
  EXPECT_VALUES(f, {1, 3, 6});
  Tensor leaf = tensor({1.0, 2.0}).requires_grad_(true);
  Tensor g = leaf * 1;
  g.multiply_(tensor({3.0, 5.0}));
  g.sum().backward();
  EXPECT_VALUES(leaf.grad(), {3, 5});
}

// libtorch's memory formats: channels-last strides, kept through
// elementwise ops and convolutions (which read any strides).
TEST(Tensor, ChannelsLastMemoryFormat) {
  Tensor x = torch::arange(2 * 3 * 4 * 5, torch::kFloat).view({2, 3, 4, 5});
  Tensor cl = x.contiguous(torch::MemoryFormat::ChannelsLast);
  EXPECT_SHAPE(cl, {2, 3, 4, 5});
  EXPECT_EQ(cl.strides().vec(), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_TRUE(cl.is_contiguous(torch::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(cl.is_contiguous());
  EXPECT_TRUE(cl.equal(x));
  EXPECT_EQ(cl.suggest_memory_format(), torch::MemoryFormat::ChannelsLast);
  EXPECT_EQ(x.suggest_memory_format(), torch::MemoryFormat::Contiguous);
  EXPECT_TRUE(cl.contiguous(torch::MemoryFormat::ChannelsLast).is_same(cl));  // no copy
  EXPECT_TRUE(cl.contiguous(torch::MemoryFormat::Preserve).is_same(cl));
  EXPECT_TRUE(cl.contiguous().is_contiguous());
  Tensor w = torch::randn({4, 3, 3, 3});
  EXPECT_TRUE(torch::conv2d(cl, w).allclose(torch::conv2d(x, w), 1e-4, 1e-4));
  EXPECT_TRUE((cl * 2 + 1).equal(x * 2 + 1));
  Tensor v = torch::zeros({1, 2, 3, 4, 5}).contiguous(torch::MemoryFormat::ChannelsLast3d);
  EXPECT_TRUE(v.is_contiguous(torch::MemoryFormat::ChannelsLast3d));
  EXPECT_ERROR("required rank 4 tensor to use channels_last format",
               torch::zeros({3, 4}).contiguous(torch::MemoryFormat::ChannelsLast));
}

TEST(Tensor, NumpyTransposeSumToSizeAndLayoutQueries) {
  Tensor x = torch::arange(24, torch::kFloat).view({2, 3, 4});
  EXPECT_SHAPE(x.numpy_T(), {4, 3, 2});
  EXPECT_EQ(x.numpy_T()[3][2][1].item<float>(), x[1][2][3].item<float>());
  EXPECT_TRUE(x.sum_to_size({3, 1}).equal(x.sum(0).sum(1, true)));
  EXPECT_TRUE(x.sum_to_size({2, 3, 4}).equal(x));
  EXPECT_ERROR("sum_to_size: size {[5]} is not expandable", x.sum_to_size({5}));
  EXPECT_FALSE(x.is_sparse());
  EXPECT_FALSE(x.is_quantized());
}
