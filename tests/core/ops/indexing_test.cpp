#include "../test_util.h"

using namespace brasa;
using namespace brasa::indexing;

TEST(Indexing, BasicSlicesIntsNoneEllipsis) {
  auto t = arange(24).view({2, 3, 4});
  EXPECT_VALUES(t.index({1, 2}), {20, 21, 22, 23});
  EXPECT_SHAPE(t.index({Slice(), 0}), {2, 4});
  EXPECT_VALUES(t.index({0, Slice(1, None), Slice(None, None, 2)}), {4, 6, 8, 10});
  EXPECT_SHAPE(t.index({None, 0}), {1, 3, 4});
  EXPECT_SHAPE(t.index({Ellipsis, 1}), {2, 3});
  EXPECT_VALUES(t.index({Ellipsis, 1}), {1, 5, 9, 13, 17, 21});
  EXPECT_SHAPE(t.index({"...", None}), {2, 3, 4, 1});
  EXPECT_VALUES(t.index({-1, -1, -1}), {23});
  EXPECT_SHAPE(t.index({true}), {1, 2, 3, 4});
  EXPECT_SHAPE(t.index({false}), {0, 2, 3, 4});
  EXPECT_TRUE(t.index({0}).is_alias_of(t));
}

TEST(Indexing, AdvancedWithLongTensors) {
  auto t = arange(12).view({3, 4});
  EXPECT_VALUES(t.index({tensor({2, 0})}), {8, 9, 10, 11, 0, 1, 2, 3});
  EXPECT_VALUES(t.index({tensor({0, 2}), tensor({1, 3})}), {1, 11});
  EXPECT_VALUES(t.index({Slice(), tensor({-1, 0})}), {3, 0, 7, 4, 11, 8});
  EXPECT_SHAPE(t.index({Slice(), tensor({{0, 1}, {2, 3}})}), {3, 2, 2});
  // Broadcast index tensors.
  EXPECT_VALUES(t.index({tensor({{0}, {2}}), tensor({0, 3})}), {0, 3, 8, 11});
  auto u = arange(24).view({2, 3, 4});
  // Non-adjacent index tensors put the broadcast dims first.
  EXPECT_SHAPE(u.index({tensor({0, 1}), Slice(), tensor({0, 1})}), {2, 3});
  EXPECT_VALUES(u.index({tensor({0, 1}), Slice(), tensor({0, 1})}), {0, 4, 8, 13, 17, 21});
  // Adjacent ones keep their place.
  EXPECT_SHAPE(u.index({Slice(), tensor({0, 2}), tensor({1, 1})}), {2, 2});
  EXPECT_SHAPE(u.index({Slice(), tensor({0, 2})}), {2, 2, 4});
  EXPECT_THROW(t.index({tensor({3})}), Error);
  EXPECT_THROW(t.index({tensor({1.0})}), Error);
}

TEST(Indexing, BooleanMasks) {
  auto t = arange(6).view({2, 3});
  EXPECT_VALUES(t.index({t > 2}), {3, 4, 5});
  EXPECT_VALUES(t.index({tensor({false, true})}), {3, 4, 5});
  EXPECT_SHAPE(t.index({Slice(), tensor({true, false, true})}), {2, 2});
  EXPECT_VALUES(t.masked_select(t.remainder(2) == 0), {0, 2, 4});
  EXPECT_VALUES(t.masked_select(tensor({true, false, true})), {0, 2, 3, 5});
  EXPECT_THROW(t.index({tensor({true, false, true})}), Error);
}

TEST(Indexing, IndexPut) {
  auto t = zeros({3, 4});
  t.index_put_({1}, 5);
  t.index_put_({Slice(), 0}, tensor({1.0, 2.0, 3.0}));
  t.index_put_({tensor({0, 2}), tensor({3, 3})}, tensor({7.0, 8.0}));
  t.index_put_({t > 6}, -1);
  EXPECT_VALUES(t, {1, 0, 0, -1, 2, 5, 5, 5, 3, 0, 0, -1});
  auto acc = zeros({3});
  index_put_(acc, {tensor({0, 0, 2})}, tensor({1.0, 2.0, 3.0}), true);
  EXPECT_VALUES(acc, {3, 0, 3});
  auto v = zeros({2, 3});
  v.index_put_({Slice(), tensor({0, 2})}, tensor({9.0, 8.0}));  // broadcast values
  EXPECT_VALUES(v, {9, 0, 8, 9, 0, 8});
  EXPECT_EQ(v._version(), 1u);
  EXPECT_THROW(v.index_put_({tensor({0})}, ones({5})), Error);
}

TEST(Indexing, GatherScatterIndexSelectIndexAdd) {
  auto t = tensor({{1, 2}, {3, 4}});
  EXPECT_VALUES(t.gather(1, tensor({{0, 0}, {1, 0}})), {1, 1, 4, 3});
  EXPECT_VALUES(t.gather(0, tensor({{1, 0}})), {3, 2});
  auto s = zeros({2, 3}, kLong).scatter(1, tensor({{2}, {0}}), tensor({{7}, {8}}));
  EXPECT_VALUES(s, {0, 0, 7, 8, 0, 0});
  auto sv = zeros({3}).scatter(0, tensor({0, 2}), 5.0);
  EXPECT_VALUES(sv, {5, 0, 5});
  auto sa = zeros({3}).scatter_add(0, tensor({0, 0, 1}), tensor({1.0, 2.0, 3.0}));
  EXPECT_VALUES(sa, {3, 3, 0});
  auto m = arange(6).view({3, 2});
  EXPECT_VALUES(m.index_select(0, tensor({2, 0})), {4, 5, 0, 1});
  EXPECT_VALUES(m.index_select(1, tensor({1})), {1, 3, 5});
  EXPECT_VALUES(m.t().index_select(0, tensor({1})), {1, 3, 5});
  auto ia = zeros({3, 2}).index_add(0, tensor({0, 2, 0}), ones({3, 2}), 2);
  EXPECT_VALUES(ia, {4, 4, 0, 0, 2, 2});
  EXPECT_THROW(t.gather(1, tensor({{2}})), Error);
  EXPECT_THROW(m.index_select(0, tensor({3})), Error);
  EXPECT_THROW(zeros({3}).scatter_(0, tensor({4}), 1.0), Error);
}

// gather's contiguous path: rows whose indices are all in range take the
// copy without checks, the others wrap negative indices or fail naming the
// index; every element size, along the last dim and an inner one, matches
// an element-by-element reference.
TEST(Indexing, GatherContiguousMatchesAReferenceAndChecksEachRow) {
  manual_seed(5);
  for (ScalarType dt : {kFloat, kDouble, kShort, kByte}) {
    SCOPED_TRACE(toString(dt));
    Tensor x = randint(0, 100, {6, 50, 3}).to(dt);
    Tensor ix = randint(0, 50, {6, 70, 3}, TensorOptions().dtype(kLong));
    ix[2][5][1] = -1;  // one row with a negative index: an error, as PyTorch
    EXPECT_ERROR("gather: index -1 is out of bounds for dimension 1 with size 50", x.gather(1, ix));
    ix[2][5][1] = 49;
    Tensor got = x.gather(1, ix).to(kDouble);
    Tensor xd = x.to(kDouble);
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t j = 0; j < 70; ++j)
        for (int64_t q = 0; q < 3; ++q) {
          const int64_t i = ix[p][j][q].item<int64_t>();
          ASSERT_EQ(got[p][j][q].item<double>(), xd[p][i][q].item<double>()) << p << "," << j;
        }
    Tensor last = randint(0, 3, {6, 50, 9}, TensorOptions().dtype(kLong));
    EXPECT_TRUE(x.gather(2, last).equal(x.gather(2, last.clone())));
    EXPECT_VALUES(x.gather(2, last).select(0, 4).select(0, 7).to(kDouble),
                  {xd[4][7][last[4][7][0].item<int64_t>()].item<double>(),
                   xd[4][7][last[4][7][1].item<int64_t>()].item<double>(),
                   xd[4][7][last[4][7][2].item<int64_t>()].item<double>(),
                   xd[4][7][last[4][7][3].item<int64_t>()].item<double>(),
                   xd[4][7][last[4][7][4].item<int64_t>()].item<double>(),
                   xd[4][7][last[4][7][5].item<int64_t>()].item<double>(),
                   xd[4][7][last[4][7][6].item<int64_t>()].item<double>(),
                   xd[4][7][last[4][7][7].item<int64_t>()].item<double>(),
                   xd[4][7][last[4][7][8].item<int64_t>()].item<double>()});
  }
  Tensor x = rand({4, 10});
  Tensor ix = zeros({4, 3}, kLong);
  ix[3][2] = 10;
  EXPECT_ERROR("gather: index 10 is out of bounds for dimension 1 with size 10", x.gather(1, ix));
  ix[3][2] = -1;
  EXPECT_ERROR("gather: index -1 is out of bounds for dimension 1 with size 10", x.gather(1, ix));
}

// As PyTorch: gather, scatter, index_select, index_add_ and index_copy_
// reject a negative index (the CPU's strided gather and scatter wrapped it,
// unlike their contiguous path and the CUDA kernels); index_fill_, take,
// put_ and advanced indexing count it from the end.
TEST(Indexing, NegativeIndicesAsPyTorch) {
  Tensor x = arange(6, TensorOptions().dtype(kFloat)).view({3, 2});
  Tensor row = tensor({int64_t(-1), int64_t(0)}).view({1, 2});
  Tensor last = tensor({int64_t(-1)});
  EXPECT_ERROR("gather: index -1 is out of bounds for dimension 0 with size 3", x.gather(0, row));
  EXPECT_ERROR("gather: index -1 is out of bounds for dimension 1 with size 3",
               x.t().gather(1, row.t()));  // the strided path
  EXPECT_ERROR("scatter_: index -1 is out of bounds for dimension 0 with size 3",
               x.clone().scatter_(0, row, 1.0));
  EXPECT_ERROR("scatter_add_: index -1 is out of bounds for dimension 0 with size 3",
               x.clone().scatter_add_(0, row, ones({1, 2})));
  EXPECT_ERROR(
      "index_select: index -1 is out of bounds for dimension 0 with size 3 (index out of range "
      "in self)",
      x.index_select(0, last));
  EXPECT_ERROR("index_add_: index -1 is out of bounds for dimension 0 with size 3",
               x.clone().index_add_(0, last, ones({1, 2})));
  EXPECT_ERROR("index_copy: index -1 is out of bounds for dimension 0 with size 3",
               x.clone().index_copy_(0, last, ones({1, 2})));
  // The ones that wrap.
  EXPECT_VALUES(x.clone().index_fill_(0, last, 9.0), {0, 1, 2, 3, 9, 9});
  EXPECT_VALUES(x.take(tensor({int64_t(-1), int64_t(-6)})), {5, 0});
  EXPECT_VALUES(x.index({last}), {4, 5});
  EXPECT_VALUES(x.clone().put_(last, tensor({7.0f})), {0, 1, 2, 3, 4, 7});
}

// The libtorch methods over the indexing functions, in place and not.
TEST(Indexing, IndexCopyFillTakePutAndMaskedScatterMethods) {
  Tensor x = zeros({3, 2});
  Tensor i = tensor({int64_t(2), int64_t(0)});
  Tensor src = arange(1, 5, TensorOptions().dtype(kFloat)).view({2, 2});
  EXPECT_VALUES(x.index_copy(0, i, src), {3, 4, 0, 0, 1, 2});
  EXPECT_VALUES(x, {0, 0, 0, 0, 0, 0});  // untouched
  x.index_copy_(0, i, src);
  EXPECT_VALUES(x, {3, 4, 0, 0, 1, 2});
  EXPECT_VALUES(x.index_fill(1, tensor({int64_t(1)}), -1.0), {3, -1, 0, -1, 1, -1});
  EXPECT_VALUES(x.index_fill(1, tensor({int64_t(0)}), scalar_tensor(5.0)), {5, 4, 5, 0, 5, 2});
  x.index_fill_(0, tensor({int64_t(1)}), 8.0);
  EXPECT_VALUES(x, {3, 4, 8, 8, 1, 2});
  EXPECT_VALUES(x.take(tensor({int64_t(5), int64_t(1)})), {2, 4});
  EXPECT_VALUES(x.put(tensor({int64_t(0), int64_t(0)}), tensor({1.0f, 2.0f}), true),
                {6, 4, 8, 8, 1, 2});
  Tensor mask = tensor({true, false}).view({1, 2}).expand({3, 2});
  EXPECT_VALUES(x.masked_scatter(mask, tensor({10.0f, 20.0f, 30.0f})), {10, 4, 20, 8, 30, 2});
  x.masked_scatter_(mask, tensor({-1.0f, -2.0f, -3.0f}));
  EXPECT_VALUES(x, {-1, 4, -2, 8, -3, 2});
  // The in-place forms record autograd through the copy.
  Tensor leaf = ones({3, 2}).requires_grad_(true);
  Tensor y = leaf * 2;
  y.index_fill_(0, tensor({int64_t(0)}), 0.0);
  y.sum().backward();
  EXPECT_VALUES(leaf.grad(), {0, 0, 2, 2, 2, 2});
}

TEST(Indexing, Nonzero) {
  auto nz = tensor({{0, 1}, {2, 0}}).nonzero();
  EXPECT_SHAPE(nz, {2, 2});
  EXPECT_VALUES(nz, {0, 1, 1, 0});
  EXPECT_SHAPE(zeros({3}).nonzero(), {0, 1});
  EXPECT_VALUES(take(tensor({{1, 2}, {3, 4}}), tensor({3, 0})), {4, 1});
}

// nonzero counts and writes in chunks of 65536 in parallel: over several
// chunks (one all zero, a tail of zeros) the coordinates are those of the
// flat indices of the nonzeros, in order; 0-d inputs give [n, 0].
TEST(Indexing, NonzeroOverManyChunks) {
  manual_seed(12);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor x = (rand({3, 300, 170}) > 0.5).to(kFloat);
    x.view({-1}).narrow(0, 65536, 65536).zero_();  // the second chunk
    x.view({-1}).narrow(0, x.numel() - 1000, 1000).zero_();
    Tensor flat = masked_select(arange(x.numel()).view(x.sizes()), x != 0);
    Tensor nz = nonzero(x);
    ASSERT_EQ(nz.size(0), flat.numel());
    EXPECT_TRUE(nz.select(1, 0).equal(flat.div(300 * 170, "floor")));
    EXPECT_TRUE(nz.select(1, 1).equal(flat.div(170, "floor").remainder(300)));
    EXPECT_TRUE(nz.select(1, 2).equal(flat.remainder(170)));
  }
  set_num_threads(2);
  EXPECT_SHAPE(nonzero(tensor(3.0)), {1, 0});
  EXPECT_SHAPE(nonzero(tensor(0.0)), {0, 0});
}

// nonzero of bools (read as bytes), halves with -0 (zero), a 1-D tensor
// longer than a chunk, a last dim of 1, and 1 to 5 dims (the row writer
// is compiled per dim count up to 4): the flat positions of the nonzeros,
// in order.
TEST(Indexing, NonzeroOfEveryLayoutIsTheFlatPositions) {
  manual_seed(13);
  const std::vector<std::vector<int64_t>> shapes = {{200001},    {5, 7, 1},    {2, 70000},
                                                    {9, 13, 11}, {2, 3, 4, 5}, {3, 4, 2, 5, 7}};
  for (const auto& shape : shapes)
    for (ScalarType dt : {kBool, kHalf, kInt}) {
      SCOPED_TRACE(::testing::Message() << toString(dt) << " " << shape.size() << " dims");
      Tensor x = (rand(shape) > 0.6).to(dt);
      if (dt == kHalf) x = where(rand(shape) > 0.5, x, full({}, -0.0).to(kHalf));
      const Tensor flat = masked_select(arange(x.numel()).view(x.sizes()), x != 0);
      const Tensor nz = nonzero(x);
      ASSERT_EQ(nz.size(0), flat.numel());
      Tensor rebuilt = zeros({nz.size(0)}, kLong);
      for (size_t d = 0; d < shape.size(); ++d)
        rebuilt = rebuilt * shape[d] + nz.select(1, static_cast<int64_t>(d));
      EXPECT_TRUE(rebuilt.equal(flat));
    }
}

// index_add_'s row loop takes strided sources too (copied contiguous first):
// an expanded source, as an embedding's gradient from sum() is, adds the
// same rows as its contiguous copy; repeated indices add up.
TEST(Indexing, IndexAddOfAnExpandedSource) {
  Tensor idx = tensor(std::vector<int64_t>{4, 0, 4, 2, 4});
  Tensor src = tensor({1.5f, -2.0f, 0.25f}).expand({5, 3});
  Tensor a = zeros({6, 3}).index_add_(0, idx, src);
  Tensor b = zeros({6, 3}).index_add_(0, idx, src.contiguous());
  EXPECT_TRUE(a.equal(b));
  EXPECT_VALUES(a.select(1, 0), {1.5, 0, 1.5, 0, 4.5, 0});
  Tensor table = randn({6, 3}).requires_grad_(true);
  table.index_select(0, idx).sum().backward();
  EXPECT_VALUES(table.grad().select(1, 2), {1, 0, 1, 0, 3, 0});
}

// masked_select in chunks of 2^16 counted and copied in parallel, with a
// store per element: every element size (1, 2, 4, 8, 16 bytes) against the
// positions nonzero finds, on 1 and 2 threads.
TEST(Indexing, MaskedSelectOverManyChunksEveryElementSize) {
  manual_seed(9);
  Tensor mask = rand({3, 70001}) < 0.4;
  mask.index_put_({2, Slice(65000, None)}, false);  // trailing unselected elements
  Tensor at = nonzero(mask.flatten()).squeeze(1);
  Tensor base = randn({3, 70001}, kDouble) * 100;
  const int threads = get_num_threads();
  for (int t : {1, 2}) {
    set_num_threads(t);
    for (ScalarType type :
         {kBool, kChar, kShort, kHalf, kFloat, kInt, kDouble, kLong, kComplexDouble}) {
      SCOPED_TRACE(::testing::Message() << t << " threads, " << type);
      Tensor x = base.to(type);
      Tensor picked = masked_select(x, mask);
      EXPECT_EQ(picked.numel(), at.numel());
      EXPECT_TRUE(equal(picked, x.flatten().index_select(0, at)));
    }
  }
  set_num_threads(threads);
  EXPECT_EQ(masked_select(ones({5}), zeros({5}, kBool)).numel(), 0);
  EXPECT_VALUES(masked_select(arange(4), ones({4}, kBool)), {0, 1, 2, 3});
}

// Large scatters run in slices along a dim other than the scatter dim, one
// thread each: the same result on 1 and 2 threads (repeated targets
// accumulate, or the last one wins, in the serial order), equal to index_add
// on the flattened targets (integer values: exact sums), and an index out of
// range is still a clear error.
TEST(Indexing, ScatterInParallelSlices) {
  manual_seed(10);
  Tensor src = randint(-50, 50, {64, 130, 32}).to(kDouble);  // larger than the index along 1
  Tensor idx = randint(0, 128, {64, 128, 32});
  Tensor pos = arange(64 * 128 * 32).view({64, 128, 32}).to(kDouble);
  const int threads = get_num_threads();
  std::vector<Tensor> added, placed, along0;
  for (int t : {1, 2}) {
    set_num_threads(t);
    added.push_back(zeros({64, 128, 32}, kDouble).scatter_add_(1, idx, src.narrow(1, 0, 128)));
    placed.push_back(zeros({64, 128, 32}, kDouble).scatter_(1, idx, pos));
    along0.push_back(zeros({64, 128, 32}, kDouble).scatter_add_(0, idx.remainder(64), pos));
  }
  set_num_threads(threads);
  EXPECT_TRUE(equal(added[0], added[1]));
  EXPECT_TRUE(equal(placed[0], placed[1]));
  EXPECT_TRUE(equal(along0[0], along0[1]));
  Tensor target = (arange(64).view({64, 1, 1}) * 128 + idx) * 32 + arange(32);
  Tensor expect = zeros({64 * 128 * 32}, kDouble)
                      .index_add_(0, target.flatten(), src.narrow(1, 0, 128).flatten())
                      .view({64, 128, 32});
  EXPECT_TRUE(equal(added[0], expect));
  // The last write wins: at each written target, the largest position aimed at it.
  Tensor last = zeros({64 * 128 * 32}, kDouble)
                    .scatter_reduce_(0, target.flatten(), pos.flatten(), "amax")
                    .view({64, 128, 32});
  EXPECT_TRUE(equal(placed[0], last));
  Tensor bad = idx.clone();
  bad.index_put_({63, 5, 7}, 128);
  EXPECT_ERROR("scatter_add_: index 128 is out of bounds for dimension 1 with size 128",
               zeros({64, 128, 32}, kDouble).scatter_add_(1, bad, src.narrow(1, 0, 128)));
}

// A bool mask over the leading dims (the masked-select path) gives what the
// positions of its true places give through advanced indexing, for masks of
// 1, 2 and 3 dims, a strided tensor and a strided mask; the gradient reaches
// the selected places only; writing a number through the mask is a masked
// fill.
TEST(Indexing, BoolMaskOverLeadingDimsMatchesItsPositions) {
  manual_seed(9);
  const Tensor contiguous_x = rand({6, 5, 4}), strided_x = rand({4, 5, 6}).permute({2, 1, 0});
  for (const Tensor& x : {contiguous_x, strided_x})
    for (int64_t k = 1; k <= 3; ++k) {
      SCOPED_TRACE(::testing::Message()
                   << "mask dims " << k << " contiguous " << x.is_contiguous());
      std::vector<int64_t> mask_shape(x.sizes().begin(), x.sizes().begin() + k);
      const Tensor mask = rand(mask_shape) > 0.4;
      const Tensor t_mask = k == 2 ? (rand({mask_shape[1], mask_shape[0]}) > 0.4).t() : mask;
      for (const Tensor& m : {mask, t_mask}) {
        const Tensor nz = nonzero(m);
        std::vector<TensorIndex> at;
        for (int64_t d = 0; d < k; ++d) at.emplace_back(nz.select(1, d));
        const Tensor got = x.index({m});
        EXPECT_TRUE(got.equal(x.index(at)));
        std::vector<int64_t> want_shape{nz.size(0)};
        for (int64_t d = k; d < 3; ++d) want_shape.push_back(x.size(d));
        EXPECT_EQ(got.sizes().vec(), want_shape);

        DimVector ones_shape(m.sizes().begin(), m.sizes().end());
        ones_shape.resize(3, 1);
        const Tensor broadcast = m.reshape(IntArrayRef(ones_shape)).expand(x.sizes());
        Tensor leaf = x.detach().clone().requires_grad_(true);
        leaf.index({m}).mul(2).sum().backward();
        EXPECT_TRUE(leaf.grad().equal(broadcast.to(kFloat) * 2));

        Tensor y = x.clone(), z = x.clone();
        y.index_put_({m}, 5.0);
        z.index_put_({m}, tensor({-3.0f}));
        EXPECT_TRUE(y.equal(where(broadcast, full({}, 5.0), x)));
        EXPECT_TRUE(z.equal(where(broadcast, full({}, -3.0), x)));

        // A row of values per true place, written and accumulated (the
        // gradient of x[mask]), against the positions' advanced indexing.
        std::vector<std::optional<Tensor>> by_mask{m}, by_place;
        for (int64_t d = 0; d < k; ++d) by_place.emplace_back(nz.select(1, d));
        const Tensor vals = rand(got.sizes());
        for (bool accumulate : {false, true}) {
          Tensor a = x.clone(), b = x.clone();
          index_put_(a, by_mask, vals, accumulate);
          index_put_(b, by_place, vals, accumulate);
          EXPECT_TRUE(a.allclose(b)) << "accumulate " << accumulate;
        }
        // One row broadcast to every true place.
        std::vector<int64_t> one_row = want_shape;
        one_row[0] = 1;
        const Tensor row = rand(one_row);
        Tensor d = x.clone(), e = x.clone();
        index_put_(d, by_mask, row);
        index_put_(e, by_place, row);
        EXPECT_TRUE(d.equal(e));
        std::vector<int64_t> wrong_shape = want_shape;
        wrong_shape[0] += 2;  // never 1, which would broadcast
        Tensor c = x.clone();
        EXPECT_ERROR("index_put_: shape mismatch", index_put_(c, by_mask, rand(wrong_shape)));
        Tensor selected_leaf = x.detach().clone().requires_grad_(true);
        selected_leaf.masked_select(broadcast).sum().backward();
        EXPECT_TRUE(selected_leaf.grad().equal(broadcast.to(kFloat)));
      }
    }
}
