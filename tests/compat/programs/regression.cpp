// Polynomial regression with smooth_l1_loss, as libtorch users write it:
// a Linear layer fitted by hand-written SGD on parameters' .data(), with
// torch::smooth_l1_loss and torch::nn::functional::smooth_l1_loss. Only the
// include differs from a libtorch program. Exits 0 when the fitted
// coefficients are within 0.05 of the true ones.
#include <brasa/torch.h>

#include <cstdio>
#include <iostream>

constexpr int64_t kDegree = 3;

// [x, x^2, x^3] for each x of a column [N, 1].
torch::Tensor make_features(const torch::Tensor& x) {
  std::vector<torch::Tensor> powers;
  for (int64_t i = 1; i <= kDegree; ++i) powers.push_back(x.pow(i));
  return torch::cat(powers, 1);
}

int main() {
  torch::manual_seed(3);
  const torch::Tensor true_weight = torch::tensor({0.5, -1.2, 0.8}).unsqueeze(1);
  const double true_bias = 0.3;
  auto target_of = [&](const torch::Tensor& x) {
    return make_features(x).mm(true_weight) + true_bias;
  };

  torch::nn::Linear fc(kDegree, 1);
  double loss_value = 0;
  for (int64_t step = 1; step <= 4000; ++step) {
    torch::Tensor x = torch::rand({64, 1}) * 2 - 1;
    torch::Tensor y = target_of(x);
    fc->zero_grad();
    torch::Tensor loss = torch::smooth_l1_loss(fc(make_features(x)), y);
    loss.backward();
    {
      torch::NoGradGuard no_grad;
      for (auto& param : fc->parameters()) param.data().add_(-0.5 * param.grad().data());
    }
    loss_value = loss.item<double>();
    if (loss_value < 1e-7) break;
  }
  // The options form gives the same loss with beta 1.
  torch::Tensor x = torch::linspace(-1, 1, 9).unsqueeze(1);
  torch::Tensor with_options = torch::nn::functional::smooth_l1_loss(
      fc(make_features(x)), target_of(x),
      torch::nn::functional::SmoothL1LossFuncOptions().reduction(torch::kSum).beta(1.0));
  torch::Tensor plain =
      torch::smooth_l1_loss(fc(make_features(x)), target_of(x), at::Reduction::Sum);

  auto weight = fc->weight.view({-1});
  std::cout << "loss " << loss_value << "\nfitted w " << weight << "\nfitted b " << fc->bias
            << "\n";
  bool ok =
      std::abs(fc->bias.item<double>() - true_bias) < 0.05 && torch::allclose(with_options, plain);
  for (int64_t i = 0; i < kDegree; ++i)
    ok = ok && std::abs(weight[i].item<double>() - true_weight[i][0].item<double>()) < 0.05;
  return ok ? 0 : 1;
}
