#pragma once
// TCPStore's wire format, shared by its client and server (tcp_store.cpp) and
// by the tests and fuzz targets that speak it. Internal to comm/.
#include <brasa/comm/store/store.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace brasa::distributed::wire {

// frame    := u32 length, then `length` bytes: u8 code, fields
// string   := u32 length, bytes;   value := u64 length, bytes
// Requests carry an Op, replies a Status. All integers little-endian.
enum class Op : uint8_t {
  kAuth = 1,
  kSet,
  kGet,
  kAdd,
  kCompareSet,
  kCheck,
  kDelete,
  kNumKeys,
  kWait,
  kCancelWait,
  kAppend,
  kMultiGet,
  kMultiSet,
};
enum class Status : uint8_t { kOk = 0, kError, kReady, kCanceled };

inline const std::string kInternalPrefix = "/brasa/tcp_store/";
inline const std::string kWorkersKey = kInternalPrefix + "workers";

class Writer {
 public:
  explicit Writer(uint8_t code) {
    out_.resize(4);
    out_.push_back(code);
  }
  Writer& u32(uint32_t v) { return raw(&v, 4); }
  Writer& u64(uint64_t v) { return raw(&v, 8); }
  Writer& str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    return raw(s.data(), s.size());
  }
  Writer& bytes(const Bytes& b) {
    u64(b.size());
    return raw(b.data(), b.size());
  }
  Writer& keys(const std::vector<std::string>& ks) {
    u32(static_cast<uint32_t>(ks.size()));
    for (const auto& k : ks) str(k);
    return *this;
  }
  Bytes finish() {
    uint32_t len = static_cast<uint32_t>(out_.size() - 4);
    std::memcpy(out_.data(), &len, 4);
    return std::move(out_);
  }

 private:
  Writer& raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
    return *this;
  }
  Bytes out_;
};

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads fields of one frame; any overrun is a ProtocolError.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  uint8_t u8() {
    uint8_t v;
    take(&v, 1);
    return v;
  }
  uint32_t u32() {
    uint32_t v;
    take(&v, 4);
    return v;
  }
  uint64_t u64() {
    uint64_t v;
    take(&v, 8);
    return v;
  }
  std::string str() {
    uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  Bytes bytes() {
    uint64_t n = u64();
    need(n);
    Bytes b(p_, p_ + n);
    p_ += n;
    return b;
  }
  std::vector<std::string> keys() {
    uint32_t n = u32();
    need(static_cast<uint64_t>(n) * 4);  // each key takes at least its length field
    std::vector<std::string> ks;
    for (uint32_t i = 0; i < n; ++i) ks.push_back(str());
    return ks;
  }
  void done() const {
    if (p_ != end_) throw ProtocolError(std::to_string(end_ - p_) + " unexpected trailing byte(s)");
  }

 private:
  void need(uint64_t n) const {
    if (n > static_cast<uint64_t>(end_ - p_))
      throw ProtocolError("a field runs past the end of its frame");
  }
  void take(void* v, size_t n) {
    need(n);
    std::memcpy(v, p_, n);
    p_ += n;
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

inline bool send_all(int fd, const Bytes& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

inline Bytes reply(Status s) { return Writer(static_cast<uint8_t>(s)).finish(); }
inline Bytes error_reply(const std::string& message) {
  return Writer(static_cast<uint8_t>(Status::kError)).str(message).finish();
}

}  // namespace brasa::distributed::wire
