#pragma once
// Helpers shared by the core tests.
#include <brasa/brasa.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace brasa::testing {

// Elements of `t` (any dtype, any layout) as doubles, in row-major order.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

inline std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

// What the module's pretty_print writes.
inline std::string printed(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

}  // namespace brasa::testing

#define EXPECT_VALUES(t, ...) \
  EXPECT_EQ(::brasa::testing::values(t), (std::vector<double> __VA_ARGS__))
#define EXPECT_SHAPE(t, ...) \
  EXPECT_EQ(::brasa::testing::shape(t), (std::vector<int64_t> __VA_ARGS__))
#define EXPECT_CLOSE(t, expected, tol)                                                         \
  do {                                                                                         \
    auto _v = ::brasa::testing::values(t);                                                     \
    std::vector<double> _e = expected;                                                         \
    ASSERT_EQ(_v.size(), _e.size());                                                           \
    for (size_t _i = 0; _i < _v.size(); ++_i) EXPECT_NEAR(_v[_i], _e[_i], tol) << "at " << _i; \
  } while (0)

// Expects a brasa::Error whose message contains `needle`.
#define EXPECT_ERROR(needle, ...) EXPECT_ERROR_IMPL((__VA_ARGS__), needle)
#define EXPECT_ERROR_IMPL(stmt, needle)                                                          \
  do {                                                                                           \
    try {                                                                                        \
      (void)(stmt);                                                                              \
      ADD_FAILURE() << "no error from: " #stmt;                                                  \
    } catch (const Error& e) {                                                                   \
      EXPECT_NE(e.message().find(needle), std::string::npos)                                     \
          << "message of " #stmt " was: " << e.message() << "\nexpected to contain: " << needle; \
    }                                                                                            \
  } while (0)
