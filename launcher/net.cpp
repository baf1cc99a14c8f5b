#include "net.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace brasarun {

namespace {

int bind_any(int family, int port, std::string* error) {
  int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  int one = 1, zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (family == AF_INET6) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  if (rc != 0) {
    *error = "cannot bind port " + std::to_string(port) + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

int local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return -1;
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

}  // namespace

int listen_tcp(int port, int* bound_port, std::string* error) {
  int fd = bind_any(AF_INET6, port, error);
  if (fd < 0 && errno != EADDRINUSE) fd = bind_any(AF_INET, port, error);
  if (fd < 0) return -1;
  if (::listen(fd, 128) != 0) {
    *error = std::string("listen: ") + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  *bound_port = local_port(fd);
  return fd;
}

int pick_free_port() {
  std::string error;
  int fd = bind_any(AF_INET6, 0, &error);
  if (fd < 0) fd = bind_any(AF_INET, 0, &error);
  if (fd < 0) return 0;
  int port = local_port(fd);
  ::close(fd);
  return port;
}

const std::string& job_token() {
  static const std::string token = [] {
    const char* given = std::getenv("BRASA_JOB_TOKEN");
    if (given && *given) return std::string(given);
    unsigned char bytes[16] = {};
    const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    const bool ok = fd >= 0 && ::read(fd, bytes, sizeof bytes) == ssize_t(sizeof bytes);
    if (fd >= 0) ::close(fd);
    if (!ok) throw std::runtime_error("brasarun: cannot read /dev/urandom for the job's token");
    static const char* hex = "0123456789abcdef";
    std::string t;
    for (unsigned char b : bytes) t += {hex[b >> 4], hex[b & 15]};
    return t;
  }();
  return token;
}

int connect_tcp(const std::string& host, int port, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    *error = "cannot resolve '" + host + "': " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    *error = "cannot connect to " + host + ":" + service + ": " + std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd >= 0) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

LineChannel::~LineChannel() { close(); }

LineChannel::LineChannel(LineChannel&& other) noexcept
    : fd_(other.fd_), buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

LineChannel& LineChannel::operator=(LineChannel&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    buffer_ = std::move(other.buffer_);
    other.fd_ = -1;
  }
  return *this;
}

void LineChannel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

bool LineChannel::send(std::string line) {
  if (fd_ < 0) return false;
  line.push_back('\n');
  std::string_view rest(line);
  while (!rest.empty()) {
    ssize_t n = ::send(fd_, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool LineChannel::receive(std::vector<std::string>& lines) {
  if (fd_ < 0) return false;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      return false;
    }
    buffer_.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buffer_.find('\n')) != std::string::npos) {
      lines.push_back(buffer_.substr(0, nl));
      buffer_.erase(0, nl + 1);
    }
    if (buffer_.size() > kMaxLine) return false;
  }
}

std::vector<std::string> split_words(const std::string& line, size_t n) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (out.size() < n && pos < line.size()) {
    size_t sp = line.find(' ', pos);
    if (sp == std::string::npos) sp = line.size();
    out.push_back(line.substr(pos, sp - pos));
    pos = sp + 1;
  }
  out.push_back(pos < line.size() ? line.substr(pos) : std::string());
  return out;
}

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  if (text.size() > 1024) text.resize(1024);
  return text;
}

}  // namespace brasarun
