#pragma once
// Raw TCP peers for the TCPStore tests: they speak the wire format by hand,
// as a broken or hostile program would.
#include <brasa/comm/store/tcp_store_wire.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace brasa::distributed::test {

// A connection to 127.0.0.1:port (-1 if refused).
inline int raw_connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything the peer sends until it closes (or `seconds` pass).
inline std::string read_until_closed(int fd, int seconds = 5) {
  timeval tv{seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  char buf[65536];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) got.append(buf, static_cast<size_t>(n));
  return got;
}

// Sends raw bytes to the server and returns what it answers before closing.
inline std::string raw_exchange(uint16_t port, const std::string& bytes) {
  int fd = raw_connect(port);
  if (fd < 0) return "<refused>";
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);  // the server sees the end after these bytes
  std::string reply = read_until_closed(fd);
  ::close(fd);
  return reply;
}

// A frame of the wire format: u32 length, then the body.
inline std::string frame(const std::string& body) {
  uint32_t len = static_cast<uint32_t>(body.size());
  return std::string(reinterpret_cast<char*>(&len), 4) + body;
}

// A well-formed GET request for `key`.
inline std::string get_request(const std::string& key) {
  const Bytes f = wire::Writer(static_cast<uint8_t>(wire::Op::kGet)).str(key).finish();
  return std::string(f.begin(), f.end());
}

}  // namespace brasa::distributed::test
