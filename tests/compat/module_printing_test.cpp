// Modules print as libtorch 1.13 prints them: the cases of
// module_printing_cases.inc compiled against Brasa must give the strings that
// the same source gave against libtorch. To regenerate the goldens (needs
// Debian's libtorch-dev), from tests/compat:
//   g++ -std=c++17 gen_module_printing.cpp -I/usr/include/torch/csrc/api/include \
//       -ltorch -ltorch_cpu -lc10 -o gen && ./gen > module_printing_goldens.inc
#include <brasa/torch.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "module_printing_user.inc"

namespace {

const std::vector<std::string> kLibtorchPrints = {
#include "module_printing_goldens.inc"
};

TEST(ModulePrinting, EveryCaseAsLibtorch) {
  std::vector<std::string> printed;
#define CASE(...)                \
  {                              \
    std::ostringstream os;       \
    os << __VA_ARGS__;           \
    printed.push_back(os.str()); \
  }
#include "module_printing_cases.inc"
#undef CASE
  ASSERT_EQ(printed.size(), kLibtorchPrints.size());
  for (size_t i = 0; i < printed.size(); ++i)
    EXPECT_EQ(printed[i], kLibtorchPrints[i]) << "case " << i;
}

}  // namespace
