// Complex tensors (ops/complex.h): values against PyTorch's
// (libtorch_goldens.h, compared through the real view), views sharing
// storage, conversions and printing, the gradient PyTorch gives through
// complex ops, and the errors. Their derivatives are in the gradcheck table.
#include <brasa/torch.h>

#include <complex>
#include <sstream>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;

using golden::expect_golden;
using golden::L;
using golden::S;

// A complex tensor whose real view is S(shape + [2], a, b).
Tensor Z(std::vector<int64_t> shape, double a = 0.37, double b = 0.1) {
  shape.push_back(2);
  return torch::view_as_complex(S(shape, a, b));
}

TEST(Complex, ValuesMatchPyTorch) {
  expect_golden("complex_broadcast",
                torch::view_as_real(torch::complex(S({2, 3}), S({3}, 0.7, 0.2))));
  expect_golden("polar",
                torch::view_as_real(torch::polar(S({2, 3}).abs() + 0.1, S({2, 3}, 0.9, 0.3) * 3)));
  expect_golden("complex_arithmetic",
                torch::view_as_real(Z({2, 3}) * Z({3}, 0.6, 0.4) + Z({2, 3}) -
                                    Z({3}, 0.6, 0.4) * 2 - S({2, 3}, 0.2, 0.5)));
  expect_golden("complex_abs", Z({2, 3}).abs());
  expect_golden("complex_sum_dim", torch::view_as_real(Z({2, 3, 4}).sum({0, -1}, true)));
  expect_golden("complex_mean", torch::view_as_real(Z({2, 3}).mean()));
  expect_golden("complex_angle", torch::angle(Z({2, 3})));
  expect_golden("complex_conj_neg", torch::view_as_real(-torch::conj(Z({2, 3}))));
  expect_golden("complex_isreal",
                torch::isreal(torch::complex(S({4}), torch::tensor({0.0, 1.0, 0.0, -2.0}, kDouble)))
                    .to(kDouble));
  expect_golden("angle_real",
                torch::angle(torch::tensor({-2.0, 0.0, 3.0, NAN, -0.0, -INFINITY}, kDouble)));
  expect_golden("angle_int", torch::angle(L({-2, 0, 3})).to(kDouble), 1e-7);  // in float
  EXPECT_EQ(torch::angle(L({-2, 0, 3})).dtype(), kFloat);
}

TEST(Complex, GradientsMatchPyTorch) {
  Tensor x = S({2, 3, 2}).requires_grad_();
  Tensor z = torch::view_as_complex(x);
  Tensor loss = (z * Z({3}, 0.6, 0.4) + torch::conj(z)).abs().sum() + torch::angle(z).sum();
  loss.backward();
  expect_golden("complex_grad", x.grad());

  Tensor r = (S({4}).abs() + 0.1).requires_grad_(), th = S({4}, 0.9, 0.3).requires_grad_();
  (torch::view_as_real(torch::polar(r, th) * Z({4}, 0.5, 0.2)) * S({4, 2}, 0.8, 0.6))
      .sum()
      .backward();
  expect_golden("polar_grads", torch::cat({r.grad(), th.grad()}));

  // A complex leaf gets a complex gradient, accumulated over two backwards.
  Tensor c = Z({3}).detach().requires_grad_();
  for (int i = 0; i < 2; ++i) torch::view_as_real(c * 3.0).sum().backward();
  ASSERT_EQ(c.grad().dtype(), kComplexDouble);
  EXPECT_TRUE(torch::view_as_real(c.grad()).equal(torch::full({3, 2}, 6.0, kDouble)));
}

TEST(Complex, ViewsShareStorageAndPartsAreViews) {
  Tensor x = torch::arange(12.0).reshape({3, 2, 2});
  Tensor z = torch::view_as_complex(x);
  EXPECT_EQ(z.dtype(), kComplexFloat);
  EXPECT_TRUE(z.is_complex());
  EXPECT_TRUE(torch::is_complex(z));
  EXPECT_EQ(z.sizes(), IntArrayRef({3, 2}));
  EXPECT_EQ(z.element_size(), 8);
  EXPECT_EQ(z.data_ptr(), x.data_ptr());
  torch::imag(z).fill_(-1);  // writes reach x
  EXPECT_EQ(x[2][1][1].item<float>(), -1.0f);
  EXPECT_EQ(torch::real(z)[2][1].item<float>(), 10.0f);
  // A strided complex view: the real view keeps its geometry.
  Tensor col = z.select(1, 1);
  EXPECT_EQ(col.stride(0), 2);
  Tensor parts = torch::view_as_real(col);
  EXPECT_EQ(parts.strides(), IntArrayRef({4, 1}));
  EXPECT_EQ(parts[1][0].item<float>(), 6.0f);
  // Copies and conversions go through the parts.
  Tensor d = z.to(kComplexDouble);
  EXPECT_TRUE(torch::view_as_real(d).equal(x.to(kDouble)));
  Tensor from_real = torch::ones({2}).to(kComplexFloat);
  EXPECT_TRUE(
      torch::view_as_real(from_real).equal(torch::tensor({1.0f, 0.0f, 1.0f, 0.0f}).view({2, 2})));
  Tensor back = z.to(kFloat);  // the real parts, as PyTorch casts
  EXPECT_TRUE(back.equal(x.select(2, 0)));
  EXPECT_TRUE(torch::view_as_real(col.contiguous()).equal(parts));
  EXPECT_TRUE(torch::view_as_complex_copy(x).data_ptr() != x.data_ptr());
  EXPECT_TRUE(torch::view_as_real_copy(z).equal(x));
  Tensor zeros = torch::zeros({2}, TensorOptions().dtype(kComplexDouble));
  EXPECT_TRUE(torch::view_as_real(zeros).equal(torch::zeros({2, 2}, kDouble)));
  EXPECT_EQ(promote_types(kComplexFloat, kDouble), kComplexDouble);
  EXPECT_EQ(promote_types(kLong, kComplexFloat), kComplexFloat);
  EXPECT_EQ((torch::ones({2}) + torch::ones({2}).to(kComplexDouble)).dtype(), kComplexDouble);
  Tensor adj = torch::adjoint(torch::view_as_complex(S({2, 3, 2})));
  EXPECT_EQ(torch::imag(adj)[1][0].item<double>(), -S({2, 3, 2})[0][1][1].item<double>());
}

TEST(Complex, PrintsAsPyTorch) {
  Tensor z = torch::complex(torch::tensor({1.0f, -2.5f}), torch::tensor({2.0f, -1.0f}));
  std::ostringstream os;
  os << z;
  EXPECT_EQ(os.str(), "tensor([ 1.0000+2.j, -2.5000-1.j], dtype=torch.complex64)");
}

TEST(Complex, BadInputGetsClearErrors) {
  Tensor x = torch::ones({3, 2});
  EXPECT_ERROR("view_as_real is only supported for complex tensors, got Float",
               torch::view_as_real(x));
  EXPECT_ERROR(
      "view_as_complex is only supported for float and double tensors, but got a tensor "
      "of scalar type: Long",
      torch::view_as_complex(L({1, 2})));
  EXPECT_ERROR("must have a last dimension of size 2", torch::view_as_complex(torch::ones({2, 3})));
  EXPECT_ERROR("must have a last dimension with stride 1",
               torch::view_as_complex(torch::ones({2, 3}).t()));
  EXPECT_ERROR("must have one or more dimensions", torch::view_as_complex(torch::ones({})));
  EXPECT_ERROR("storage_offset divisible by 2",
               torch::view_as_complex(torch::ones({5}).narrow(0, 1, 2)));
  EXPECT_ERROR("must have a stride divisible by 2 for all but last dimension, got strides [3, 1]",
               torch::view_as_complex(torch::ones({3, 3}).narrow(1, 0, 2)));
  EXPECT_ERROR("imag is not implemented for tensors with non-complex dtypes", torch::imag(x));
  EXPECT_ERROR("complex: expected both inputs to have the same dtype, got Float and Double",
               torch::complex(torch::ones({2}), torch::ones({2}, kDouble)));
  EXPECT_ERROR("polar: expected both inputs to be Float or Double tensors",
               torch::polar(L({1}), L({1})));
  Tensor z = torch::view_as_complex(x);
  Tensor real_out = torch::ones({3});
  EXPECT_ERROR(
      "add_: the result of adding a complex tensor to a Float tensor cannot be written into it in "
      "place",
      real_out.add_(z));
  EXPECT_ERROR("not implemented for dtype ComplexFloat", z.exp());
  EXPECT_ERROR("not implemented for dtype ComplexFloat", z.div(z));
  EXPECT_ERROR("sum: the sum of a complex tensor cannot be Float", z.sum(kFloat));
  // In-place writes through a complex or real view are refused when they
  // would record gradients.
  Tensor leaf = torch::ones({3, 2}, kDouble).requires_grad_();
  Tensor w = torch::view_as_complex(leaf * 1.0);
  EXPECT_ERROR("in-place addition on complex tensors that records gradients is not supported",
               w.add_(w));
  Tensor zc = (leaf * 1.0).to(kComplexDouble);  // a complex tensor of its own
  EXPECT_ERROR("not supported on a view_as_real/view_as_complex view", torch::real(zc).mul_(2));
  // Modifying the real base in place and then using an older complex view.
  Tensor base = leaf * 1.0;
  Tensor old_view = torch::view_as_complex(base);
  base.mul_(2);
  EXPECT_ERROR("after its base was modified in place",
               torch::view_as_real(old_view * 1.0).sum().backward());
  EXPECT_ERROR("only Tensors of floating point and complex dtype can require gradients",
               L({1}).requires_grad_());
}

}  // namespace
