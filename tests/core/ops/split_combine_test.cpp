// Type queries (ops/type_queries.h), the copying views and *_scatter ops
// (ops/copy_variants.h) and the splitting and combining ops
// (ops/split_combine.h), spelled as libtorch code spells them, against
// PyTorch's outputs; their error paths. Gradients are in the gradcheck table.
#include <brasa/torch.h>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;
using golden::D;
using golden::expect_golden;
using golden::L;
using golden::S;

TEST(TypeQueries, AnswerAsLibtorch) {
  EXPECT_TRUE(torch::is_floating_point(torch::ones({2})));
  EXPECT_FALSE(torch::is_floating_point(torch::ones({2}, torch::kInt)));
  EXPECT_FALSE(torch::is_complex(torch::ones({2})));
  EXPECT_TRUE(torch::is_signed(torch::ones({2}, torch::kChar)));
  EXPECT_FALSE(torch::is_signed(torch::ones({2}, torch::kByte)));
  EXPECT_FALSE(torch::is_signed(torch::ones({2}, torch::kBool)));
  EXPECT_TRUE(torch::is_nonzero(torch::tensor({0.5})));
  EXPECT_FALSE(torch::is_nonzero(torch::zeros({1, 1})));
  EXPECT_TRUE(torch::is_same_size(torch::ones({2, 3}), torch::zeros({2, 3}, torch::kLong)));
  EXPECT_FALSE(torch::is_same_size(torch::ones({2, 3}), torch::ones({3, 2})));
  EXPECT_FALSE(torch::is_conj(torch::ones({2})));
  EXPECT_FALSE(torch::is_neg(torch::ones({2})));
  EXPECT_FALSE(torch::is_inference(torch::ones({2})));
  EXPECT_FALSE(torch::is_distributed(torch::ones({2})));
  EXPECT_TRUE(torch::can_cast(torch::kInt, torch::kFloat));
  EXPECT_FALSE(torch::can_cast(torch::kFloat, torch::kInt));
  EXPECT_FALSE(torch::can_cast(torch::kInt, torch::kBool));
  EXPECT_EQ(torch::promote_types(torch::kByte, torch::kChar), torch::kShort);
  EXPECT_EQ(torch::promote_types(torch::kLong, torch::kHalf), torch::kHalf);
  // A 0-dim tensor takes part by category only; a tensor with dims decides.
  EXPECT_EQ(torch::result_type(torch::ones({2}, torch::kInt), torch::tensor(2.5)),
            torch::get_default_dtype());
  EXPECT_EQ(torch::result_type(torch::ones({2}, torch::kFloat), torch::ones({2}, torch::kDouble)),
            torch::kDouble);
  EXPECT_EQ(torch::result_type(torch::ones({2}, torch::kByte), 3), torch::kByte);
  EXPECT_VALUES(torch::isreal(torch::ones({3})).to(kLong), {1, 1, 1});
  Tensor x = S({2, 3});
  EXPECT_TRUE(torch::conj(x).is_same(x));
  EXPECT_TRUE(torch::resolve_conj(x).is_same(x) && torch::resolve_neg(x).is_same(x));
  EXPECT_TRUE(torch::real(x).is_same(x) && torch::conj_physical(x).is_same(x));
  EXPECT_VALUES(torch::sgn(D({-2, 0, 3})), {-1, 0, 1});
  Tensor leaf = torch::ones({2}, torch::requires_grad());
  EXPECT_FALSE(torch::detach(leaf * 2).requires_grad());
  expect_golden("fill_tensor", torch::fill(S({2, 3}), torch::tensor(1.5, torch::kDouble)));
  EXPECT_VALUES(torch::fill(torch::zeros({2}, torch::kInt), 3), {3, 3});
  expect_golden("adjoint", torch::adjoint(S({2, 3, 4})));
}

TEST(CopyVariants, MatchPyTorchAndOwnTheirData) {
  Tensor x = S({4, 5});
  Tensor n = torch::narrow_copy(x, 1, 1, 3);
  expect_golden("narrow_copy", n);
  EXPECT_TRUE(n.is_contiguous());
  n.fill_(0);
  EXPECT_NE(x[0][1].item<double>(), 0.0);  // a copy, not a view
  expect_golden("permute_copy", torch::permute_copy(S({2, 3, 4}), {2, 0, 1}));
  expect_golden("diagonal_copy", torch::diagonal_copy(S({3, 4}), 1));
  expect_golden("unfold_copy", torch::unfold_copy(S({7}), 0, 3, 2));
  EXPECT_TRUE(torch::alias_copy(x).allclose(x));
  EXPECT_FALSE(torch::alias_copy(x).is_alias_of(x));
  EXPECT_TRUE(torch::t_copy(x).allclose(x.t()) && torch::t_copy(x).is_contiguous());
  EXPECT_TRUE(torch::transpose_copy(x, 0, 1).allclose(x.t()));
  EXPECT_TRUE(torch::select_copy(x, 1, 2).allclose(x.select(1, 2)));
  EXPECT_TRUE(torch::slice_copy(x, 1, 1, 5, 2).allclose(x.slice(1, 1, 5, 2)));
  EXPECT_TRUE(torch::expand_copy(S({3, 1}), {3, 4}).allclose(S({3, 1}).expand({3, 4})));
  EXPECT_TRUE(torch::squeeze_copy(S({3, 1})).allclose(S({3})));
  EXPECT_TRUE(torch::squeeze_copy(S({1, 3}), 0).allclose(S({3})));
  EXPECT_SHAPE(torch::unsqueeze_copy(S({3}), 1), {3, 1});
  EXPECT_SHAPE(torch::as_strided_copy(x, {2, 2}, {1, 5}, 1), {2, 2});
  EXPECT_EQ(torch::split_copy(x, 2, 1).size(), 3u);
  EXPECT_EQ(torch::split_with_sizes_copy(x, {1, 3}, 0)[1].size(0), 3);
  EXPECT_EQ(torch::unbind_copy(x, 1).size(), 5u);
  EXPECT_FALSE(torch::detach_copy(torch::ones({2}, torch::requires_grad())).requires_grad());
  EXPECT_EQ(torch::unsafe_chunk(x, 2, 1).size(), 2u);
  EXPECT_EQ(torch::unsafe_split(x, 3, 0).size(), 2u);
  EXPECT_EQ(torch::unsafe_split_with_sizes(x, {2, 2}).size(), 2u);
}

TEST(CopyVariants, ScattersMatchPyTorch) {
  expect_golden("select_scatter", torch::select_scatter(S({3, 4}), S({4}, 0.9, 0.2), 0, 1));
  expect_golden("slice_scatter", torch::slice_scatter(S({4, 5}), S({4, 2}, 0.9, 0.2), 1, 1, 5, 2));
  expect_golden("diagonal_scatter", torch::diagonal_scatter(S({3, 4}), S({3}, 0.9, 0.2), 1));
  expect_golden("as_strided_scatter",
                torch::as_strided_scatter(S({3, 4}), S({2, 2}, 0.9, 0.2), {2, 2}, {1, 2}, 1));
  Tensor self = S({3, 4});
  Tensor before = self.clone();
  torch::select_scatter(self, S({4}), 0, 0);
  EXPECT_TRUE(self.equal(before));  // out of place
  EXPECT_ERROR("expected src to have a size equal to the slice of self",
               torch::select_scatter(S({3, 4}), S({3}), 0, 1));
  EXPECT_ERROR("slice size = [3]", torch::diagonal_scatter(S({3, 4}), S({4}), 0));
}

TEST(SplitCombine, MatchPyTorch) {
  auto parts = torch::tensor_split(S({7, 2}), 3);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].size(0), 3);  // 7 = 3 + 2 + 2
  expect_golden("tensor_split_sections_1", parts[1]);
  expect_golden("tensor_split_indices_2", torch::tensor_split(S({3, 8}), {1, 5}, 1)[2]);
  EXPECT_EQ(torch::tensor_split(S({3, 8}), torch::tensor(int64_t(4)), 1).size(), 4u);
  EXPECT_EQ(torch::tensor_split(S({3, 8}), L({2, 9}), 1)[2].size(1), 0);  // clamped
  expect_golden("hsplit_1", torch::hsplit(S({2, 6}), 3)[1]);
  expect_golden("dsplit_0", torch::dsplit(S({2, 2, 5}), std::vector<int64_t>{2})[0]);
  expect_golden("vsplit_1", torch::vsplit(S({4, 2}), 2)[1]);
  EXPECT_EQ(torch::hsplit(S({6}), 2)[1].size(0), 3);  // 1-D splits along dim 0
  expect_golden("dstack", torch::dstack({S({2, 3}), S({2, 3}, 0.5, 0.3)}));
  expect_golden("block_diag",
                torch::block_diag({S({2, 2}), S({3}, 0.5, 0.3), torch::tensor(7.0, torch::kDouble),
                                   S({2, 1}, 0.9, 0.1)}));
  EXPECT_EQ(torch::block_diag({torch::ones({1}, torch::kInt), torch::ones({1})}).scalar_type(),
            torch::kFloat);
  expect_golden("cartesian_prod", torch::cartesian_prod({S({3}), S({2}, 0.5, 0.3)}));
  expect_golden("combinations", torch::combinations(S({4}), 3));
  expect_golden("combinations_replacement", torch::combinations(S({3}), 2, true));
  EXPECT_SHAPE(torch::combinations(S({2}), 3), {0, 3});
  EXPECT_SHAPE(torch::combinations(S({2}), 0), {0});
  expect_golden("diagflat", torch::diagflat(S({2, 2}), -1));
  expect_golden("take_along_dim",
                torch::take_along_dim(S({3, 4}), L({0, 2, 1, 1}).view({1, 4}), 0));
  expect_golden("take_along_dim_flat", torch::take_along_dim(S({3, 4}), L({11, 0, 5})));
  expect_golden("tril_indices", torch::tril_indices(3, 4, 1));
  expect_golden("triu_indices", torch::triu_indices(4, 3, -1));
  EXPECT_EQ(torch::tril_indices(3, 3).scalar_type(), torch::kLong);
  expect_golden("range", torch::range(1, 2.5, 0.5, torch::kDouble));
  EXPECT_EQ(torch::range(1, 4).scalar_type(), torch::kFloat);
  EXPECT_VALUES(torch::range(1, 4), {1, 2, 3, 4});
  expect_golden("vander", torch::vander(S({3}), 4));
  expect_golden("vander_increasing", torch::vander(S({3}), std::nullopt, true));
  EXPECT_EQ(torch::vander(L({1, 2, 3})).scalar_type(), torch::kLong);
  expect_golden("inner", torch::inner(S({2, 3}), S({4, 3}, 0.5, 0.3)));
  expect_golden("chain_matmul",
                torch::chain_matmul({S({2, 3}), S({3, 4}, 0.5, 0.3), S({4, 2}, 0.9, 0.1)}));
  expect_golden("dist_p3", torch::dist(S({2, 3}), S({2, 3}, 0.5, 0.3), 3));
  expect_golden("renorm", torch::renorm(S({3, 4}) * 3, 1, 0, 2.0));
  expect_golden("frobenius_norm_dim", torch::frobenius_norm(S({3, 4}), {1}));
  EXPECT_NEAR(torch::frobenius_norm(S({3, 4})).item<double>(),
              S({3, 4}).pow(2).sum().sqrt().item<double>(), 1e-12);
}

TEST(SplitCombine, BadInputGetsClearErrors) {
  EXPECT_ERROR("number of sections must be larger than 0", torch::tensor_split(S({4}), 0));
  EXPECT_ERROR("expected at least a 1-dimensional tensor",
               torch::tensor_split(torch::tensor(1.0), 2));
  EXPECT_ERROR("zero-dimensional or one-dimensional int64 tensor",
               torch::tensor_split(S({4}), torch::ones({2})));
  EXPECT_ERROR("is not divisible by the split_size 4", torch::hsplit(S({2, 6}), 4));
  EXPECT_ERROR("at least 3 dimensions", torch::dsplit(S({2, 6}), 2));
  EXPECT_ERROR("Input 1 has 3 dimensions", torch::block_diag({S({2}), S({1, 1, 1})}));
  EXPECT_ERROR("Expect a 1D vector", torch::cartesian_prod({S({2, 2})}));
  EXPECT_ERROR("Expect a 1D vector", torch::combinations(S({2, 2})));
  EXPECT_ERROR("dtype of indices should be Long", torch::take_along_dim(S({3}), S({3})));
  EXPECT_ERROR("should have the same number of dimensions",
               torch::take_along_dim(S({3, 4}), L({0}), 0));
  EXPECT_ERROR("row and col must be non-negative", torch::tril_indices(-1, 3));
  EXPECT_ERROR("step must be nonzero", torch::range(0, 3, 0));
  EXPECT_ERROR("inconsistent with step sign", torch::range(3, 0, 1));
  EXPECT_ERROR("x must be a one-dimensional tensor", torch::vander(S({2, 2})));
  EXPECT_ERROR("the last dimension must match", torch::inner(S({2, 3}), S({3, 2})));
  EXPECT_ERROR("Expected 2-D matrices", torch::chain_matmul({S({2, 3}), S({3})}));
  EXPECT_ERROR("input needs at least 2 dimensions", torch::renorm(S({3}), 2, 0, 1));
  EXPECT_ERROR("adjoint: expected a tensor of at least 2 dims", torch::adjoint(S({3})));
  EXPECT_ERROR("only supports a 0-dimension value tensor", torch::fill(S({3}), S({2})));
}

}  // namespace
