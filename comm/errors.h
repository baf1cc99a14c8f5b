#pragma once
// Errors of the distributed layer. All derive from brasa::Error, so a
// catch (const brasa::Error&) sees them; timeouts have their own type so that
// callers can tell "slow or dead peer" from "wrong use".

#include <brasa/util/error.h>

#include <string>

namespace brasa::distributed {

class DistError : public brasa::Error {
 public:
  using brasa::Error::Error;
};

class DistTimeoutError : public DistError {
 public:
  using DistError::DistError;
};

// Peer gone, connection refused or broken.
class DistNetworkError : public DistError {
 public:
  using DistError::DistError;
};

// A backend's own failure (an NCCL communicator error, an aborted communicator).
class DistBackendError : public DistError {
 public:
  using DistError::DistError;
};

}  // namespace brasa::distributed

// Throws the given error type with the message built from the arguments,
// e.g. BRASA_DIST_THROW(DistTimeoutError, "TCPStore.get: ...", key).
#define BRASA_DIST_THROW(Type, ...) \
  throw ::brasa::distributed::Type(::brasa::detail::str(__VA_ARGS__), "", __FILE__, __LINE__)
