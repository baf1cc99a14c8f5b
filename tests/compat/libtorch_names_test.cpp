// Coverage of libtorch 1.13's C++ API names (gen_libtorch_names.py lists
// them from libtorch's headers). Every name marked present is used below
// through a using-declaration, so this file stops compiling when one goes
// missing; the test reports the coverage per kind of name. The same holds
// for the option structs' fields (gen_libtorch_option_fields.py): a getter
// options.f() and a setter options.f(value) for every field marked present.
#include <brasa/torch.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "libtorch_names_present.inc"
#include "libtorch_option_fields_present.inc"

namespace {

TEST(LibtorchNames, Coverage) {
  std::ifstream in(BRASA_LIBTORCH_NAMES);
  ASSERT_TRUE(in) << "cannot read " << BRASA_LIBTORCH_NAMES;
  std::map<std::string, std::pair<int, int>> per_kind;  // present, total
  std::string line;
  int present = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string kind, ns, name, state, bar;
    std::getline(fields, kind, '|');
    std::getline(fields, ns, '|');
    std::getline(fields, name, '|');
    std::getline(fields, state);
    auto& counts = per_kind[kind];
    ++counts.second;
    if (state.find("present") != std::string::npos) ++counts.first, ++present;
  }
  int total = 0;
  for (const auto& [kind, counts] : per_kind) {
    std::printf("libtorch names: %-30s %4d of %4d\n", kind.c_str(), counts.first, counts.second);
    total += counts.second;
  }
  std::printf("libtorch names: %-30s %4d of %4d\n", "all", present, total);
  EXPECT_GT(total, 0);
  EXPECT_GT(present, 0);
}

TEST(LibtorchNames, OptionFieldCoverage) {
  std::ifstream in(BRASA_LIBTORCH_OPTION_FIELDS);
  ASSERT_TRUE(in) << "cannot read " << BRASA_LIBTORCH_OPTION_FIELDS;
  int present = 0, total = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    ++total;
    if (line.size() >= 7 && line.compare(line.size() - 7, 7, "present") == 0) ++present;
  }
  std::printf("libtorch option fields (getter and setter): %d of %d\n", present, total);
  EXPECT_GT(present, 0);
}

}  // namespace
