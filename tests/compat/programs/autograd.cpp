// An autograd walkthrough as libtorch users write one: requires_grad,
// grad_fn names, backward with and without a gradient argument,
// NoGradGuard, detach, torch::autograd::grad with create_graph for a second
// derivative, and custom autograd Functions with saved tensors and
// saved_data. Only the include differs from a libtorch program. Every step
// checks its values; the program exits 0 when all hold.
#include <brasa/torch.h>

#include <cmath>
#include <iostream>
#include <string>

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

static int failures = 0;

static void check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok   " : "FAIL ") << what << "\n";
  if (!ok) ++failures;
}

// y = x W^T + b with its own backward.
struct LinearFunction : public torch::autograd::Function<LinearFunction> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight,
                               torch::Tensor bias = torch::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) output += bias.unsqueeze(0).expand_as(output);
    return output;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0], weight = saved[1], bias = saved[2];
    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = torch::Tensor();
    if (bias.defined()) grad_bias = grad_output.sum(0);
    return {grad_input, grad_weight, grad_bias};
  }
};

// x * constant, the constant kept in saved_data.
struct MulConstant : public torch::autograd::Function<MulConstant> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor tensor, double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), torch::Tensor()};
  }
};

int main() {
  // Basic graph building and backward.
  auto x = torch::ones({2, 2}, torch::requires_grad());
  auto y = x + 2;
  check(y.grad_fn()->name() == "AddBackward1", "x + 2 is AddBackward1, got " + y.grad_fn()->name());
  auto z = y * y * 3;
  auto out = z.mean();
  check(out.grad_fn()->name() == "MeanBackward0", "mean() is MeanBackward0");
  out.backward();
  check(torch::allclose(x.grad(), torch::full({2, 2}, 4.5)), "d(mean(3 (x + 2)^2))/dx = 4.5");

  // requires_grad_ on a tensor made without it.
  auto a = torch::randn({2, 2});
  a = ((a * 3) / (a - 1));
  check(!a.requires_grad(), "a tensor computed without grad does not require it");
  a.requires_grad_(true);
  auto b = (a * a).sum();
  check(b.grad_fn()->name() == "SumBackward0", "sum() is SumBackward0");

  // Vector-Jacobian product: backward with a gradient argument.
  auto v_in = torch::randn(3, torch::requires_grad());
  auto w = v_in * 2;
  int doublings = 1;
  while (w.norm().item<double>() < 1000) {
    w = w * 2;
    ++doublings;
  }
  auto v = torch::tensor({0.1, 1.0, 0.0001}, torch::kFloat);
  w.backward(v);
  check(torch::allclose(v_in.grad(), v * std::pow(2.0, doublings)), "vector-Jacobian product");

  // No grad inside the guard; detach gives a tensor without history.
  check(v_in.pow(2).requires_grad(), "pow of a leaf requiring grad requires grad");
  {
    torch::NoGradGuard no_grad;
    check(!v_in.pow(2).requires_grad(), "under NoGradGuard nothing requires grad");
  }
  auto detached = v_in.detach();
  check(!detached.requires_grad() && detached.equal(v_in), "detach keeps values, drops grad");

  // Second derivative through torch::autograd::grad with create_graph.
  auto t = torch::tensor({1.0, 2.0, -3.0}, torch::requires_grad());
  auto cube = t.pow(3).sum();
  auto first = torch::autograd::grad({cube}, {t}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                                     /*create_graph=*/true)[0];
  check(torch::allclose(first, 3 * t.detach().pow(2)), "d(x^3)/dx = 3x^2");
  auto second = torch::autograd::grad({first.sum()}, {t})[0];
  check(torch::allclose(second, 6 * t.detach()), "d2(x^3)/dx2 = 6x");

  // Custom functions agree with the built-in ops.
  auto input = torch::randn({4, 3}, torch::dtype(torch::kDouble).requires_grad(true));
  auto weight = torch::randn({2, 3}, torch::dtype(torch::kDouble).requires_grad(true));
  auto bias = torch::randn({2}, torch::dtype(torch::kDouble).requires_grad(true));
  auto mine = LinearFunction::apply(input, weight, bias);
  mine.sum().backward();
  auto grads =
      std::vector<torch::Tensor>{input.grad().clone(), weight.grad().clone(), bias.grad().clone()};
  input.grad().zero_();
  weight.grad().zero_();
  bias.grad().zero_();
  torch::nn::functional::linear(input, weight, bias).sum().backward();
  check(torch::allclose(grads[0], input.grad()) && torch::allclose(grads[1], weight.grad()) &&
            torch::allclose(grads[2], bias.grad()),
        "custom LinearFunction's gradients match linear's");
  auto m = torch::randn({3}, torch::requires_grad());
  MulConstant::apply(m, 5.5).sum().backward();
  check(torch::allclose(m.grad(), torch::full({3}, 5.5)), "MulConstant's gradient is the constant");

  std::cout << (failures ? "some checks failed\n" : "all checks passed\n");
  return failures ? 1 : 0;
}
