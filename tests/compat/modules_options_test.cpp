// Modules, option structs and optimizers spelled as libtorch programs spell
// them; each value is checked against the functional form (itself checked
// against PyTorch).
#include <brasa/torch.h>
#include <gtest/gtest.h>

#include <sstream>
#include <type_traits>

namespace {

namespace nn = torch::nn;
namespace F = torch::nn::functional;

torch::Tensor S(std::vector<int64_t> shape, double a = 0.37, double b = 0.1) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (torch::arange(n, torch::kDouble) * a + b).sin().view(shape);
}

void expect_same(const torch::Tensor& a, const torch::Tensor& b) {
  ASSERT_EQ(a.sizes().vec(), b.sizes().vec());
  EXPECT_TRUE(a.allclose(b, 1e-12, 1e-12)) << a << "\n" << b;
}

TEST(LibtorchModules, LossModulesAndTheirOptions) {
  torch::Tensor x = S({4, 3}), y = S({4, 3}, 0.5, 0.3);
  torch::Tensor p = torch::sigmoid(x), t = (y > 0).to(torch::kDouble);
  torch::Tensor labels = torch::tensor(std::vector<int64_t>{0, 2, 1, 2});
  expect_same(nn::MSELoss()(x, y), F::mse_loss(x, y));
  expect_same(nn::MSELoss(nn::MSELossOptions().reduction(torch::kSum))(x, y),
              F::mse_loss(x, y, torch::kSum));
  expect_same(nn::L1Loss(torch::kNone)(x, y), F::l1_loss(x, y, torch::kNone));
  expect_same(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(x, y),
              F::smooth_l1_loss(x, y, torch::kMean, 0.5));
  expect_same(nn::HuberLoss(nn::HuberLossOptions().delta(0.3))(x, y),
              F::huber_loss(x, y, torch::kMean, 0.3));
  expect_same(nn::BCELoss(nn::BCELossOptions().weight(S({3}, 0.2, 1.0)))(p, t),
              F::binary_cross_entropy(p, t, S({3}, 0.2, 1.0)));
  expect_same(nn::BCEWithLogitsLoss()(x, t), F::binary_cross_entropy_with_logits(x, t));
  expect_same(nn::CrossEntropyLoss()(x, labels), F::cross_entropy(x, labels));
  expect_same(nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().label_smoothing(0.1))(x, labels),
              F::cross_entropy(x, labels, F::CrossEntropyFuncOptions().label_smoothing(0.1)));
  expect_same(nn::NLLLoss(nn::NLLLossOptions().ignore_index(2))(torch::log_softmax(x, 1), labels),
              torch::nll_loss(torch::log_softmax(x, 1), labels, {}, 1, 2));
  expect_same(nn::KLDivLoss(nn::KLDivLossOptions().reduction(torch::kSum))(torch::log_softmax(x, 1),
                                                                           torch::softmax(y, 1)),
              F::kl_div(torch::log_softmax(x, 1), torch::softmax(y, 1), torch::kSum));
  // soft margin: log(1 + exp(-y x)), by hand.
  torch::Tensor sign = torch::where(y > 0, 1.0, -1.0).to(torch::kDouble);
  expect_same(nn::SoftMarginLoss()(x, sign), ((-sign * x).exp() + 1).log().mean());
  // The functional spellings with options.
  expect_same(F::mse_loss(x, y, F::MSELossFuncOptions().reduction(torch::kSum)),
              F::mse_loss(x, y, torch::kSum));
  expect_same(
      F::binary_cross_entropy(p, t, F::BinaryCrossEntropyFuncOptions().reduction(torch::kNone)),
      F::binary_cross_entropy(p, t, torch::Tensor(), torch::kNone));
}

TEST(LibtorchModules, OptionStructsOfActivationsDropoutAndNorms) {
  torch::Tensor x = S({2, 3, 4});
  expect_same(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true))(x),
              F::leaky_relu(x, 0.2));
  expect_same(nn::ELU(nn::ELUOptions().alpha(0.5))(x), F::elu(x, 0.5));
  expect_same(nn::GELU(nn::GELUOptions().approximate("tanh"))(x), F::gelu(x, "tanh"));
  expect_same(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(10))(x), F::softplus(x, 2, 10));
  expect_same(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.3).max_val(0.4))(x),
              F::hardtanh(x, -0.3, 0.4));
  expect_same(nn::Softmax(nn::SoftmaxOptions(1))(x), torch::softmax(x, 1));
  expect_same(nn::LogSoftmax(nn::LogSoftmaxOptions(2))(x), torch::log_softmax(x, 2));
  expect_same(nn::ReLU(nn::ReLUOptions().inplace(false))(x), F::relu(x));
  expect_same(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(1))(x), x.flatten(0, 1));
  nn::Dropout drop(nn::DropoutOptions().p(0.25));
  EXPECT_EQ(drop->p, 0.25);
  nn::Dropout drop2(0.3);
  EXPECT_EQ(drop2->p, 0.3);
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(3).eps(1e-3).momentum(0.2));
  EXPECT_EQ(bn->options.eps_, 1e-3);
  EXPECT_EQ(bn->options.momentum_, 0.2);
  nn::LayerNorm ln(nn::LayerNormOptions({3, 4}).eps(1e-6).elementwise_affine(false));
  EXPECT_FALSE(ln->weight.defined());
  expect_same(ln(x.to(torch::kFloat)).to(torch::kDouble),
              F::layer_norm(x.to(torch::kFloat), {3, 4}, {}, {}, 1e-6).to(torch::kDouble));
  nn::GroupNorm gn(nn::GroupNormOptions(1, 3).eps(1e-4));
  EXPECT_EQ(gn->eps, 1e-4);
}

TEST(LibtorchModules, OptimizerOptionsAsLibtorchWritesThem) {
  auto net = nn::Linear(3, 2);
  torch::optim::SGD sgd(net->parameters(), 0.01);  // options from a learning rate
  EXPECT_EQ(sgd.param_groups()[0].options().get_lr(), 0.01);
  auto adamw_options = torch::optim::AdamWOptions(1e-2).weight_decay(0.05).betas({0.8, 0.9});
  static_assert(std::is_same_v<decltype(adamw_options), torch::optim::AdamWOptions>);
  torch::optim::AdamW adamw(net->parameters(), adamw_options);
  EXPECT_EQ(adamw_options.weight_decay_, 0.05);
  EXPECT_EQ(adamw.param_groups()[0].options().get_lr(), 1e-2);
}

TEST(LibtorchModules, ModuleAsFunctionalWithArgumentsAndPrintedOptions) {
  auto lin = nn::Linear(2, 3);
  std::shared_ptr<nn::Module> base = lin.ptr();
  EXPECT_EQ(base->as<nn::Linear>(), lin.get());      // a holder names its Impl
  EXPECT_EQ(base->as<nn::LinearImpl>(), lin.get());  // or the Impl itself
  EXPECT_EQ(base->as<nn::Conv2d>(), nullptr);
  torch::Tensor x = S({2, 3});
  nn::Functional leaky(torch::leaky_relu, 0.2);  // fn(input, 0.2)
  expect_same(leaky(x), F::leaky_relu(x, 0.2));
  nn::Functional clamp(torch::hardtanh, -0.1, 0.1);
  expect_same(clamp(x), F::hardtanh(x, -0.1, 0.1));
  std::ostringstream os;
  os << torch::TensorOptions().dtype(torch::kDouble).requires_grad(true);
  EXPECT_EQ(os.str(),
            "TensorOptions(dtype=Double, device=cpu (default), layout=Strided, requires_grad=true, "
            "pinned_memory=false)");
}

// grad_fn()->name() as libtorch 1.13 names the nodes (checked with libtorch 1.13).
TEST(LibtorchAutograd, GradFnNames) {
  auto a = torch::ones({2, 2}, torch::requires_grad()),
       b = torch::ones({2, 2}, torch::requires_grad());
  const std::vector<std::pair<std::string, torch::Tensor>> cases = {
      {"AddBackward0", a + b},
      {"MulBackward0", a * b},
      {"SubBackward0", a - b},
      {"DivBackward0", a / b},
      // The Tensor-Scalar overloads are the "1" nodes in C++ (Python wraps scalars).
      {"AddBackward1", a + 2},
      {"SubBackward1", a - 2},
      {"MulBackward1", a * 2},
      {"MulBackward1", 2 * a},
      {"DivBackward1", a / 2},
      {"SumBackward0", a.sum()},
      {"SumBackward1", a.sum(1)},
      {"MeanBackward0", a.mean()},
      {"MeanBackward1", a.mean(1)},
      {"MmBackward0", a.mm(b)},
      {"ReluBackward0", torch::relu(a)},
      {"ViewBackward0", a.view({4})},
      {"TBackward0", a.t()},
      {"ExpBackward0", a.exp()},
      {"LogSoftmaxBackward0", torch::log_softmax(a, 1)},
      {"SigmoidBackward0", a.sigmoid()},
      {"TanhBackward0", a.tanh()},
      {"NegBackward0", -a},
      {"CloneBackward0", a.clone()},
      {"SelectBackward0", a.select(0, 1)},
      {"UnsqueezeBackward0", a.unsqueeze(0)},
      {"CatBackward0", torch::cat({a, b})}};
  for (const auto& [name, t] : cases) {
    ASSERT_TRUE(t.grad_fn()) << name;
    EXPECT_EQ(t.grad_fn()->name(), name);
  }
}

}  // namespace
