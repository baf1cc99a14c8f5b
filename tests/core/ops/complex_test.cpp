// Complex tensors (ops/complex.h): values against PyTorch's
// (libtorch_goldens.h, compared through the real view), views sharing
// storage, conversions and printing, the gradient PyTorch gives through
// complex ops, and the errors. Their derivatives are in the gradcheck table.
#include <brasa/torch.h>

#include <cmath>
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
  expect_golden("complex_div",
                torch::view_as_real(torch::cat({(Z({2, 3}) / Z({3}, 0.6, 0.4)).flatten(),
                                                (Z({2, 3}) / (S({3}, 0.5, 0.2) + 2)).flatten()})));
  expect_golden(
      "complex_exp_log_sqrt_reciprocal_sgn",
      torch::view_as_real(torch::stack({Z({2, 3}).exp(), Z({2, 3}).log(), Z({2, 3}).sqrt(),
                                        Z({2, 3}).reciprocal(), Z({2, 3}).sgn()})));
  expect_golden("complex_matmul",
                torch::view_as_real(
                    torch::cat({(Z({2, 3}).matmul(Z({3, 4}, 0.6, 0.4))).flatten(),
                                (Z({2, 2, 3}, 0.2, 0.9).matmul(Z({3, 4}, 0.6, 0.4))).flatten()})));
  Tensor c = Z({3, 5}, 0.9, 0.3);
  expect_golden("complex_prod",
                torch::view_as_real(torch::cat({c.prod(1), c.prod(0), c.prod().reshape({1})})));
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

TEST(Complex, IscloseComparesTheModulusOfTheDifference) {
  const double nan = std::nan("");
  Tensor a = complex(golden::D({1, 2, nan, 3, 1e6}), golden::D({0, 1, 0, 4, 0}));
  Tensor b = complex(golden::D({1 + 1e-9, 2, nan, 3, 1e6 + 5}), golden::D({1e-9, 1.1, 0, 4.5, 0}));
  // |a - b| against atol + rtol |b|: 1.4e-9 within 1e-8, 0.1 not, NaN never
  // but with equal_nan, 0.5 within 1e-8 + 0.1 * 5.4, 5 within 1e-5 * 1e6.
  EXPECT_VALUES(isclose(a, b).to(kDouble), {1, 0, 0, 0, 1});
  EXPECT_VALUES(isclose(a, b, 0.1, 1e-8, true).to(kDouble), {1, 1, 1, 1, 1});
  EXPECT_TRUE(allclose(a.narrow(0, 0, 1), b.narrow(0, 0, 1)));
  EXPECT_FALSE(allclose(a, b));
  EXPECT_TRUE(allclose(a, a.clone(), 1e-5, 1e-8, true));
  EXPECT_FALSE(allclose(a, a.clone()));  // NaN
}

TEST(Complex, GradientsMatchPyTorch) {
  Tensor x = S({2, 3, 2}).requires_grad_();
  Tensor z = torch::view_as_complex(x);
  Tensor loss = (z * Z({3}, 0.6, 0.4) + torch::conj(z)).abs().sum() + torch::angle(z).sum();
  loss.backward();
  expect_golden("complex_grad", x.grad());

  Tensor y = S({2, 3, 2}).requires_grad_();
  Tensor w = torch::view_as_complex(y);
  Tensor ops_loss = torch::view_as_real(w / Z({3}, 0.6, 0.4)).sum() +
                    torch::view_as_real(w.exp()).pow(2).sum() +
                    torch::view_as_real(w.matmul(Z({3, 2}, 0.5, 0.2))).sum() * 0.5 +
                    torch::view_as_real(w.prod(1)).sum();
  ops_loss.backward();
  expect_golden("complex_ops_grad", y.grad());

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

TEST(Complex, TensorMethodsGiveTheParts) {
  Tensor x = torch::tensor({3.0, 4.0, 0.0, 0.0, -1.0, 2.0}, kDouble).view({3, 2});
  Tensor z = torch::view_as_complex(x);
  EXPECT_TRUE(z.real().equal(torch::tensor({3.0, 0.0, -1.0}, kDouble)));
  EXPECT_TRUE(z.imag().equal(torch::tensor({4.0, 0.0, 2.0}, kDouble)));
  EXPECT_EQ(z.real().data_ptr(), x.data_ptr());  // views, as in PyTorch
  EXPECT_TRUE(torch::view_as_real(z.conj()).equal(x * torch::tensor({1.0, -1.0}, kDouble)));
  EXPECT_TRUE(z.conj_physical().equal(z.conj()));
  EXPECT_TRUE(z.resolve_conj().equal(z) && z.resolve_neg().equal(z));
  EXPECT_TRUE((z == z.conj()).equal(torch::tensor({false, true, false})));
  EXPECT_TRUE((z != z.conj()).equal(torch::tensor({true, false, true})));
  EXPECT_TRUE((z == 0).equal(torch::tensor({false, true, false})));
  EXPECT_FALSE(z.equal(z.conj()));
  EXPECT_FALSE(z.is_conj() || z.conj().is_conj() || z.is_neg());
  EXPECT_TRUE(z.angle().allclose(torch::atan2(z.imag(), z.real())));
  EXPECT_TRUE(z.isreal().equal(torch::tensor({false, true, false})));
  // sgn: z / |z|, and 0 at 0.
  std::complex<double> w(-1.0, 2.0);
  w /= std::abs(w);
  EXPECT_TRUE(torch::view_as_real(z.sgn()).allclose(
      torch::tensor({0.6, 0.8, 0.0, 0.0, w.real(), w.imag()}, kDouble).view({3, 2})));
  Tensor y = z.clone();
  y.sgn_();
  EXPECT_TRUE(y.equal(z.sgn()));
  y.conj_physical_();
  EXPECT_TRUE(y.equal(z.sgn().conj()));
  // Conjugate transposes.
  Tensor m = torch::view_as_complex(S({2, 3, 2}));
  EXPECT_EQ(m.H().sizes(), IntArrayRef({3, 2}));
  EXPECT_TRUE(m.H().equal(torch::adjoint(m)) && m.mH().equal(m.adjoint()));
  EXPECT_TRUE(torch::imag(m.H())[2][1].equal(-torch::imag(m)[1][2]));
  Tensor scalar = torch::tensor(2.0);
  EXPECT_TRUE(scalar.H().equal(scalar));
  // Real tensors: real(), conj() and sgn() work as on numbers; imag() is an error.
  Tensor r = torch::tensor({-2.0f, 0.0f, 5.0f});
  EXPECT_TRUE(r.real().is_same(r) && r.conj().is_same(r));
  EXPECT_TRUE(r.sgn().equal(torch::tensor({-1.0f, 0.0f, 1.0f})));
  EXPECT_TRUE(r.angle().allclose(torch::tensor({3.14159265f, 0.0f, 0.0f})));
  EXPECT_ERROR("imag is not implemented for tensors with non-complex dtypes", r.imag());
  EXPECT_ERROR(
      "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For "
      "batches of matrices, consider using tensor.mH",
      torch::ones({2, 2, 2}).H());
  EXPECT_ERROR("Got 1-D tensor.", r.H());
}

// Each element of a complex double tensor as std::complex, row-major.
std::vector<std::complex<double>> values(const Tensor& z) {
  Tensor parts = torch::view_as_real(z.contiguous()).to(kDouble).contiguous();
  const double* p = parts.data_ptr<double>();
  std::vector<std::complex<double>> out;
  for (int64_t i = 0; i < z.numel(); ++i) out.emplace_back(p[2 * i], p[2 * i + 1]);
  return out;
}

void expect_values(const Tensor& got, const std::vector<std::complex<double>>& want,
                   const char* what) {
  ASSERT_TRUE(got.is_complex()) << what;
  std::vector<std::complex<double>> g = values(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_LT(std::abs(g[i] - want[i]), 1e-12 * (1 + std::abs(want[i])))
        << what << " element " << i << ": " << g[i] << " vs " << want[i];
}

TEST(Complex, ElementwiseOpsMatchStdComplex) {
  Tensor a = Z({2, 3}), b = Z({3}, 0.6, 0.4);
  std::vector<std::complex<double>> va = values(a), vb = values(b);
  std::vector<std::complex<double>> quotient, exps, logs, roots, recips, squares;
  for (size_t i = 0; i < va.size(); ++i) {
    quotient.push_back(va[i] / vb[i % 3]);
    exps.push_back(std::exp(va[i]));
    logs.push_back(std::log(va[i]));
    roots.push_back(std::sqrt(va[i]));
    recips.push_back(1.0 / va[i]);
    squares.push_back(va[i] * va[i]);
  }
  expect_values(a / b, quotient, "div");
  expect_values(a.exp(), exps, "exp");
  expect_values(torch::log(a), logs, "log");
  expect_values(a.sqrt(), roots, "sqrt");
  expect_values(a.reciprocal(), recips, "reciprocal");
  expect_values(a.square(), squares, "square");
  // The principal root on the negative real axis, and real divisors.
  Tensor neg =
      torch::complex(torch::tensor({-4.0, -4.0}, kDouble), torch::tensor({0.0, -0.0}, kDouble));
  expect_values(neg.sqrt(), {{0.0, 2.0}, {0.0, 2.0}}, "sqrt of -4");
  std::vector<std::complex<double>> halves, by_real;
  for (size_t i = 0; i < va.size(); ++i) {
    halves.push_back(va[i] / 2.0);
    by_real.push_back(va[i] / (0.5 + static_cast<double>(i % 3)));
  }
  expect_values(a / 2.0, halves, "div by a number");
  expect_values(a / torch::tensor({0.5, 1.5, 2.5}, kDouble), by_real, "div by a real tensor");
  EXPECT_EQ((torch::ones({3}) / b.to(kComplexFloat)).dtype(), kComplexFloat);
  EXPECT_ERROR("Please use torch.sgn instead", a.sign());
}

TEST(Complex, ProductsMatchStdComplex) {
  Tensor a = Z({2, 3}), b = Z({3, 4}, 0.6, 0.4), batch = Z({2, 2, 3}, 0.2, 0.9);
  std::vector<std::complex<double>> va = values(a), vb = values(b), vbatch = values(batch);
  auto product = [&](const std::vector<std::complex<double>>& x, size_t off) {
    std::vector<std::complex<double>> out;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        std::complex<double> acc = 0;
        for (int k = 0; k < 3; ++k) acc += x[off + i * 3 + k] * vb[k * 4 + j];
        out.push_back(acc);
      }
    return out;
  };
  expect_values(a.mm(b), product(va, 0), "mm");
  expect_values(torch::matmul(a, b), product(va, 0), "matmul");
  std::vector<std::complex<double>> batched = product(vbatch, 0), second = product(vbatch, 6);
  batched.insert(batched.end(), second.begin(), second.end());
  expect_values(torch::matmul(batch, b), batched, "matmul, batched");
  expect_values(torch::bmm(batch, b.unsqueeze(0).expand({2, 3, 4})), batched, "bmm");
  // A real matrix times a complex one promotes.
  Tensor real_a = torch::real(a).contiguous();
  std::vector<std::complex<double>> real_va;
  for (auto v : va) real_va.emplace_back(v.real(), 0.0);
  expect_values(torch::matmul(real_a, b), product(real_va, 0), "real @ complex");
  // A transposed (strided) left operand, a vector on either side, and
  // shapes that do not multiply (the error names the caller's shapes).
  Tensor at = Z({3, 2}, 0.3, 0.7).t();
  expect_values(at.mm(b), product(values(at.contiguous()), 0), "mm of a transposed view");
  Tensor v = Z({4}, 0.1, 0.5);
  std::vector<std::complex<double>> vv = values(v), bv(3, 0.0), vbv(4, 0.0);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j) bv[k] += vb[k * 4 + j] * vv[j];
  expect_values(torch::matmul(b, v), bv, "matrix @ vector");
  for (int j = 0; j < 4; ++j)
    for (int k = 0; k < 3; ++k) vbv[j] += bv[k] * vb[k * 4 + j];
  expect_values(torch::matmul(torch::matmul(b, v), b), vbv, "vector @ matrix");
  EXPECT_ERROR("[2, 3]", a.mm(Z({4, 4})));
  // dot does not conjugate, vdot conjugates its first argument.
  Tensor u = Z({3}), w = Z({3}, 0.6, 0.4);
  std::vector<std::complex<double>> vu = values(u), vw = values(w);
  std::complex<double> d = 0, vd = 0;
  for (int k = 0; k < 3; ++k) d += vu[k] * vw[k], vd += std::conj(vu[k]) * vw[k];
  expect_values(torch::dot(u, w), {d}, "dot");
  expect_values(torch::vdot(u, w), {vd}, "vdot");
  // prod over a dim (odd and even sizes), over everything, and empty.
  Tensor c = Z({3, 5}, 0.9, 0.3);
  std::vector<std::complex<double>> vc = values(c), rows(3, 1.0), cols(5, 1.0);
  std::complex<double> all = 1.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      rows[i] *= vc[i * 5 + j], cols[j] *= vc[i * 5 + j], all *= vc[i * 5 + j];
    }
  expect_values(c.prod(1), rows, "prod over 5");
  expect_values(c.prod(0, true), cols, "prod over 3, keepdim");
  EXPECT_EQ(c.prod(0, true).sizes(), IntArrayRef({1, 5}));
  expect_values(c.prod(), {all}, "prod of all");
  expect_values(Z({0, 2}).prod(0), {1.0, 1.0}, "empty prod");
}

// Fills of complex tensors: a real value goes to the real parts with zero
// imaginary parts; +0 clears both at once, -0.0 keeps its sign.
TEST(Complex, FillsSetRealPartsAndClearImaginaryOnes) {
  Tensor z = Z({3, 5}, 0.4, 0.8);
  Tensor parts = torch::view_as_real(z);
  z.fill_(2.5);
  EXPECT_TRUE(torch::equal(parts.select(-1, 0), torch::full({3, 5}, 2.5, kDouble)));
  EXPECT_TRUE(torch::equal(parts.select(-1, 1), torch::zeros({3, 5}, kDouble)));
  z.fill_(0);
  EXPECT_EQ(parts.abs().sum().item<double>(), 0.0);
  z.fill_(-0.0);
  EXPECT_TRUE(std::signbit(parts[1][2][0].item<double>()));
  EXPECT_FALSE(std::signbit(parts[1][2][1].item<double>()));
  Tensor sliced = Z({4, 6}, 0.3, 0.9).narrow(1, 1, 3);  // not contiguous
  sliced.zero_();
  EXPECT_EQ(torch::view_as_real(sliced).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(torch::zeros_like(Z({2, 3})).abs().sum().item<double>(), 0.0);
}

TEST(Complex, SgnGradientMatchesFiniteDifferences) {
  // d/dz of z/|z| through the real pairs, against central differences.
  Tensor x = S({3, 2}).detach().requires_grad_();
  Tensor weights = S({3, 2}, 0.8, 0.3);
  auto f = [&](const Tensor& p) {
    return (torch::view_as_real(torch::view_as_complex(p).sgn()) * weights).sum();
  };
  f(x).backward();
  Tensor numeric = torch::zeros({3, 2}, kDouble);
  for (int64_t i = 0; i < 6; ++i) {
    Tensor plus = x.detach().clone(), minus = x.detach().clone();
    plus.view({-1})[i] += 1e-6;
    minus.view({-1})[i] -= 1e-6;
    numeric.view({-1})[i] = (f(plus) - f(minus)).item<double>() / 2e-6;
  }
  EXPECT_TRUE(x.grad().allclose(numeric, 1e-5, 1e-7)) << x.grad() << numeric;
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
  EXPECT_ERROR("sin: not implemented for dtype ComplexFloat", z.sin());
  EXPECT_ERROR("atan2: not implemented for dtype ComplexFloat", torch::atan2(z, z));
  EXPECT_ERROR("lt: not implemented for dtype ComplexFloat", z < z);
  EXPECT_ERROR("sum: the sum of a complex tensor cannot be Float", z.sum(kFloat));
  EXPECT_ERROR("prod: the product of a complex tensor cannot be Float", z.prod(0, false, kFloat));
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
