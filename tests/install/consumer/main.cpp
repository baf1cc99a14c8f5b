#include <brasa/torch.h>

#include <iostream>

int main() {
  auto x = torch::arange(6, torch::kFloat).view({2, 3});
  auto y = x.matmul(x.t()).sum();
  std::cout << y << std::endl;
  return y.item<float>() == 83.0f ? 0 : 1;  // [[5, 14], [14, 50]] summed
}
