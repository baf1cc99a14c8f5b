#include <brasa/device/cpu_capability.h>

#include <array>

#include "../test_util.h"

using namespace brasa;

TEST(Linalg, MmAllLayoutsAndDtypes) {
  auto a = tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  auto b = tensor({{1.0, 0.0, 2.0}, {0.0, 1.0, 3.0}});
  EXPECT_VALUES(a.mm(b), {1, 2, 8, 3, 4, 18, 5, 6, 28});
  EXPECT_VALUES(b.t().mm(a.t()), {1, 3, 5, 2, 4, 6, 8, 18, 28});  // transposed operands
  EXPECT_VALUES(a.to(kDouble).mm(b.to(kDouble)), {1, 2, 8, 3, 4, 18, 5, 6, 28});
  EXPECT_VALUES(a.to(kLong).mm(b.to(kLong)), {1, 2, 8, 3, 4, 18, 5, 6, 28});
  EXPECT_VALUES(a.to(kHalf).mm(b.to(kHalf)), {1, 2, 8, 3, 4, 18, 5, 6, 28});
  auto sliced = arange(20, kFloat)
                    .view({4, 5})
                    .index({indexing::Slice(), indexing::Slice(indexing::None, indexing::None, 2)});
  EXPECT_VALUES(sliced.mm(ones({3, 1})), {6, 21, 36, 51});
  EXPECT_SHAPE(zeros({2, 0}).mm(zeros({0, 3})), {2, 3});
  EXPECT_VALUES(zeros({2, 0}).mm(zeros({0, 3})), {0, 0, 0, 0, 0, 0});
}

TEST(Linalg, LargeMmMatchesNaive) {
  manual_seed(1);
  auto a = randn({300, 200}), b = randn({200, 150});
  auto c = a.mm(b);
  auto ref = (a.to(kDouble).unsqueeze(2) * b.to(kDouble).unsqueeze(0)).sum(1);
  EXPECT_LT((c.to(kDouble) - ref).abs().max().item<double>(), 1e-3);
  auto wide = randn({20, 300}).mm(randn({300, 900}));  // N-split path
  EXPECT_SHAPE(wide, {20, 900});
}

TEST(Linalg, MatmulBroadcastCases) {
  auto v = tensor({1.0, 2.0}), m = tensor({{1.0, 2.0}, {3.0, 4.0}});
  EXPECT_VALUES(matmul(v, v), {5});
  EXPECT_SHAPE(matmul(v, v), {});
  EXPECT_VALUES(matmul(m, v), {5, 11});
  EXPECT_VALUES(matmul(v, m), {7, 10});
  auto b3 = arange(12, kFloat).view({3, 2, 2});
  EXPECT_SHAPE(matmul(b3, m), {3, 2, 2});
  EXPECT_VALUES(matmul(b3, m).index({1}), {4 + 15, 8 + 20, 6 + 21, 12 + 28});
  EXPECT_SHAPE(matmul(b3, v), {3, 2});
  EXPECT_SHAPE(matmul(v, b3), {3, 2});
  EXPECT_SHAPE(matmul(m, b3), {3, 2, 2});
  EXPECT_SHAPE(matmul(ones({2, 1, 3, 4}), ones({5, 4, 2})), {2, 5, 3, 2});
  EXPECT_VALUES(matmul(ones({2, 1, 3, 4}), ones({5, 4, 2})).index({0, 0, 0}), {4, 4});
  EXPECT_VALUES(bmm(b3, b3).index({0}), {2, 3, 6, 11});
}

// Batch dims broadcast on one side only fold into the other side's rows or
// columns (linalg.cpp): every arrangement against the products written out
// by expand and bmm, contiguous outputs.
TEST(Linalg, MatmulFoldsOneSidedBroadcastDims) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{1, 7, 5, 4, 3}, {6, 7, 1, 3, 2}},  // capsule routing's shape: both ways
      {{1, 7, 5, 4, 3}, {6, 7, 1, 3, 1}},  // matrix-vector per pair
      {{5, 4, 3}, {6, 1, 3, 2}},           // a's dim against b's leading one
      {{6, 1, 4, 3}, {5, 3, 2}},           // b's dim against a's
      {{2, 1, 3, 4, 3}, {1, 5, 1, 3, 2}},  // interleaved
      {{1, 1, 4, 3}, {2, 5, 3, 2}},        // a's batch all broadcast
  };
  for (const auto& [sa, sb] : cases) {
    Tensor a = randn(sa, kDouble), b = randn(sb, kDouble);
    Tensor r = matmul(a, b);
    // The broadcast batch shape: sizes aligned from the right, 1 where absent.
    const size_t na = sa.size() - 2, nb_dims = sb.size() - 2, nd = std::max(na, nb_dims);
    DimVector batch;
    for (size_t i = 0; i < nd; ++i) {
      const int64_t x = i + na >= nd ? sa[i + na - nd] : 1;
      const int64_t y = i + nb_dims >= nd ? sb[i + nb_dims - nd] : 1;
      batch.push_back(std::max(x, y));
    }
    DimVector ea = batch, eb = batch;
    ea.push_back(sa[sa.size() - 2]), ea.push_back(sa.back());
    eb.push_back(sb[sb.size() - 2]), eb.push_back(sb.back());
    const int64_t nb = compute_numel(batch);
    Tensor want = bmm(a.expand(ea).reshape({nb, ea[ea.size() - 2], ea.back()}),
                      b.expand(eb).reshape({nb, eb[eb.size() - 2], eb.back()}));
    DimVector shape = batch;
    shape.push_back(sa[sa.size() - 2]), shape.push_back(sb.back());
    EXPECT_EQ(r.sizes().vec(), std::vector<int64_t>(shape.begin(), shape.end()));
    EXPECT_TRUE(r.is_contiguous());
    EXPECT_LT((r - want.view(shape)).abs().max().item<double>(), 1e-12);
  }
}

TEST(Linalg, AddmmFamilyDotOuterMv) {
  auto m = tensor({{1.0, 2.0}, {3.0, 4.0}});
  EXPECT_VALUES(addmm(ones({2}), m, m, 0.5, 2), {14.5, 20.5, 30.5, 44.5});
  EXPECT_VALUES(addmm(full({2, 2}, NAN), m, m, 0, 1), {7, 10, 15, 22});  // beta=0 ignores self
  auto b = stack({m, m});
  EXPECT_VALUES(addbmm(zeros({2, 2}), b, b), {14, 20, 30, 44});
  EXPECT_VALUES(baddbmm(ones({2, 2, 2}), b, b, 1, 1).index({1}), {8, 11, 16, 23});
  EXPECT_VALUES(dot(tensor({1, 2}), tensor({3, 4})), {11});
  EXPECT_VALUES(outer(tensor({1, 2}), tensor({3, 4, 5})), {3, 4, 5, 6, 8, 10});
  EXPECT_VALUES(mv(m, tensor({1.0, 1.0})), {3, 7});
  auto x = m.clone();
  x.addmm_(m, eye(2));
  EXPECT_VALUES(x, {2, 4, 6, 8});
}

TEST(Linalg, AddmmInPlaceWritesIntoSelf) {
  manual_seed(3);
  auto a = randn({6, 5}), b = randn({5, 4});
  auto x = randn({6, 4});
  auto expected = addmm(x, a, b, 0.5, 2);
  const float* before = x.data_ptr<float>();
  auto v = x._version();
  x.addmm_(a, b, 0.5, 2);
  EXPECT_EQ(x.data_ptr<float>(), before);
  EXPECT_EQ(x._version(), v + 1);
  EXPECT_TRUE(x.allclose(expected, 1e-5, 1e-6));
  // Transposed operands (a^T b), as in a weight gradient.
  auto g = randn({5, 6});
  x.addmm_(g.t(), b);
  EXPECT_TRUE(x.allclose(expected + g.t().mm(b), 1e-5, 1e-5));
  // beta = 0 ignores self, NaN included.
  auto n = full({6, 4}, NAN);
  n.addmm_(a, b, 0, 1);
  EXPECT_TRUE(n.allclose(a.mm(b), 1e-5, 1e-6));
  // A non-contiguous self is written through to its base.
  auto base = zeros({4, 6});
  auto view = base.t();
  view.addmm_(a, b);
  EXPECT_TRUE(base.allclose(a.mm(b).t(), 1e-5, 1e-6));
  // self as an operand: x + x @ I.
  auto s = tensor({{1.0, 2.0}, {3.0, 4.0}});
  s.addmm_(s, eye(2));
  EXPECT_VALUES(s, {2, 4, 6, 8});
  // Integers take the loop path.
  auto i = ones({2, 2}, kLong);
  i.addmm_(tensor({{1, 2}, {3, 4}}, kLong), tensor({{1, 0}, {0, 1}}, kLong), 2, 1);
  EXPECT_VALUES(i, {3, 4, 5, 6});
}

TEST(Linalg, AddmmInPlaceUnderAutograd) {
  auto a = tensor({{1.0, 2.0}, {3.0, 4.0}}).requires_grad_(true);
  auto b = tensor({{1.0, -1.0}, {0.5, 2.0}});
  auto y = zeros({2, 2});
  y.addmm_(a, b, 1, 3);
  EXPECT_EQ(y.grad_fn()->name(), "AddmmBackward0");
  y.sum().backward();
  // d(sum(3 a b))/da = 3 * ones @ b^T
  EXPECT_VALUES(a.grad(), {0, 7.5, 0, 7.5});
  auto leaf = zeros({2, 2}).requires_grad_(true);
  EXPECT_ERROR("leaf Variable that requires grad", leaf.addmm_(a, b));
  NoGradGuard ng;
  leaf.addmm_(a, b);  // an optimizer-style update is allowed
  EXPECT_VALUES(leaf, {2, 3, 5, 5});
}

TEST(Linalg, AddmmInPlaceErrors) {
  auto x = zeros({2, 2});
  EXPECT_ERROR("addmm_: self of shape [2, 2] does not match the product's shape [2, 3]",
               x.addmm_(ones({2, 3}), ones({3, 3})));
  EXPECT_ERROR("addmm_: shapes [2, 3] and [2, 2] cannot be multiplied",
               x.addmm_(ones({2, 3}), ones({2, 2})));
  EXPECT_ERROR("addmm_: expected self and mat1 to have the same dtype",
               x.addmm_(ones({2, 2}, kDouble), ones({2, 2}, kDouble)));
  EXPECT_ERROR("addmm_: self of shape [2]", zeros({2}).addmm_(ones({2, 2}), ones({2, 2})));
}

TEST(Linalg, AddrAndTheOtherInPlaceProducts) {
  auto v1 = tensor({1.0, 2.0}), v2 = tensor({1.0, 2.0, 3.0});
  EXPECT_VALUES(addr(ones({2, 3}), v1, v2, 2, 0.5), {2.5, 3, 3.5, 3, 4, 5});
  EXPECT_VALUES(ones({3}).addr(v1, v2), {2, 3, 4, 3, 5, 7});  // self broadcast over rows
  EXPECT_VALUES(addr(full({2, 3}, NAN), v1, v2, 0, 1),
                {1, 2, 3, 2, 4, 6});  // beta = 0 ignores self
  auto x = ones({2, 3});
  const float* p = x.data_ptr<float>();
  x.addr_(v1, v2, 1, 2);
  EXPECT_EQ(x.data_ptr<float>(), p);
  EXPECT_VALUES(x, {3, 5, 7, 5, 9, 13});
  auto m = tensor({{1.0, 2.0}, {3.0, 4.0}});
  auto y = tensor({1.0, 1.0});
  y.addmv_(m, tensor({1.0, -1.0}), 3, 2);
  EXPECT_VALUES(y, {1, 1});
  EXPECT_VALUES(ones({2}).addmv(m, tensor({1.0, 1.0})), {4, 8});
  auto b = stack({m, m});
  auto z = zeros({2, 2});
  z.addbmm_(b, b);
  EXPECT_VALUES(z, {14, 20, 30, 44});
  auto w = ones({2, 2, 2});
  w.baddbmm_(b, b, 1, 1);
  EXPECT_VALUES(w.index({1}), {8, 11, 16, 23});
  // Under autograd each is an in-place op on a non-leaf.
  auto a = tensor({1.0, 2.0}).requires_grad_(true);
  auto t = zeros({2, 3}) * 1.0;
  t.addr_(a, v2, 1, 3);
  t.sum().backward();
  EXPECT_VALUES(a.grad(), {18, 18});  // 3 * sum(v2)
  EXPECT_ERROR("addr_: the result of shape [2, 3] cannot be written into self of shape [3]",
               ones({3}).addr_(v1, v2));
  EXPECT_ERROR("addr: expected 1-D vectors, got 2-D and 1-D", addr(ones({2, 3}), ones({2, 1}), v2));
  EXPECT_ERROR("addr: expected vec1 and vec2 to have the same dtype, but got: Float != Double",
               addr(ones({2, 3}), v1, v2.to(kDouble)));
  EXPECT_ERROR("addr: self of shape [3, 3] cannot be broadcast to the outer product's shape [2, 3]",
               addr(ones({3, 3}), v1, v2));
  EXPECT_ERROR("addbmm_: the result of shape [2, 2] cannot be written into self of shape [1, 2]",
               zeros({1, 2}).addbmm_(b, b));
  auto leaf = zeros({2, 3}).requires_grad_(true);
  EXPECT_ERROR("leaf Variable that requires grad", leaf.addr_(v1, v2));
}

TEST(Linalg, Einsum) {
  auto a = arange(6, kFloat).view({2, 3}), b = arange(12, kFloat).view({3, 4});
  EXPECT_TRUE(einsum("ij,jk->ik", {a, b}).equal(a.mm(b)));
  EXPECT_TRUE(einsum("ij,jk", {a, b}).equal(a.mm(b)));  // implicit output
  EXPECT_TRUE(einsum("ij->ji", {a}).equal(a.t()));
  EXPECT_VALUES(einsum("ij->", {a}), {15});
  EXPECT_VALUES(einsum("ii->i", {arange(9, kFloat).view({3, 3})}), {0, 4, 8});
  EXPECT_VALUES(einsum("ii", {arange(9, kFloat).view({3, 3})}), {12});
  auto x = randn({5, 2, 3}), y = randn({5, 3, 4});
  EXPECT_TRUE(einsum("bij,bjk->bik", {x, y}).allclose(bmm(x, y), 1e-5, 1e-5));
  EXPECT_TRUE(einsum("...ij,...jk->...ik", {x, y}).allclose(bmm(x, y), 1e-5, 1e-5));
  EXPECT_TRUE(einsum("i,j->ij", {tensor({1.0, 2.0}), tensor({3.0, 4.0})})
                  .equal(outer(tensor({1.0, 2.0}), tensor({3.0, 4.0}))));
  EXPECT_TRUE(einsum("ij,ij->i", {a, a}).equal((a * a).sum(1)));
  auto z = randn({2, 3}), w = randn({3, 4}), q = randn({4, 5});
  EXPECT_TRUE(einsum("ab,bc,cd->ad", {z, w, q}).allclose(z.mm(w).mm(q), 1e-4, 1e-5));
  EXPECT_TRUE(tensordot(a, b, {1}, {0}).equal(a.mm(b)));
  EXPECT_THROW(einsum("ij,jk->ik", {a}), Error);
  EXPECT_THROW(einsum("ij,jk->ik", {a, a}), Error);
}

extern "C" char* openblas_get_corename(void);

namespace brasa {
namespace {

// Puts back the GEMM backend a test changed.
struct GemmBackendGuard {
  GemmBackend saved = gemm_backend();
  ~GemmBackendGuard() { set_gemm_backend(saved); }
};

// float32 products agree between OpenBLAS and oneDNN on every layout, with
// alpha/beta, on the pool's row and column splits and inside bmm.
TEST(Linalg, GemmBackendsAgree) {
  if (!has_onednn()) GTEST_SKIP() << "this build has no oneDNN";
  GemmBackendGuard guard;
  manual_seed(3);
  Tensor a = randn({300, 70}), b = randn({70, 500}), c0 = randn({300, 500});
  Tensor x = randn({8, 33, 17}), y = randn({8, 17, 5}), w = randn({3, 1000});
  auto run = [&] {
    return std::vector<Tensor>{a.mm(b),
                               a.t().contiguous().t().mm(b),
                               a.mm(b.t().contiguous().t()),
                               addmm(c0, a, b, 0.5, -2.0),
                               x.bmm(y),
                               w.t().mm(w),
                               b.t().mm(a.t())};
  };
  set_gemm_backend(GemmBackend::kOpenBLAS);
  EXPECT_EQ(gemm_backend(), GemmBackend::kOpenBLAS);
  const auto openblas = run();
  set_gemm_backend(GemmBackend::kOneDNN);
  EXPECT_EQ(gemm_backend(), GemmBackend::kOneDNN);
  const auto onednn = run();
  const int saved_threads = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    const auto again = run();
    for (size_t k = 0; k < openblas.size(); ++k) {
      EXPECT_TRUE(allclose(onednn[k], openblas[k], 1e-4, 1e-4)) << k;
      EXPECT_TRUE(allclose(again[k], onednn[k], 1e-5, 1e-5)) << k << " at " << threads;
    }
  }
  set_num_threads(saved_threads);
  // Against float64 on OpenBLAS.
  EXPECT_TRUE(allclose(onednn[0].to(kDouble), a.to(kDouble).mm(b.to(kDouble)), 1e-4, 1e-4));
  // The measured rule: oneDNN's sgemm on AVX-512 processors and wherever
  // OpenBLAS runs only its SSE3 kernels (core "Prescott": a processor newer
  // than Debian's OpenBLAS, or Brasa held to AVX2 on one, as ctest's
  // core.gemm_backend_on_avx2 does); OpenBLAS where it runs its AVX2 ones.
  set_gemm_backend(GemmBackend::kAuto);
  const std::string core = openblas_get_corename();
  if (cpu_capability() == CpuCapability::kAvx512 || core == "Prescott") {
    EXPECT_EQ(gemm_backend(), GemmBackend::kOneDNN) << "OpenBLAS core " << core;
  }
  if (cpu_capability() != CpuCapability::kAvx512 && (core == "Haswell" || core == "Zen")) {
    EXPECT_EQ(gemm_backend(), GemmBackend::kOpenBLAS) << "OpenBLAS core " << core;
  }
}

// Products with one row or one column (a batch-1 Linear, a matrix times a
// vector) run as BLAS matrix-vector products on OpenBLAS: every layout of
// both operands (transposed, strided rows and columns), alpha and beta, the
// pool's column split (1 x 1024 x 1024 at 2 threads), float and double,
// against a sum of products in float64.
TEST(Linalg, MatrixVectorShapesAgreeOnEveryLayout) {
  GemmBackendGuard guard;
  manual_seed(4);
  auto reference = [](const Tensor& a, const Tensor& b) {
    return (a.to(kDouble).unsqueeze(2) * b.to(kDouble).unsqueeze(0)).sum(1);
  };
  const int saved_threads = get_num_threads();
  for (GemmBackend backend : {GemmBackend::kOpenBLAS, GemmBackend::kAuto}) {
    set_gemm_backend(backend);
    for (ScalarType t : {kFloat, kDouble}) {
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        for (auto [M, K, N] : {std::array<int64_t, 3>{1, 70, 50},
                               {40, 70, 1},
                               {1, 1024, 1024},
                               {1024, 300, 1},
                               {1, 9, 1}}) {
          SCOPED_TRACE(::testing::Message() << "dtype " << t << " threads " << threads << " [" << M
                                            << ", " << K << "] @ [" << K << ", " << N << "]");
          const TensorOptions o = TensorOptions().dtype(t);
          const std::vector<Tensor> as{randn({M, K}, o), randn({K, M}, o).t(),
                                       randn({M, 2 * K}, o).narrow(1, 0, K),
                                       randn({K, 3 * M}, o).narrow(1, 0, M).t()};
          const std::vector<Tensor> bs{randn({K, N}, o), randn({N, K}, o).t(),
                                       randn({K, 4 * N}, o).narrow(1, 0, N),
                                       randn({3 * N, K}, o).narrow(0, 0, N).t()};
          const double tol = t == kFloat ? 1e-4 : 1e-10;
          for (size_t i = 0; i < as.size(); ++i)
            for (size_t j = 0; j < bs.size(); ++j) {
              EXPECT_TRUE(allclose(as[i].mm(bs[j]).to(kDouble), reference(as[i], bs[j]), tol, tol))
                  << "layouts " << i << ", " << j;
            }
          Tensor c = randn({M, N}, o);
          EXPECT_TRUE(allclose(addmm(c, as[1], bs[2], 0.5, -2.0).to(kDouble),
                               reference(as[1], bs[2]) * -2.0 + c.to(kDouble) * 0.5, tol, tol));
        }
      }
    }
  }
  set_num_threads(saved_threads);
}

}  // namespace
}  // namespace brasa

// bmm against one mm per batch: small products (the plain loop), mid-size
// ones (BLAS per product on pointers) and large ones, with transposed,
// strided and batch-broadcast (stride 0) operands, float and double, 1 and
// 2 threads.
TEST(Linalg, BmmMatchesAProductPerBatchOnEveryLayout) {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (ScalarType t : {kFloat, kDouble}) {
      for (auto [B, M, K, N] : {std::array<int64_t, 4>{300, 16, 8, 1},
                                {7, 3, 5, 4},
                                {5, 40, 33, 20},
                                {2, 130, 100, 90}}) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " " << t << " [" << B << ", "
                                          << M << ", " << K << "] @ [" << K << ", " << N << "]");
        manual_seed(1);
        Tensor a = randn({B, M, K}, TensorOptions().dtype(t));
        Tensor b = randn({B, K, N}, TensorOptions().dtype(t));
        Tensor a_t = randn({B, K, M}, TensorOptions().dtype(t)).transpose(1, 2);
        Tensor b_wide = randn({B, K, 2 * N}, TensorOptions().dtype(t)).slice(2, 0, 2 * N, 2);
        Tensor b_shared = randn({1, K, N}, TensorOptions().dtype(t)).expand({B, K, N});
        for (const auto& [x, y] :
             {std::pair{a, b}, std::pair{a_t, b}, std::pair{a, b_wide}, std::pair{a_t, b_shared},
              std::pair{a, b.transpose(1, 2).contiguous().transpose(1, 2)}}) {
          Tensor got = bmm(x, y);
          double worst = 0;
          for (int64_t i = 0; i < B; ++i)
            worst = std::max(worst, (got[i] - mm(x[i], y[i])).abs().max().item<double>());
          EXPECT_LT(worst, t == kFloat ? 1e-4 : 1e-12);
        }
      }
    }
  }
  set_num_threads(2);
}
