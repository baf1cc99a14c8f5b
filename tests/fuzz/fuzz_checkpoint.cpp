// Training checkpoints (load_checkpoint into a model and an optimizer): a
// failed load must leave both as they were.
#include <brasa/brasa.h>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto model = std::make_shared<brasa::nn::LinearImpl>(3, 2);
  static brasa::optim::SGD optimizer(model->parameters(),
                                     brasa::optim::SGDOptions(0.1).momentum(0.9));
  const std::string path = brasa::fuzz::as_file(data, size);
  // Compared bit for bit: an earlier input may have loaded NaN weights, and
  // NaN != NaN would look like a change.
  const brasa::Tensor before = model->weight.detach().clone().view(brasa::kInt);
  try {
    brasa::serialize::load_checkpoint(path, *model, &optimizer);
  } catch (const brasa::Error&) {
    if (!brasa::equal(before, model->weight.detach().view(brasa::kInt)))
      __builtin_trap();  // a half-restore
  }
  return 0;
}
