// The README's usage example.
#include <brasa/torch.h>

#include <iostream>

int main() {
  torch::manual_seed(0);
  torch::Tensor x = torch::tensor({{1.0, -0.5}, {2.0, 3.0}});
  torch::Tensor w = torch::randn({2, 3});
  torch::Tensor y = torch::relu(x.matmul(w)).sum(1);
  std::cout << x << "\n" << y.sizes() << "\n";
  std::cout << x.softmax(-1) << std::endl;
  return 0;
}
