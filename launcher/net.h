#pragma once
// The few TCP pieces the multi-node rendezvous needs: listen, connect, and a
// channel of text lines.

#include <string>
#include <vector>

namespace brasarun {

// Listens on every interface (IPv6 and IPv4 where possible) at `port`
// (0: any free port). Returns the socket, or -1 with `error` set.
int listen_tcp(int port, int* bound_port, std::string* error);

// One connection attempt to host:port. Returns the socket, or -1 with
// `error` set.
int connect_tcp(const std::string& host, int port, std::string* error);

// A port that was free a moment ago (bound to port 0, then released).
int pick_free_port();

// The job's secret: BRASA_JOB_TOKEN when set (every node of a multi-node job
// sets the same), otherwise 128 random bits in hex, made once per brasarun.
// The rendezvous admits only nodes that present it, and the workers' store
// only workers that do (BRASA_STORE_TOKEN).
const std::string& job_token();

// Text lines over a socket. Sends block (the lines are short); receives do not.
class LineChannel {
 public:
  static constexpr size_t kMaxLine = 4096;  // longer lines end the connection

  LineChannel() = default;
  explicit LineChannel(int fd) : fd_(fd) {}
  ~LineChannel();
  LineChannel(LineChannel&& other) noexcept;
  LineChannel& operator=(LineChannel&& other) noexcept;

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void close();
  // False when the peer is gone.
  bool send(std::string line);
  // Appends the complete lines that have arrived. False at end of stream,
  // on an error, or when the peer sent a line that is too long.
  bool receive(std::vector<std::string>& lines);

 private:
  int fd_ = -1;
  std::string buffer_;
};

// Splits "verb a b rest of line": the first `n` words, then the remainder.
std::vector<std::string> split_words(const std::string& line, size_t n);

// Makes a reason safe to put on one protocol line.
std::string one_line(std::string text);

}  // namespace brasarun
