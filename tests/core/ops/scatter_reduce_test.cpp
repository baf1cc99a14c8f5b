// scatter_reduce and index_reduce (ops/scatter_reduce.h) against PyTorch's
// outputs, and their error paths. Gradients are in the gradcheck table.
#include <brasa/torch.h>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;
using golden::expect_golden;
using golden::L;
using golden::S;

TEST(ScatterReduce, EveryReductionMatchesPyTorch) {
  Tensor idx = L({0, 1, 0, 2, 2, 2, 3, 0, 3}).view({3, 3});
  Tensor src = S({3, 3}, 0.5, 0.2);
  expect_golden("scatter_reduce_sum", torch::scatter_reduce(S({3, 4}), 1, idx, src, "sum"));
  expect_golden("scatter_reduce_prod_excl",
                torch::scatter_reduce(S({3, 4}), 1, idx, src, "prod", false));
  expect_golden("scatter_reduce_amax", torch::scatter_reduce(S({3, 4}), 1, idx, src, "amax"));
  expect_golden("scatter_reduce_amin_excl",
                torch::scatter_reduce(S({3, 4}), 1, idx, src, "amin", false));
  // src larger than index: only the indexed part takes part.
  Tensor idx0 = L({0, 1, 0, 2, 2, 2, 0, 1}).view({2, 4});
  expect_golden("scatter_reduce_mean",
                torch::scatter_reduce(S({3, 4}), 0, idx0, S({2, 5}, 0.5, 0.2), "mean"));
  expect_golden("scatter_reduce_mean_excl",
                torch::scatter_reduce(S({3, 4}), 0, idx0, S({2, 5}, 0.5, 0.2), "mean", false));
  // Integer mean rounds down, as PyTorch's.
  expect_golden("scatter_reduce_mean_int",
                torch::scatter_reduce(L({10, 20, 30}), 0, L({0, 0, 2, 2}), L({1, 2, 7, -4}), "mean")
                    .to(kDouble));
  // Nothing indexed: self unchanged.
  EXPECT_TRUE(torch::scatter_reduce(S({3}), 0, L({}), S({0}), "prod").equal(S({3})));
}

// prod's gradient where zeros sit in self and in src: a lone zero gets the
// product of the others, two zeros in one position give 0.
TEST(ScatterReduce, ProdGradientsWithZerosMatchPyTorch) {
  Tensor x = golden::D({2, 0, 3, 1.5}).view({1, 4}).requires_grad_();
  Tensor src = golden::D({0, 4, 0, 5, 0, 2}).view({1, 6}).requires_grad_();
  torch::scatter_reduce(x, 1, L({0, 1, 2, 2, 3, 3}).view({1, 6}), src, "prod")
      .backward(golden::D({1, 2, 3, 4}).view({1, 4}));
  expect_golden("scatter_reduce_prod_zero_grads",
                torch::cat({x.grad().flatten(), src.grad().flatten()}));
}

TEST(ScatterReduce, IndexReduceMatchesPyTorch) {
  expect_golden("index_reduce_prod",
                torch::index_reduce(S({3, 4}), 0, L({0, 2, 0}), S({3, 4}, 0.5, 0.2), "prod"));
  expect_golden("index_reduce_mean_excl", torch::index_reduce(S({3, 4}), 1, L({3, 0, 3}),
                                                              S({3, 3}, 0.5, 0.2), "mean", false));
  expect_golden("index_reduce_amax",
                torch::index_reduce(S({3, 4}), 1, L({3, 0, 3}), S({3, 3}, 0.5, 0.2), "amax"));
}

TEST(ScatterReduce, MethodsAndInPlaceForms) {
  Tensor idx = L({0, 1, 0, 2, 2, 2, 3, 0, 3}).view({3, 3});
  Tensor src = S({3, 3}, 0.5, 0.2);
  Tensor want = torch::scatter_reduce(S({3, 4}), 1, idx, src, "amax");
  EXPECT_TRUE(S({3, 4}).scatter_reduce(1, idx, src, "amax").equal(want));
  // In place on a non-leaf: the result and its gradient are the out-of-place ones.
  Tensor leaf = S({3, 4}).requires_grad_();
  Tensor y = leaf * 1;
  y.scatter_reduce_(1, idx, src, "amax");
  EXPECT_TRUE(y.equal(want));
  y.sum().backward();
  Tensor leaf2 = S({3, 4}).requires_grad_();
  torch::scatter_reduce(leaf2, 1, idx, src, "amax").sum().backward();
  EXPECT_TRUE(leaf.grad().equal(leaf2.grad()));
  Tensor z = S({3, 4});
  z.index_reduce_(0, L({0, 2, 0}), S({3, 4}, 0.5, 0.2), "prod");
  expect_golden("index_reduce_prod", z);
  EXPECT_TRUE(S({3, 4}).logcumsumexp(1).equal(torch::logcumsumexp(S({3, 4}), 1)));
  EXPECT_TRUE(S({2}).abs().igamma(S({2}).abs()).equal(torch::igamma(S({2}).abs(), S({2}).abs())));
}

TEST(ScatterReduce, ErrorsNameTheProblem) {
  Tensor x = S({3, 4});
  EXPECT_ERROR("reduce argument must be either sum, prod, mean, amax or amin, got max",
               torch::scatter_reduce(x, 1, L({0}).view({1, 1}), x, "max"));
  EXPECT_ERROR("scatter_reduce(): Expected dtype int64 for index",
               torch::scatter_reduce(x, 1, L({0}).view({1, 1}).to(kInt), x, "sum"));
  EXPECT_ERROR("scatter_reduce(): Expected self.dtype to be equal to src.dtype",
               torch::scatter_reduce(x, 1, L({0}).view({1, 1}), x.to(kFloat), "sum"));
  EXPECT_ERROR("Index tensor must have the same number of dimensions",
               torch::scatter_reduce(x, 1, L({0}), x, "sum"));
  EXPECT_ERROR("scatter_reduce: index 4 is out of bounds for dimension 1 with size 4",
               torch::scatter_reduce(x, 1, L({4}).view({1, 1}), x, "sum"));
  EXPECT_ERROR("to be smaller than src",
               torch::scatter_reduce(x, 1, L({0, 0, 0, 0, 0}).view({1, 5}), x, "sum"));
  EXPECT_ERROR("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got sum",
               torch::index_reduce(x, 0, L({0}), S({1, 4}), "sum"));
  EXPECT_ERROR("Number of indices (2) should be equal to source.size(dim) (1)",
               torch::index_reduce(x, 0, L({0, 1}), S({1, 4}), "prod"));
  EXPECT_ERROR("Source/destination tensor must have same slice shapes",
               torch::index_reduce(x, 0, L({0}), S({1, 3}), "prod"));
}

}  // namespace

namespace {

using namespace brasa;

TEST(ScatterReduce, MoreBadInputGetsClearErrors) {
  Tensor x = golden::S({3, 4});
  EXPECT_ERROR("index_reduce_(): Index is supposed to be a vector, got 2 dims",
               torch::index_reduce(x, 0, golden::L({0}).view({1, 1}), golden::S({1, 4}), "prod"));
  EXPECT_ERROR("index_reduce_(): Expected dtype int32/int64 for index but got Double",
               torch::index_reduce(x, 0, golden::D({0}), golden::S({1, 4}), "prod"));
  EXPECT_ERROR(
      "scatter_reduce: Expected index [1, 5] to be smaller than self [3, 4] apart from "
      "dimension 0",
      torch::scatter_reduce(x, 0, golden::L({0, 0, 0, 0, 0}).view({1, 5}), golden::S({4, 5}),
                            "sum"));
}

}  // namespace
