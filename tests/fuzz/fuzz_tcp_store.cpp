// TCPStore's wire format: each input is sent raw to a server of this
// process; afterwards the server must still serve a well-behaved client.
#include <brasa/comm/store/tcp_store.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "fuzz_util.h"

namespace {

brasa::distributed::TCPStore& server() {
  static brasa::distributed::TCPStore* s = [] {
    brasa::distributed::TCPStoreOptions o;
    o.port = 0;
    o.isServer = true;
    o.connectionTimeout = std::chrono::milliseconds(200);
    return new brasa::distributed::TCPStore("127.0.0.1", o);
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static uint64_t runs = 0;
  brasa::distributed::TCPStore& store = server();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(store.port());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    ::send(fd, data, size, MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[65536];
    while (::recv(fd, buf, sizeof buf, 0) > 0) {
    }
  }
  ::close(fd);
  if (++runs % 64 == 0) {  // still serving
    store.set("fuzz-check", "ok");
    if (brasa::distributed::to_string(store.get("fuzz-check")) != "ok") __builtin_trap();
  }
  return 0;
}
