// The README's nn/optim/data example (built, so that it keeps compiling).
#include <brasa/torch.h>

struct NetImpl : torch::nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 128));
    fc2 = register_module("fc2", torch::nn::Linear(128, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    return fc2->forward(torch::relu(fc1->forward(x.flatten(1))));
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

int main(int argc, char** argv) {
  auto net = std::make_shared<NetImpl>();
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
  torch::data::datasets::MNIST train(argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist");
  auto loader =
      torch::data::make_data_loader(torch::data::TensorDataset(train.data(), train.targets()), 64);
  for (auto& batch : *loader) {
    opt.zero_grad();
    torch::F::cross_entropy(net->forward(batch.data), batch.target).backward();
    opt.step();
  }
  torch::serialize::save_checkpoint("net.safetensors", *net, &opt, {{"epoch", "1"}});
  return 0;
}
