// Bad input raises brasa::Error naming the op and what was wrong — never a crash.
#include "test_util.h"

using namespace brasa;
using namespace brasa::indexing;

TEST(Errors, ShapesAndBroadcasting) {
  EXPECT_ERROR("add: shapes [2, 3] and [4] are not broadcastable", ones({2, 3}) + ones({4}));
  EXPECT_ERROR("mul: shapes [2, 3] and [2, 2]", ones({2, 3}) * ones({2, 2}));
  EXPECT_ERROR("mm: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)",
               mm(ones({2, 3}), ones({4, 5})));
  EXPECT_ERROR("mm: self must be a matrix", mm(ones({2}), ones({2, 2})));
  EXPECT_ERROR("size mismatch", matmul(ones({2, 3}), ones({2})));
  EXPECT_ERROR("matmul: shapes [2, 2, 3] and [2, 2, 3] cannot be multiplied",
               matmul(ones({2, 2, 3}), ones({2, 2, 3})));
  EXPECT_ERROR("at least 1D", matmul(scalar_tensor(1.0), ones({2})));
  EXPECT_ERROR("bmm: batch sizes differ", bmm(ones({2, 2, 2}), ones({3, 2, 2})));
  EXPECT_ERROR("dot: inconsistent tensor size", dot(ones({2}), ones({3})));
  EXPECT_ERROR("Use .reshape(...) instead", arange(6).view({2, 3}).t().view({6}));
  EXPECT_ERROR("shape [7] is invalid for input of size 6", arange(6).reshape({7}));
  EXPECT_ERROR("only one dimension can be inferred", arange(6).view({-1, -1}));
  EXPECT_ERROR("cat: sizes of tensors must match except in dimension 0",
               cat({ones({2, 3}), ones({2, 4})}, 0));
  EXPECT_ERROR("stack: expects each tensor to be equal size", stack({ones({2}), ones({3})}));
  EXPECT_ERROR("permute: number of dims don't match", ones({2, 3}).permute({0}));
  EXPECT_ERROR("permute: repeated dim", ones({2, 3}).permute({0, 0}));
  EXPECT_ERROR("expand: the expanded size of the tensor (3) must match the existing size (2)",
               ones({2, 3}).expand({3, 3}));
  EXPECT_ERROR("narrow: start (2) + length (3) exceeds dimension size (4)",
               ones({4}).narrow(0, 2, 3));
  EXPECT_ERROR("chunk: expects `chunks` to be greater than 0", ones({4}).chunk(0));
  EXPECT_ERROR("split_with_sizes: expects split_sizes to sum exactly to 4",
               ones({4}).split({1, 2}));
  EXPECT_ERROR("unfold: maximum size for tensor at dimension 0 is 4 but size is 5",
               ones({4}).unfold(0, 5, 1));
  EXPECT_ERROR("as_strided", ones({4}).as_strided({3}, {2}));
  EXPECT_ERROR("empty: negative dimension -1", empty({2, -1}));
  EXPECT_ERROR("tensor: nested list is ragged", tensor({{1, 2}, {3}}));
  EXPECT_ERROR("output with shape [2] doesn't match the broadcast shape [2, 2]",
               ones({2}).add_(ones({2, 2})));
  EXPECT_ERROR("copy_: source of shape [3] cannot be broadcast to destination of shape [2, 2]",
               zeros({2, 2}).copy_(ones({3})));
  EXPECT_ERROR("addmm: self of shape [3] cannot be broadcast",
               addmm(ones({3}), ones({2, 2}), ones({2, 2})));
  EXPECT_ERROR("einsum: the equation 'ij,jk->ik' names 2 operands but 1 were given",
               einsum("ij,jk->ik", {ones({2, 2})}));
}

TEST(Errors, DimsAndIndices) {
  EXPECT_ERROR("sum: dimension out of range (expected to be in range of [-2, 1], but got 3)",
               ones({2, 3}).sum(3));
  EXPECT_ERROR("sum: dim 0 appears multiple times", ones({2, 3}).sum({0, -2}));
  EXPECT_ERROR("transpose: dimension out of range", ones({2, 3}).transpose(0, 5));
  EXPECT_ERROR("squeeze: dimension out of range", ones({2, 3}).squeeze(-3));
  EXPECT_ERROR("select: index 3 out of range for tensor of size [2, 3] at dimension 1",
               ones({2, 3}).select(1, 3));
  EXPECT_ERROR("index 5 is out of bounds for dimension 0 with size 3", ones({2, 3}).index({0, 5}));
  EXPECT_ERROR("too many indices for tensor of dimension 2", ones({2, 3}).index({0, 0, 0}));
  EXPECT_ERROR("index 3 is out of bounds for dimension 0 with size 3",
               ones({3}).index({tensor({3})}));
  EXPECT_ERROR("index -4 is out of bounds", ones({3}).index({tensor({-4})}));
  EXPECT_ERROR("tensors used as indices must be long or int tensors",
               ones({3}).index({tensor({1.0})}));
  EXPECT_ERROR("single ellipsis", ones({3}).index({Ellipsis, Ellipsis}));
  EXPECT_ERROR("gather: expected dtype int64 for index",
               ones({2, 2}).gather(1, tensor({{0}}, kInt)));
  EXPECT_ERROR("gather: index 2 is out of bounds for dimension 1 with size 2",
               ones({2, 2}).gather(1, tensor({{2}, {0}})));
  EXPECT_ERROR("scatter_: index -5 is out of bounds for dimension 0 with size 3",
               zeros({3}).scatter(0, tensor({-5}), 1.0));
  EXPECT_ERROR("index_select: index 3 is out of bounds for dimension 0 with size 3",
               ones({3, 2}).index_select(0, tensor({3})));
  EXPECT_ERROR("index_add_: number of indices (2) should be equal to source.size(dim) (3)",
               zeros({3}).index_add(0, tensor({0, 1}), ones({3})));
  EXPECT_ERROR("topk: k (4) out of range", ones({3}).topk(4));
  EXPECT_ERROR("max(): Expected reduction dim to be specified for input.numel() == 0",
               zeros({0}).max());
  EXPECT_ERROR("max: expected reduction dim 1 to have non-zero size", ones({2, 0}).max(1));
  EXPECT_ERROR("index_put_: shape mismatch", ones({3}).index_put_({tensor({0})}, ones({5})));
}

TEST(Errors, DtypesAndValues) {
  const Tensor named = ones({2});
  EXPECT_ERROR("bitwise_and: only integral and bool tensors are supported",
               ones({2}).bitwise_and(ones({2})));
  EXPECT_ERROR("frac: not implemented for dtype Long", tensor({1, 2}).frac());
  EXPECT_ERROR("mean(): could not infer output dtype", tensor({1, 2}).mean());
  EXPECT_ERROR("softmax: expected a floating point tensor, got Long", tensor({1, 2}).softmax(0));
  EXPECT_ERROR("norm: expected a floating point tensor", tensor({1, 2}).norm());
  EXPECT_ERROR("data_ptr: expected scalar type Double but found Float",
               ones({2}).data_ptr<double>());
  EXPECT_ERROR("item: a Tensor with 2 elements cannot be converted to Scalar", ones({2}).item());
  EXPECT_ERROR("accessor: TensorAccessor expected 3 dims but tensor has 1",
               std::as_const(named).accessor<float, 3>());
  EXPECT_ERROR("masked_fill_: expected mask to have dtype Bool, got Long",
               ones({2}).masked_fill(tensor({1, 0}), 0));
  EXPECT_ERROR("where: expected condition/mask to be a bool tensor, got Float",
               where(tensor({1.0}), ones({1}), ones({1})));
  EXPECT_ERROR(
      "div: expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'",
      ones({2}).div(2, "round"));
  EXPECT_ERROR("ZeroDivisionError", tensor({1, 2}).div(tensor({0, 1}), "trunc"));
  EXPECT_ERROR("ZeroDivisionError", tensor({1, 2}).remainder(0));
  EXPECT_ERROR("integers to negative integer powers are not allowed", tensor({2}).pow(-1));
  EXPECT_ERROR("with two bool tensors is not supported", tensor({true}) - tensor({false}));
  EXPECT_ERROR("result type Float can't be cast to the desired output type Long",
               tensor({1, 2}).add_(0.5));
  EXPECT_ERROR("only Tensors of floating point and complex dtype can require gradients",
               tensor({1, 2}).requires_grad_());
  EXPECT_ERROR("mm: expected mat1 and mat2 to have the same dtype",
               mm(ones({2, 2}), ones({2, 2}, kDouble)));
  EXPECT_ERROR("mm: not implemented for 'Bool'", mm(ones({2, 2}, kBool), ones({2, 2}, kBool)));
  EXPECT_ERROR("lerp: expected dtype Float for `end` but got dtype Double",
               lerp(ones({2}), ones({2}, kDouble), 0.5));
  EXPECT_ERROR("integer division with addcdiv is not supported",
               addcdiv(tensor({1}), tensor({1}), tensor({1})));
  EXPECT_ERROR("save_npy: cannot open", save_npy("/nonexistent-dir/x.npy", ones({1})));
  EXPECT_ERROR("bfloat16 is not a NumPy type", save_npy("x.npy", ones({1}, kBFloat16)));
}

TEST(Errors, FactoriesAndConfiguration) {
  EXPECT_ERROR("from_blob: data pointer is null for a tensor of size [2]", from_blob(nullptr, {2}));
  EXPECT_ERROR("arange: step must be nonzero", arange(0, 10, 0));
  EXPECT_ERROR("arange: upper bound and larger bound inconsistent with step sign",
               arange(10, 0, 1));
  EXPECT_ERROR("linspace: number of steps must be non-negative", linspace(0, 1, -1));
  EXPECT_ERROR("eye: n and m must be non-negative", eye(-1));
  EXPECT_ERROR("randperm: n must be non-negative", randperm(-1));
  EXPECT_ERROR("random_: expects 'from' to be less than 'to'", randint(5, 5, {2}));
  EXPECT_ERROR("uniform_: expects to return a [from, to) range", empty({2}).uniform_(1, 0));
  EXPECT_ERROR("bernoulli_: expected p to be in [0, 1]", empty({2}).bernoulli_(1.5));
  EXPECT_ERROR("normal_: expected a floating point tensor", empty({2}, kLong).normal_());
  EXPECT_ERROR("Device: expected a device string like 'cpu'", Device("gpu:0"));
  // "... in this build" without CUDA, "...: no cuda device is present (why)" without a device.
  if (!cuda::is_available())
    EXPECT_ERROR("empty: device cuda is not available", zeros({2}, Device("cuda")));
  EXPECT_ERROR("set_num_threads: expected a positive number of threads, got 0", set_num_threads(0));
  EXPECT_ERROR("the tensor is undefined", Tensor().numel());
  EXPECT_ERROR("cannot sample n_sample > prob_dist.size(-1) samples without replacement",
               multinomial(tensor({1.0, 1.0}), 3));
}
