#pragma once
// Shared secrets (the job token of brasarun and TCPStore). Header-only and
// standard C++ only: brasarun uses it without linking brasa_core.
#include <algorithm>
#include <cstddef>
#include <string_view>

namespace brasa::util {

// Whether two secrets are equal, in a time that does not depend on where
// they differ (only on the longer one's length).
inline bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    diff |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace brasa::util
