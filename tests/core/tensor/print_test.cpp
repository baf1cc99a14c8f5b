// Expected strings are what PyTorch 1.13 prints for the same tensors.
#include "../test_util.h"

using namespace brasa;

static std::string str(const Tensor& t) { return t.toString(); }

TEST(Print, MatchesPyTorch) {
  EXPECT_EQ(str(tensor({{1.0, -0.5}, {2.0, 3.0}})),
            "tensor([[ 1.0000, -0.5000],\n        [ 2.0000,  3.0000]])");
  EXPECT_EQ(str(tensor({1., 2., 3.})), "tensor([1., 2., 3.])");
  EXPECT_EQ(str(tensor({1, 2, 3})), "tensor([1, 2, 3])");
  EXPECT_EQ(str(tensor({1, 2, 3}, kInt)), "tensor([1, 2, 3], dtype=torch.int32)");
  EXPECT_EQ(str(tensor({1.5, 2.25}, kDouble)), "tensor([1.5000, 2.2500], dtype=torch.float64)");
  EXPECT_EQ(str(tensor({true, false})), "tensor([ True, False])");
  EXPECT_EQ(str(tensor(3.5)), "tensor(3.5000)");
  EXPECT_EQ(str(tensor(7)), "tensor(7)");
  EXPECT_EQ(str(tensor({1e-5, 1.0})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(str(tensor({1e10, 1.0})), "tensor([1.0000e+10, 1.0000e+00])");
  EXPECT_EQ(str(tensor({NAN, INFINITY, -INFINITY, 1.5})),
            "tensor([   nan,    inf,   -inf, 1.5000])");
  EXPECT_EQ(str(tensor({0., 0.})), "tensor([0., 0.])");
  EXPECT_EQ(str(zeros({0})), "tensor([])");
  EXPECT_EQ(str(zeros({0, 3})), "tensor([], size=(0, 3))");
  EXPECT_EQ(str(zeros({0}, kLong)), "tensor([], dtype=torch.int64)");
  EXPECT_EQ(str(tensor({1., 2.}, kHalf)), "tensor([1., 2.], dtype=torch.float16)");
  EXPECT_EQ(str(tensor({100., 2.5})), "tensor([100.0000,   2.5000])");
  EXPECT_EQ(str(tensor({-1000., 2.})), "tensor([-1000.,     2.])");
}

TEST(Print, NestedAndWrapped) {
  EXPECT_EQ(str(arange(30.).view({2, 3, 5})),
            "tensor([[[ 0.,  1.,  2.,  3.,  4.],\n         [ 5.,  6.,  7.,  8.,  9.],\n         "
            "[10., 11., 12., 13., "
            "14.]],\n\n        [[15., 16., 17., 18., 19.],\n         [20., 21., 22., 23., 24.],\n  "
            "       [25., 26., "
            "27., 28., 29.]]])");
  EXPECT_EQ(str(arange(40.) / 3),
            "tensor([ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n     "
            "    2.6667,  "
            "3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n         5.3333,  "
            "5.6667,  6.0000,  "
            "6.3333,  6.6667,  7.0000,  7.3333,  7.6667,\n         8.0000,  8.3333,  8.6667,  "
            "9.0000,  9.3333,  "
            "9.6667, 10.0000, 10.3333,\n        10.6667, 11.0000, 11.3333, 11.6667, 12.0000, "
            "12.3333, 12.6667, "
            "13.0000])");
}

TEST(Print, SummarizesLargeTensors) {
  EXPECT_EQ(str(arange(2000.)),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        "
            "1.9990e+03])");
  EXPECT_EQ(str(arange(3000).view({100, 30})),
            "tensor([[   0,    1,    2,  ...,   27,   28,   29],\n        [  30,   31,   32,  ..., "
            "  57,   58,   "
            "59],\n        [  60,   61,   62,  ...,   87,   88,   89],\n        ...,\n        "
            "[2910, 2911, 2912,  "
            "...,"
            " 2937, 2938, 2939],\n        [2940, 2941, 2942,  ..., 2967, 2968, 2969],\n        "
            "[2970, 2971, 2972,  "
            "..., 2997, 2998, 2999]])");
}

TEST(Print, StridedViewsAndRequiresGrad) {
  EXPECT_EQ(str(arange(6).view({2, 3}).t()), "tensor([[0, 3],\n        [1, 4],\n        [2, 5]])");
  EXPECT_EQ(str(ones({2}).requires_grad_()), "tensor([1., 1.], requires_grad=True)");
  // A result names its backward function, as Python prints it.
  Tensor leaf = ones({2}).requires_grad_();
  EXPECT_EQ(str(leaf * leaf), "tensor([1., 1.], grad_fn=<MulBackward0>)");
  EXPECT_EQ(str(leaf.sum()), "tensor(2., grad_fn=<SumBackward0>)");
  std::ostringstream os;
  os << Tensor();
  EXPECT_EQ(os.str(), "[ Tensor (undefined) ]");
}
