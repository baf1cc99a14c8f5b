#include <algorithm>
#include <cmath>
#include <limits>

#include "../test_util.h"

using namespace brasa;

TEST(Reduction, SumMeanProdOverDims) {
  auto t = arange(24, kFloat).view({2, 3, 4});
  EXPECT_VALUES(t.sum(), {276});
  EXPECT_SHAPE(t.sum(1), {2, 4});
  EXPECT_VALUES(t.sum(1), {12, 15, 18, 21, 48, 51, 54, 57});
  EXPECT_SHAPE(t.sum({0, 2}, true), {1, 3, 1});
  EXPECT_VALUES(t.sum({0, 2}), {60, 92, 124});
  EXPECT_VALUES(t.sum(-1), {6, 22, 38, 54, 70, 86});
  EXPECT_VALUES(t.sum(0), {12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});  // leading dim
  EXPECT_VALUES(t.mean({0, 1}), {10, 11, 12, 13});
  EXPECT_VALUES(t.transpose(0, 2).sum(0), {6, 54, 22, 70, 38, 86});  // non-contiguous
  EXPECT_VALUES(tensor({1, 2, 3, 4}).prod(), {24});
  EXPECT_VALUES(arange(1, 7).view({2, 3}).prod(1), {6, 120});
  EXPECT_EQ(tensor({1, 2}, kInt).sum().dtype(), kLong);
  EXPECT_EQ(tensor({true, true}).sum().item<int64_t>(), 2);
  EXPECT_EQ(t.sum(kDouble).dtype(), kDouble);
  EXPECT_THROW(tensor({1, 2}).mean(), Error);
  EXPECT_VALUES(zeros({0}).sum(), {0});
  EXPECT_TRUE(std::isnan(zeros({0}).mean().item<float>()));
  EXPECT_VALUES(zeros({2, 0}).sum(1), {0, 0});
}

// Integer sums wrap around as PyTorch's do (and without undefined behaviour:
// found by tests/fuzz under UBSan), along rows and across them.
TEST(Reduction, IntegerSumsWrapAround) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  Tensor t = tensor(std::vector<int64_t>{big, 1, 1});
  EXPECT_EQ(t.sum().item<int64_t>(), std::numeric_limits<int64_t>::min() + 1);
  Tensor m = tensor(std::vector<int64_t>{big, big, 2, 2}).view({2, 2});
  EXPECT_EQ(m.sum(0)[1].item<int64_t>(), std::numeric_limits<int64_t>::min() + 1);
  EXPECT_EQ(m.sum(1)[0].item<int64_t>(), -2);
}

TEST(Reduction, LongSumIsAccurateAndParallel) {
  auto big = ones({3000001});
  EXPECT_EQ(big.sum().item<double>(), 3000001.0);
  auto r = full({1000, 1000}, 0.1);
  EXPECT_NEAR(r.sum().item<double>(), 100000.0, 0.05);  // a few float ulps
  EXPECT_NEAR(r.sum(0).index({5}).item<double>(), 100.0, 1e-3);
  EXPECT_NEAR(r.sum(1).index({5}).item<double>(), 100.0, 1e-3);
}

// Float rows are summed four at a time; each row's sum must be exactly the
// one it gets alone, at any thread count, and land at its own index.
TEST(Reduction, GroupedRowSumsEqualEachRowAlone) {
  const int saved_threads = get_num_threads();
  manual_seed(5);
  for (int64_t K : {1, 3, 4, 5, 9, 30}) {
    for (int64_t R : {1, 5, 13, 16, 17, 64, 65, 100, 128, 224, 231, 1000, 4096, 4100, 9000}) {
      // Row k holds values near k, so a sum stored at the wrong index shows.
      Tensor m = rand({K, R}) + arange(K, kFloat).view({K, 1});
      Tensor ref = m.to(kDouble).sum(1);
      set_num_threads(1);
      Tensor one = m.sum(1);
      set_num_threads(2);
      Tensor two = m.sum(1);
      EXPECT_TRUE(equal(one, two)) << K << "x" << R;
      EXPECT_LT(((one.to(kDouble) - ref) / ref).abs().max().item<double>(), 1e-6) << K << "x" << R;
      for (int64_t k = 0; k < K; ++k)
        ASSERT_EQ(one[k].item<float>(), m[k].sum().item<float>()) << K << "x" << R << " row " << k;
    }
  }
  // One long row in 64 Ki chunks, four at a time, the last one short.
  for (int64_t n : {int64_t{9} * 65536 + 1000, int64_t{4} * 65536, int64_t{65536} + 1}) {
    Tensor x = rand({n}) - 0.25;
    const double ref = x.to(kDouble).sum().item<double>();
    set_num_threads(1);
    const float one = x.sum().item<float>();
    set_num_threads(2);
    const float two = x.sum().item<float>();
    EXPECT_EQ(one, two) << n;
    EXPECT_NEAR(one, ref, 1e-6 * std::abs(ref) + 1e-3) << n;
  }
  set_num_threads(saved_threads);
}

TEST(Reduction, MaxMinArgAmax) {
  auto t = tensor({{3.0, 7.0, 1.0}, {9.0, -2.0, 9.0}});
  EXPECT_VALUES(t.max(), {9});
  EXPECT_VALUES(t.min(), {-2});
  auto [v, i] = t.max(1);
  EXPECT_VALUES(v, {7, 9});
  EXPECT_VALUES(i, {1, 0});  // first of ties
  auto [mv, mi] = t.min(0, true);
  EXPECT_SHAPE(mv, {1, 3});
  EXPECT_VALUES(mi, {0, 1, 0});
  EXPECT_VALUES(t.amax(0), {9, 7, 9});
  EXPECT_VALUES(t.amin({0, 1}), {-2});
  EXPECT_VALUES(t.argmax(), {3});
  EXPECT_VALUES(t.argmin(1), {2, 1});
  EXPECT_TRUE(std::isnan(tensor({1.0, NAN, 3.0}).max().item<float>()));
  EXPECT_EQ(tensor({1.0, NAN, 3.0}).argmax().item<int64_t>(), 1);
  EXPECT_VALUES(max(tensor({1, 5}), tensor({4, 2})), {4, 5});
}

TEST(Reduction, VarStdNormLogsumexp) {
  auto x = tensor({1.0, 2.0, 3.0, 4.0});
  EXPECT_CLOSE(x.var(), std::vector<double>({1.6666667}), 1e-6);
  EXPECT_CLOSE(x.var(false), std::vector<double>({1.25}), 1e-6);
  EXPECT_CLOSE(x.std(), std::vector<double>({std::sqrt(5.0 / 3)}), 1e-6);
  auto m = tensor({{1.0, 3.0}, {2.0, 6.0}});
  EXPECT_CLOSE(m.var({0}), std::vector<double>({0.5, 4.5}), 1e-6);
  EXPECT_CLOSE(m.std({1}, true, true), std::vector<double>({std::sqrt(2.0), std::sqrt(8.0)}), 1e-6);
  auto v = tensor({3.0, -4.0});
  EXPECT_CLOSE(v.norm(), std::vector<double>({5}), 1e-6);
  EXPECT_CLOSE(v.norm(1), std::vector<double>({7}), 1e-6);
  EXPECT_CLOSE(v.norm(INFINITY), std::vector<double>({4}), 1e-6);
  EXPECT_CLOSE(v.norm(-INFINITY), std::vector<double>({3}), 1e-6);
  EXPECT_CLOSE(v.norm(3), std::vector<double>({std::cbrt(91.0)}), 1e-5);
  EXPECT_CLOSE(m.norm(2, {1}), std::vector<double>({std::sqrt(10.0), std::sqrt(40.0)}), 1e-5);
  EXPECT_CLOSE(x.logsumexp({0}), std::vector<double>({4.4401897}), 1e-5);
  EXPECT_CLOSE(tensor({1000.0, 1000.0}).logsumexp({0}), std::vector<double>({1000 + std::log(2.0)}),
               1e-3);
  EXPECT_THROW(tensor({1, 2}).norm(), Error);
  EXPECT_TRUE(std::isnan(tensor({1.0}).var().item<float>()));
}

TEST(Reduction, AllAnyCount) {
  auto b = tensor({{true, false}, {true, true}});
  EXPECT_FALSE(b.all().item<bool>());
  EXPECT_TRUE(b.any().item<bool>());
  EXPECT_VALUES(b.all(0), {1, 0});
  EXPECT_VALUES(b.any(1), {1, 1});
  EXPECT_TRUE(tensor({1, 2}).all().item<bool>());
  EXPECT_TRUE(zeros({0}).all().item<bool>());
  EXPECT_FALSE(zeros({0}).any().item<bool>());
  EXPECT_EQ(tensor({0, 1, 2}, kByte).all().dtype(), kByte);
  EXPECT_VALUES(count_nonzero(tensor({0, 1, 2})), {2});
}

TEST(Reduction, SoftmaxLogSoftmaxStable) {
  auto x = tensor({{1.0, 2.0, 3.0}, {1000.0, 1000.0, 1000.0}});
  auto s = x.softmax(1);
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_CLOSE(s,
               std::vector<double>({std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z, 1. / 3,
                                    1. / 3, 1. / 3}),
               1e-6);
  auto ls = x.log_softmax(1);
  EXPECT_CLOSE(ls.index({0}),
               std::vector<double>({1 - std::log(z), 2 - std::log(z), 3 - std::log(z)}), 1e-5);
  EXPECT_CLOSE(x.softmax(0).index({indexing::Slice(), 0}), std::vector<double>({0, 1}), 1e-6);
  auto d = x.to(kDouble).softmax(-1);
  EXPECT_NEAR(d.index({0, 2}).item<double>(), std::exp(3.0) / z, 1e-12);
  auto wide = randn({3, 1001});
  EXPECT_CLOSE(wide.softmax(1).sum(1), std::vector<double>({1, 1, 1}), 1e-5);
  EXPECT_EQ(tensor({1.0}).softmax(0, kDouble).dtype(), kDouble);
  EXPECT_THROW(tensor({1, 2}).softmax(0), Error);
  auto with_nan = tensor({1.0, 2, 3, 4, 5, 6, 7, 8, NAN, 10}).softmax(0);
  EXPECT_TRUE(with_nan.isnan().all().item<bool>());
  auto nan_in_lanes = cat({tensor({NAN}), zeros({15})}).softmax(0);
  EXPECT_TRUE(nan_in_lanes.isnan().all().item<bool>());
  auto inf = tensor({-INFINITY, 0.0});
  EXPECT_CLOSE(inf.softmax(0), std::vector<double>({0, 1}), 0);
  // The float kernel against float64 on rows with a wide spread (tiny terms
  // become 0 or stay below the smallest normal float), lengths off the
  // 16-lane blocks, and all -inf.
  manual_seed(3);
  Tensor rows = randn({5, 1037}) * 30.0;
  Tensor ref = rows.to(kDouble).softmax(1), got = rows.softmax(1);
  EXPECT_LT((got.to(kDouble) - ref).abs().max().item<double>(), 1e-6);
  EXPECT_LT(((got.to(kDouble) - ref).abs() / ref.clamp_min(1e-30))
                .masked_select(ref > 1e-30)
                .max()
                .item<double>(),
            1e-5);
  EXPECT_LT((rows.log_softmax(1).to(kDouble) - rows.to(kDouble).log_softmax(1))
                .abs()
                .max()
                .item<double>(),
            1e-3);
  EXPECT_TRUE(full({2, 20}, -INFINITY).softmax(1).isnan().all().item<bool>());
  // Long rows go in chunks of 4096 (each on its own max, rescaled at the
  // end): a chunk of only -inf, a NaN or a +inf in a later chunk, log_softmax
  // too.
  Tensor long_row = cat({full({4800}, -INFINITY), randn({11200}) * 20.0});
  Tensor long_ref = long_row.to(kDouble).softmax(0);
  EXPECT_LT((long_row.softmax(0).to(kDouble) - long_ref).abs().max().item<double>(), 1e-6);
  EXPECT_EQ(long_row.softmax(0).narrow(0, 0, 4800).abs().sum().item<float>(), 0.0f);
  Tensor long_log = long_row.log_softmax(0);
  EXPECT_TRUE(long_log.narrow(0, 0, 4800).eq(-INFINITY).all().item<bool>());
  EXPECT_LT((long_log.narrow(0, 4800, 11200).to(kDouble) -
             long_row.to(kDouble).log_softmax(0).narrow(0, 4800, 11200))
                .abs()
                .max()
                .item<double>(),
            1e-4);
  for (float bad : {NAN, INFINITY}) {
    Tensor r = randn({3, 12000});
    r.index_put_({1, 10400}, bad);
    EXPECT_TRUE(r.softmax(1)[1].isnan().all().item<bool>()) << bad;
    EXPECT_TRUE(r.log_softmax(1)[1].isnan().all().item<bool>()) << bad;
    EXPECT_FALSE(r.softmax(1)[0].isnan().any().item<bool>()) << bad;
  }
}

// Chunks after the first are shifted by the max so far (their own max is
// found on the side): rows that jump far above it, climb steadily, fall far
// below it, or hold infinities of both signs in a later chunk.
TEST(Reduction, SoftmaxChunksShiftedByTheMaxSoFar) {
  manual_seed(5);
  const int64_t R = 16384, C = 4096;  // four chunks
  Tensor rows = randn({6, R});
  rows.index_put_({0, indexing::Slice(2 * C, 3 * C)},
                  randn({C}) + 100.0);                                  // a jump of ~100 in chunk 2
  rows.index_put_({1}, arange(R, kFloat) * 0.0625);                     // climbs 256 per chunk
  rows.index_put_({2, indexing::Slice(C, R)}, randn({R - C}) - 200.0);  // far below chunk 0
  rows.index_put_({3, indexing::Slice(4800, 5600)}, -INFINITY);         // partly -inf later on
  rows.index_put_({4, indexing::Slice(C, 2 * C)}, randn({C}) + 63.0);   // just inside the headroom
  Tensor ref = rows.to(kDouble).softmax(1);
  Tensor got = rows.softmax(1);
  EXPECT_LT((got.narrow(0, 0, 5).to(kDouble) - ref.narrow(0, 0, 5)).abs().max().item<double>(),
            1e-6);
  EXPECT_LT((got.narrow(0, 0, 5).to(kDouble).sum(1) - 1).abs().max().item<double>(), 1e-5);
  EXPECT_EQ(got[2].narrow(0, C, R - C).abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(got[3].narrow(0, 4800, 800).abs().sum().item<float>(), 0.0f);
  Tensor log_ref = rows.to(kDouble).log_softmax(1);
  Tensor log_got = rows.log_softmax(1);
  for (int64_t r : {0, 1, 4})
    EXPECT_LT((log_got[r].to(kDouble) - log_ref[r]).abs().max().item<double>(), 1e-4) << r;
  // +inf and -inf in one later chunk: the row is NaN, as with +inf alone.
  Tensor both = randn({R});
  both.index_put_({8800}, INFINITY);
  both.index_put_({9600}, -INFINITY);
  EXPECT_TRUE(both.softmax(0).isnan().all().item<bool>());
  EXPECT_TRUE(both.log_softmax(0).isnan().all().item<bool>());
}

// The rows of a 2-D tensor except `skip`.
static Tensor rows_without(const Tensor& t, std::vector<int64_t> skip) {
  std::vector<int64_t> keep;
  for (int64_t r = 0; r < t.size(0); ++r)
    if (std::find(skip.begin(), skip.end(), r) == skip.end()) keep.push_back(r);
  return t.index_select(0, tensor(keep, kLong));
}

// An output of 8 MiB or more is written with streaming stores from a scratch
// row (log_softmax: directly): the same values, the special rows included,
// on 1 and 2 threads.
TEST(Reduction, LargeSoftmaxStreamsItsOutput) {
  const int saved_threads = get_num_threads();
  manual_seed(11);
  Tensor x = randn({130, 16384}) * 8.0;  // 8.1 MiB of output, rows of four chunks
  x.index_put_({3, 9000}, NAN);
  x.index_put_({5, indexing::Slice(0, 4800)}, -INFINITY);  // a whole chunk of -inf and some
  x.index_put_({7}, -INFINITY);
  x.index_put_({9, 14000}, INFINITY);
  Tensor ref = x.to(kDouble).softmax(1);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor got = x.softmax(1);
    Tensor finite_rows = rows_without(got, {3, 7, 9}), finite_ref = rows_without(ref, {3, 7, 9});
    EXPECT_LT((finite_rows.to(kDouble) - finite_ref).abs().max().item<double>(), 1e-6) << threads;
    EXPECT_LT((finite_rows.to(kDouble).sum(1) - 1).abs().max().item<double>(), 1e-5) << threads;
    EXPECT_EQ(got[5].narrow(0, 0, 4800).abs().sum().item<float>(), 0.0f);
    EXPECT_TRUE(got[3].isnan().all().item<bool>());
    EXPECT_TRUE(got[7].isnan().all().item<bool>());
    EXPECT_TRUE(got[9].isnan().all().item<bool>());  // +inf: inf - inf, as in PyTorch
    Tensor log_got = x.log_softmax(1);
    Tensor log_ref = rows_without(x.to(kDouble).log_softmax(1), {3, 5, 7, 9});
    EXPECT_LT(
        (rows_without(log_got, {3, 5, 7, 9}).to(kDouble) - log_ref).abs().max().item<double>(),
        1e-4);
    EXPECT_TRUE(log_got[5].narrow(0, 0, 4800).eq(-INFINITY).all().item<bool>());
    EXPECT_TRUE(log_got[3].isnan().all().item<bool>());
    // A row length off the 8-lane blocks keeps the cached path.
    Tensor odd = x.narrow(1, 0, 16381).contiguous();
    Tensor odd_ref = odd.to(kDouble).softmax(1);
    EXPECT_LT(
        (rows_without(odd.softmax(1), {3, 7, 9}).to(kDouble) - rows_without(odd_ref, {3, 7, 9}))
            .abs()
            .max()
            .item<double>(),
        1e-6);
  }
  set_num_threads(saved_threads);
}
// Rows of up to 4096 values with an output of 8 MiB or more go through one
// pass that finds the next row's max, takes this row's exps and writes the
// previous row out: special rows (NaN, +inf, all -inf; first, last and next
// to each other) come out NaN; row lengths with an 8-value tail (1000) or
// only one (8), on 1 and 2 threads.
TEST(Reduction, LargeSoftmaxRowsPipelined) {
  const int saved_threads = get_num_threads();
  manual_seed(12);
  struct Case {
    int64_t K, R;
    std::vector<int64_t> nan_rows, inf_rows, minus_inf_rows;
  };
  const std::vector<Case> cases = {
      {2112, 1000, {0, 1055, 2111}, {1056, 7}, {1, 1057}},
      {520, 4096, {}, {}, {}},
      {262200, 8, {5}, {}, {262198}},
  };
  for (const Case& c : cases) {
    Tensor x = randn({c.K, c.R}) * 8.0;
    x.index_put_({3, indexing::Slice(0, c.R / 2)}, -INFINITY);  // a finite max: zeros
    for (int64_t r : c.nan_rows) x.index_put_({r, c.R - 3}, NAN);
    for (int64_t r : c.inf_rows) x.index_put_({r, c.R / 3}, INFINITY);
    for (int64_t r : c.minus_inf_rows) x.index_put_({r}, -INFINITY);
    std::vector<int64_t> special = c.nan_rows;
    special.insert(special.end(), c.inf_rows.begin(), c.inf_rows.end());
    special.insert(special.end(), c.minus_inf_rows.begin(), c.minus_inf_rows.end());
    Tensor ref = rows_without(x.to(kDouble).softmax(1), special);
    Tensor log_ref = x.narrow(0, 4, c.K - 4).to(kDouble).log_softmax(1);
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      Tensor got = x.softmax(1), log_got = x.log_softmax(1);
      Tensor finite_rows = rows_without(got, special).to(kDouble);
      EXPECT_LT((finite_rows - ref).abs().max().item<double>(), 1e-6) << c.R << " " << threads;
      EXPECT_LT((finite_rows.sum(1) - 1).abs().max().item<double>(), 1e-5) << c.R;
      EXPECT_EQ(got[3].narrow(0, 0, c.R / 2).abs().sum().item<float>(), 0.0f) << c.R;
      for (int64_t r : special) {
        EXPECT_TRUE(got[r].isnan().all().item<bool>()) << c.R << " row " << r;
        EXPECT_TRUE(log_got[r].isnan().all().item<bool>()) << c.R << " row " << r;
      }
      // log_softmax: rows from 4 on that are not special.
      Tensor log_rows = log_got.narrow(0, 4, c.K - 4).to(kDouble);
      Tensor ok = ones({c.K - 4}, kBool);
      for (int64_t r : special)
        if (r >= 4) ok.index_put_({r - 4}, false);
      EXPECT_LT((log_rows - log_ref).index({ok}).abs().max().item<double>(), 1e-4) << c.R;
    }
  }
  set_num_threads(saved_threads);
}

// PyTorch differentiates cumprod through zeros: before the first zero as
// usual, at it the product of the others, after it zero.
TEST(Reduction, CumprodGradientThroughZeros) {
  Tensor x = tensor({2.f, 0, 3, 4}).requires_grad_();
  x.cumprod(0).sum().backward();
  EXPECT_VALUES(x.grad(), {1, 32, 0, 0});
  Tensor two = tensor({0.f, 5, 0, 2}).requires_grad_();
  two.cumprod(0).sum().backward();
  EXPECT_VALUES(two.grad(), {6, 0, 0, 0});
  // The same lines as the columns of a matrix (cumprod along dim 0).
  Tensor m = tensor({2.f, 0, 0, 5, 3, 0, 4, 2}).reshape({4, 2}).requires_grad_();
  EXPECT_VALUES(cumsum(eq(m.detach(), 0), 0), {0, 1, 1, 1, 1, 2, 1, 2});
  m.cumprod(0).sum().backward();
  EXPECT_VALUES(m.grad(), {1, 6, 32, 0, 0, 0, 0, 0});
}

TEST(Reduction, CumsumCumprod) {
  auto t = tensor({{1, 2, 3}, {4, 5, 6}});
  EXPECT_VALUES(t.cumsum(1), {1, 3, 6, 4, 9, 15});
  EXPECT_VALUES(t.cumsum(0), {1, 2, 3, 5, 7, 9});
  EXPECT_VALUES(t.cumprod(1), {1, 2, 6, 4, 20, 120});
  EXPECT_EQ(tensor({1, 2}, kInt).cumsum(0).dtype(), kLong);
  EXPECT_VALUES(tensor({0.5, 0.5}).cumsum(0, kDouble), {0.5, 1});
}

TEST(Reduction, SortArgsortTopkUnique) {
  auto t = tensor({{3.0, 1.0, 2.0}, {NAN, 5.0, -1.0}});
  auto [v, i] = t.sort(1);
  EXPECT_VALUES(i, {1, 2, 0, 2, 1, 0});
  EXPECT_EQ(v.index({0, 0}).item<float>(), 1.0f);
  EXPECT_TRUE(std::isnan(v.index({1, 2}).item<float>()));  // NaN sorts last
  auto [dv, di] = tensor({1, 3, 2, 3}).sort(0, true);
  EXPECT_VALUES(dv, {3, 3, 2, 1});
  EXPECT_VALUES(di, {1, 3, 2, 0});  // stable
  EXPECT_VALUES(tensor({5, 1, 4}).argsort(), {1, 2, 0});
  auto [tv, ti] = tensor({1.0, 9.0, 3.0, 7.0}).topk(2);
  EXPECT_VALUES(tv, {9, 7});
  EXPECT_VALUES(ti, {1, 3});
  auto [sv, si] = tensor({1.0, 9.0, 3.0, 7.0}).topk(2, -1, false);
  EXPECT_VALUES(sv, {1, 3});
  auto [u, inv, cnt] = unique(tensor({3, 1, 3, 2, 1}), true, true, true);
  EXPECT_VALUES(u, {1, 2, 3});
  EXPECT_VALUES(inv, {2, 0, 2, 1, 0});
  EXPECT_VALUES(cnt, {2, 1, 2});
  auto [kv, ki] = kthvalue(tensor({4.0, 1.0, 3.0}), 2);
  EXPECT_VALUES(kv, {3});
  EXPECT_VALUES(ki, {2});
  EXPECT_THROW(tensor({1, 2}).topk(3), Error);
}

// topk with small k keeps sorted buffers and passes over blocks with
// nothing better: against a stable full sort (ties keep the earlier index,
// NaN greatest), largest and smallest, with NaNs, ties and rows that are not
// a multiple of the block, for float (the SSE2 scan), double, int and half;
// k above the buffers takes the partial sort.
TEST(Reduction, TopkMatchesAStableSortWithTiesAndNaN) {
  manual_seed(3);
  for (ScalarType dt : {kFloat, kDouble, kInt, kHalf}) {
    Tensor x = randint(0, 40, {7, 203}).to(dt);  // many ties
    if (isFloatingType(dt)) {
      x[1][7] = NAN;
      x[1][150] = NAN;
      x[2].fill_(NAN);
    }
    for (bool largest : {true, false})
      for (int64_t k : {1, 5, 64, 100}) {
        SCOPED_TRACE(::testing::Message() << toString(dt) << " largest " << largest << " k " << k);
        auto [v, i] = x.topk(k, 1, largest);
        auto [sv, si] = x.sort(/*stable=*/true, 1, /*descending=*/largest);
        // Values always agree (NaN where NaN); positions where no tie or a
        // buffer (k <= 64) makes them unique.
        Tensor want = sv.narrow(1, 0, k);
        EXPECT_TRUE(v.to(kDouble).nan_to_num(1e9).equal(want.to(kDouble).nan_to_num(1e9)));
        EXPECT_TRUE(
            x.gather(1, i).to(kDouble).nan_to_num(1e9).equal(v.to(kDouble).nan_to_num(1e9)));
        if (k <= 64) {
          EXPECT_TRUE(i.equal(si.narrow(1, 0, k)));
        }
      }
  }
}

// Sorting rows short enough for insertion, long ones, and partial sorts
// (topk beyond its buffers) against std::stable_sort of positions: ties keep
// the earlier position, NaN is greatest, stable or not.
TEST(Reduction, SortOfShortAndLongRowsIsTheStableOrder) {
  manual_seed(11);
  for (ScalarType dt : {kFloat, kDouble, kInt, kHalf})
    for (int64_t R : {1, 2, 7, 31, 32, 33, 100, 203}) {
      Tensor x = randint(0, R / 3 + 2, {5, R}).to(dt);  // ties in every row
      if (isFloatingType(dt) && R > 3) {
        x[1][R / 2] = NAN;
        x[1][0] = NAN;
        x[2][R - 1] = -0.0;
        x[3].fill_(NAN);
      }
      const Tensor xd = x.to(kDouble).contiguous();
      const double* p = xd.data_ptr<double>();
      for (bool descending : {false, true})
        for (bool stable : {false, true}) {
          SCOPED_TRACE(::testing::Message() << toString(dt) << " R " << R << " descending "
                                            << descending << " stable " << stable);
          auto [v, i] = x.sort(stable, 1, descending);
          auto [tv, ti] = x.topk(std::max<int64_t>(1, R - 1), 1, descending);
          const Tensor vd = v.to(kDouble).contiguous(), il = i.contiguous();
          const Tensor ti_l = ti.contiguous();
          for (int64_t row = 0; row < 5; ++row) {
            const double* r = p + row * R;
            auto less = [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; };
            std::vector<int64_t> want(static_cast<size_t>(R));
            for (int64_t j = 0; j < R; ++j) want[static_cast<size_t>(j)] = j;
            std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
              return descending ? less(r[b], r[a]) : less(r[a], r[b]);
            });
            for (int64_t j = 0; j < R; ++j) {
              ASSERT_EQ(il[row][j].item<int64_t>(), want[static_cast<size_t>(j)])
                  << row << "," << j;
              const double got = vd[row][j].item<double>(),
                           expect = r[want[static_cast<size_t>(j)]];
              ASSERT_TRUE(got == expect || (std::isnan(got) && std::isnan(expect)));
              // topk of all but one: the sort's first R - 1 positions (k > 64: the partial sort).
              if (j < R - 1 || R == 1) {
                ASSERT_EQ(ti_l[row][j].item<int64_t>(), want[static_cast<size_t>(j)]);
              }
            }
          }
        }
    }
}

// A bool mask's sums (and count_nonzero) count its true places where it
// lies (no int64 copy): a long row, rows, and columns (the outer layout),
// against the sums of its int64 copy.
TEST(Reduction, BoolSumsCountTheTruePlaces) {
  manual_seed(21);
  const Tensor long_row = rand({200003}) > 0.3, grid = rand({50, 301}) > 0.6;
  EXPECT_EQ(long_row.sum().dtype(), kLong);
  EXPECT_EQ(long_row.sum().item<int64_t>(), long_row.to(kLong).sum().item<int64_t>());
  EXPECT_TRUE(grid.sum(0).equal(grid.to(kLong).sum(0)));
  EXPECT_TRUE(grid.sum(1).equal(grid.to(kLong).sum(1)));
  EXPECT_TRUE(grid.t().sum(1, true).equal(grid.to(kLong).t().sum(1, true)));
  EXPECT_EQ(grid.sum().item<int64_t>(), grid.to(kLong).sum().item<int64_t>());
  EXPECT_EQ(grid.sum(kInt).dtype(), kInt);
  EXPECT_EQ(grid.sum(kInt).item<int64_t>(), grid.to(kLong).sum().item<int64_t>());
  EXPECT_EQ(count_nonzero(grid).item<int64_t>(), grid.to(kLong).sum().item<int64_t>());
  EXPECT_EQ(count_nonzero(grid).dtype(), kLong);
  EXPECT_TRUE(count_nonzero(grid, 0).equal(grid.to(kLong).sum(0)));
}

TEST(Reduction, SixteenBitFloatsAndIntegers) {
  for (auto t : {kHalf, kBFloat16}) {
    auto x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, t);
    EXPECT_EQ(x.sum().dtype(), t);
    EXPECT_VALUES(x.sum(), {21});
    EXPECT_VALUES(x.sum(0), {5, 7, 9});
    EXPECT_VALUES(x.mean(1), {2, 5});
    EXPECT_VALUES(x.amax(1), {3, 6});
    EXPECT_VALUES(x.argmin(1), {0, 0});
    EXPECT_VALUES(x.cumsum(1), {1, 3, 6, 4, 9, 15});
    EXPECT_CLOSE(x.softmax(1).sum(1), std::vector<double>({1, 1}), 1e-2);
    EXPECT_CLOSE(x.var(IntArrayRef{1}), std::vector<double>({1, 1}), 1e-2);
    auto [v, i] = x.sort(1, true);
    EXPECT_VALUES(v, {3, 2, 1, 6, 5, 4});
  }
  for (auto t : {kByte, kChar, kShort, kInt, kLong}) {
    auto x = tensor({{1, 2, 3}, {4, 5, 6}}, t);
    EXPECT_EQ(x.sum().dtype(), kLong);
    EXPECT_VALUES(x.sum(1), {6, 15});
    EXPECT_VALUES(x.prod(1), {6, 120});
    EXPECT_VALUES(std::get<0>(x.max(0)), {4, 5, 6});
    EXPECT_VALUES(x.argmax(), {5});
    EXPECT_VALUES(x.cumprod(1), {1, 2, 6, 4, 20, 120});
    EXPECT_TRUE(x.all().item<bool>());
  }
}

// Softmax, log-softmax, cumsum and cumprod along a middle dim run their own
// kernel (no transposing copies): they agree with the same map along the last
// dim of the moved tensor (the row kernels, tested above), on runs of
// columns that are not multiples of the kernel's (70 = 64 + 6) and on fewer
// columns than a vector (10, over 20 rows: float softmax transposes those
// slabs), with NaN and -inf columns, in every dtype family.
TEST(Reduction, MapsAlongAMiddleDimAgreeWithTheLastDim) {
  manual_seed(9);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t inner : {70, 10})
    for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16}) {
      SCOPED_TRACE(::testing::Message() << t << " inner " << inner);
      Tensor x = randn({3, 20, inner}, TensorOptions().dtype(kDouble));
      x.select(2, 1).fill_(-inf);                          // a column of -inf only
      x.select(2, 2).select(0, 1)[3].fill_(std::nan(""));  // a NaN in one column
      x = x.to(t);
      const double tol = t == kHalf || t == kBFloat16 ? 2e-2 : t == kFloat ? 1e-6 : 1e-12;
      auto along_last = [&](Tensor (*f)(const Tensor&, int64_t, std::optional<ScalarType>)) {
        return f(x.movedim(1, -1).contiguous(), -1, std::nullopt).movedim(-1, 1);
      };
      struct Case {
        const char* name;
        Tensor (*f)(const Tensor&, int64_t, std::optional<ScalarType>);
      };
      for (const Case& c : {Case{"softmax", softmax}, Case{"log_softmax", log_softmax},
                            Case{"cumsum", cumsum}, Case{"cumprod", cumprod}}) {
        SCOPED_TRACE(c.name);
        Tensor got = c.f(x, 1, std::nullopt), want = along_last(c.f);
        ASSERT_EQ(got.sizes(), x.sizes());
        EXPECT_TRUE(got.to(kDouble).allclose(want.to(kDouble), tol, tol, true));
        EXPECT_TRUE(isnan(got).equal(isnan(want)));
      }
    }
  // A -inf column's softmax is NaN (all of exp are 0), as along the last dim.
  Tensor s = softmax(full({2, 3, 2}, -inf), 1);
  EXPECT_TRUE(isnan(s).all().item<bool>());
  // Integers: cumsum in int64 by default, exact.
  Tensor i = arange(24, TensorOptions().dtype(kInt)).view({2, 3, 4});
  EXPECT_EQ(cumsum(i, 1).dtype(), kLong);
  EXPECT_VALUES(cumsum(i, 1).select(0, 1), {12, 13, 14, 15, 28, 30, 32, 34, 48, 51, 54, 57});
  EXPECT_VALUES(cumprod(i + 1, 1).select(0, 0).select(1, 0), {1, 5, 45});
}

// Along a dim of one element softmax is 1 and log_softmax 0, NaN where the
// value is NaN or infinite (as a longer row holding them gives), with
// gradients of zero; the dtype argument is kept.
TEST(Reduction, SoftmaxAlongADimOfOneElement) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = tensor({0.5, -3.0, inf, -inf, std::nan(""), 7.0}).view({2, 1, 3});
  Tensor s = softmax(x, 1), l = log_softmax(x, 1);
  const std::vector<double> ones = {1, 1, NAN, NAN, NAN, 1}, zeros = {0, 0, NAN, NAN, NAN, 0};
  for (int64_t i = 0; i < 6; ++i) {
    const double si = s.reshape({-1})[i].item<double>(), li = l.reshape({-1})[i].item<double>();
    if (std::isnan(ones[i])) {
      EXPECT_TRUE(std::isnan(si) && std::isnan(li)) << i;
    } else {
      EXPECT_EQ(si, ones[i]) << i;
      EXPECT_EQ(li, zeros[i]) << i;
    }
  }
  EXPECT_EQ(softmax(x.to(kFloat), 1, kDouble).dtype(), kDouble);
  Tensor leaf = randn({4, 1, 2}).requires_grad_(true);
  (softmax(leaf, 1) * randn({4, 1, 2})).sum().backward();
  EXPECT_EQ(leaf.grad().abs().max().item<float>(), 0.0f);
}

// Norms along a dim sum in 8 lanes and a tail: rows of 21 (2 x 8 + 5) give
// the formulas' values for p = 0, 1, 2, 3 and inf, NaN included.
TEST(Reduction, NormAlongADimInLanes) {
  manual_seed(10);
  Tensor x = randn({6, 21}, TensorOptions().dtype(kDouble));
  x[2][3] = 0.0;
  x[4][20].fill_(std::nan(""));
  Tensor a = x.abs();
  for (double p : {0.0, 1.0, 2.0, 3.0}) {
    SCOPED_TRACE(p);
    Tensor want = p == 0 ? (a != 0).to(kDouble).sum(1) : a.pow(p).sum(1).pow(1.0 / p);
    for (ScalarType t : {kFloat, kDouble}) {
      Tensor got = norm(x.to(t), p, {1}, false).to(kDouble);
      EXPECT_TRUE(got.allclose(want, t == kFloat ? 1e-6 : 1e-13, 0, true)) << t;
    }
  }
  EXPECT_TRUE(norm(x, INFINITY, {1}, false).allclose(std::get<0>(a.max(1)), 0, 0, true));
  EXPECT_TRUE(std::isnan(norm(x, 2.0, {1}, false)[4].item<double>()));
  EXPECT_EQ(norm(x, 0.0, {1}, false)[2].item<double>(), 20.0);
}

// Reductions over one block of dims between kept ones read the columns where
// they lie, and a whole reduction of a channels-last tensor reads it in memory
// order: the same values as reducing a copy laid out as trailing rows.
TEST(Reduction, MiddleDimsAndDenseLayoutsAgreeWithTrailingRows) {
  manual_seed(11);
  const std::vector<std::vector<int64_t>> shapes{
      {3, 7, 5}, {2, 1030, 3}, {4, 9, 1500}, {2, 3, 4, 5}, {1, 64, 1}};
  for (const auto& shape : shapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    Tensor x = randn(shape);
    const int64_t nd = static_cast<int64_t>(shape.size());
    // Reduce dims [1, nd - 1): move them last and reduce trailing rows.
    std::vector<int64_t> dims, perm{0, nd - 1};
    for (int64_t d = 1; d < nd - 1; ++d) dims.push_back(d), perm.push_back(d);
    Tensor moved = x.permute(perm).contiguous().flatten(2);
    EXPECT_TRUE(allclose(x.sum(dims), moved.sum(2), 1e-5, 1e-5));
    EXPECT_TRUE(allclose(x.mean(dims, true).squeeze(), moved.mean(2).squeeze(), 1e-5, 1e-5));
    EXPECT_TRUE(allclose(x.amax(dims), moved.amax(2), 0, 0));
    EXPECT_TRUE(allclose(x.amin(dims), moved.amin(2), 0, 0));
    EXPECT_TRUE(allclose(x.var(dims), moved.var(2), 1e-5, 1e-5));
    EXPECT_TRUE(allclose(x.logsumexp(dims), moved.logsumexp(2), 1e-5, 1e-5));
    if (nd == 3) {
      auto [values, indices] = x.max(1);
      EXPECT_TRUE(equal(values, moved.amax(2)));
      EXPECT_TRUE(equal(indices, moved.argmax(2)));
      EXPECT_TRUE(equal((x > 0).any(1), (moved > 0).any(2)));
    }
    Tensor ints = randint(-50, 50, shape, TensorOptions().dtype(kInt));
    Tensor moved_ints = ints.permute(perm).contiguous().flatten(2);
    EXPECT_TRUE(equal(ints.sum(dims), moved_ints.sum(2)));
    EXPECT_TRUE(equal(ints.amax(dims), moved_ints.amax(2)));
    EXPECT_TRUE(equal(ints.amin(dims), moved_ints.amin(2)));
  }
  // A NaN anywhere in a column is its max and its min.
  Tensor x = randn({2, 6, 3});
  x.index_put_({1, 4, 2}, std::nan(""));
  Tensor mx = x.amax(1), mn = x.amin(1);
  EXPECT_TRUE(std::isnan(mx[1][2].item<float>()) && std::isnan(mn[1][2].item<float>()));
  EXPECT_EQ(mx.isnan().sum().item<int64_t>(), 1);
  EXPECT_EQ(mn.isnan().sum().item<int64_t>(), 1);

  // Whole reductions of channels-last and transposed tensors.
  Tensor base = randn({3, 8, 5, 7});
  for (const Tensor& t : {base.contiguous(MemoryFormat::ChannelsLast), base.transpose(1, 3)}) {
    Tensor c = t.contiguous();
    EXPECT_NEAR(t.sum().item<float>(), c.sum().item<float>(), 1e-3);
    EXPECT_NEAR(t.mean().item<float>(), c.mean().item<float>(), 1e-6);
    EXPECT_EQ(t.max().item<float>(), c.max().item<float>());
    EXPECT_NEAR(t.var().item<float>(), c.var().item<float>(), 1e-5);
    EXPECT_NEAR(t.norm().item<float>(), c.norm().item<float>(), 1e-3);
  }
}

// amax/amin share a gradient evenly between tied extremes (as PyTorch), with
// and without keepdim, over one dim and over several.
TEST(Reduction, AmaxAminGradientsShareTies) {
  Tensor x = tensor({{1.0, 3.0, 3.0}, {2.0, 2.0, 0.0}}).requires_grad_();
  x.amax(1).backward(tensor({1.0, 4.0}));
  EXPECT_VALUES(x.grad(), {0, 0.5, 0.5, 2, 2, 0});
  x.grad().zero_();
  x.amin({0}, true).backward(tensor({{1.0, 1.0, 6.0}}));
  EXPECT_VALUES(x.grad(), {1, 0, 0, 0, 1, 6});
  x.grad().zero_();
  x.amax().backward();  // the two 3s
  EXPECT_VALUES(x.grad(), {0, 0.5, 0.5, 0, 0, 0});
}

// The values-only max/min of rows (amax, amin, max()) run in vector lanes:
// the same values as the index-finding path, NaN wherever a row holds one,
// at every row length around the lanes' width.
TEST(Reduction, RowExtremesInLanesAgreeWithTheIndexPath) {
  manual_seed(12);
  for (ScalarType dtype : {kFloat, kDouble})
    for (int64_t n : {1, 5, 15, 16, 17, 31, 32, 33, 100, 1000}) {
      SCOPED_TRACE(::testing::Message() << dtype << " n " << n);
      Tensor x = randn({6, n}, TensorOptions().dtype(dtype));
      x[1].fill_(-std::numeric_limits<double>::infinity());
      x.index_put_({2, n - 1}, std::nan(""));  // NaN last
      x.index_put_({3, 0}, std::nan(""));      // NaN first
      x.index_put_({4, n / 2}, std::numeric_limits<double>::infinity());
      for (bool is_max : {true, false}) {
        Tensor lanes = is_max ? x.amax(1) : x.amin(1);
        Tensor indexed = std::get<0>(is_max ? x.max(1) : x.min(1));
        EXPECT_TRUE(lanes.isnan().equal(indexed.isnan()));
        EXPECT_TRUE(lanes.nan_to_num(0).equal(indexed.nan_to_num(0)));
        EXPECT_TRUE(std::isnan(lanes[2].item<double>()) && std::isnan(lanes[3].item<double>()));
      }
      EXPECT_EQ(x.amax(1)[4].item<double>(), std::numeric_limits<double>::infinity());
      EXPECT_EQ(x.amax(1)[1].item<double>(), -std::numeric_limits<double>::infinity());
      // Indices: the first extreme (row 5 has its max twice), the first NaN.
      if (n > 2) x.index_put_({5, n - 1}, x[5].max().item<double>());
      Tensor xd = x.to(kDouble).contiguous();
      const double* d = xd.data_ptr<double>();
      for (bool is_max : {true, false}) {
        Tensor idx = std::get<1>(is_max ? x.max(1) : x.min(1));
        EXPECT_TRUE(idx.equal(is_max ? x.argmax(1) : x.argmin(1)));
        for (int64_t r = 0; r < 6; ++r) {
          int64_t want = 0;
          for (int64_t i = 0; i < n; ++i) {
            const double v = d[r * n + i], b = d[r * n + want];
            if (std::isnan(b)) break;
            if (std::isnan(v) || (is_max ? v > b : v < b)) want = i;
          }
          EXPECT_EQ(idx[r].item<int64_t>(), want) << "row " << r << (is_max ? " max" : " min");
        }
      }
    }
}
