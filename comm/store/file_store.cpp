#include "file_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace brasa::distributed {

namespace {

constexpr uint8_t kSetRecord = 1;
constexpr uint8_t kDeleteRecord = 2;
// Internal keys (reference counting) are hidden from num_keys().
const std::string kInternal = "/brasa/file_store/";
const std::string kJoinedKey = kInternal + "joined";
const std::string kLeftKey = kInternal + "left";

bool read_exact(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

// Opens the file, takes the exclusive lock and replays new records; the
// destructor unlocks and closes.
class FileStore::Locked {
 public:
  explicit Locked(FileStore& s) : store_(s), guard_(s.mu_) {
    fd_ = ::open(s.path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      BRASA_DIST_THROW(DistError, "FileStore: cannot open '", s.path_, "': ", std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        int e = errno;
        ::close(fd_);
        BRASA_DIST_THROW(DistError, "FileStore: cannot lock '", s.path_, "': ", std::strerror(e));
      }
    }
    s.replay(fd_);
  }
  ~Locked() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  FileStore& store_;
  std::lock_guard<std::mutex> guard_;
  int fd_ = -1;
};

FileStore::FileStore(std::string path, int num_workers, std::chrono::milliseconds timeout)
    : Store(timeout), path_(std::move(path)), num_workers_(num_workers) {
  BRASA_CHECK(!path_.empty(), "FileStore: the path is empty");
  add(kJoinedKey, 1);
}

FileStore::~FileStore() {
  try {
    Locked f(*this);
    auto it = data_.find(kLeftKey);
    int64_t left =
        (it == data_.end() ? 0 : detail::parse_counter("FileStore", kLeftKey, it->second)) + 1;
    write_record(f.fd(), kSetRecord, kLeftKey, detail::format_counter(left));
    if (num_workers_ > 0 && left >= num_workers_) ::unlink(path_.c_str());
  } catch (...) {
    // A destructor must not throw; the file stays behind.
  }
}

void FileStore::replay(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) BRASA_DIST_THROW(DistError, "FileStore: cannot stat '", path_, "'");
  if (st.st_size < read_offset_) {  // the file was removed and started over
    data_.clear();
    read_offset_ = 0;
  }
  if (::lseek(fd, read_offset_, SEEK_SET) < 0)
    BRASA_DIST_THROW(DistError, "FileStore: cannot seek in '", path_, "'");
  while (read_offset_ < st.st_size) {
    uint8_t kind = 0;
    uint32_t key_len = 0;
    uint64_t value_len = 0;
    std::string key;
    Bytes value;
    bool ok = read_exact(fd, &kind, 1) && read_exact(fd, &key_len, 4) && key_len <= (1u << 20);
    if (ok) {
      key.resize(key_len);
      ok = read_exact(fd, key.data(), key_len) && read_exact(fd, &value_len, 8) &&
           value_len <= static_cast<uint64_t>(st.st_size);
    }
    if (ok) {
      value.resize(value_len);
      ok = read_exact(fd, value.data(), value_len) && (kind == kSetRecord || kind == kDeleteRecord);
    }
    if (!ok)
      BRASA_DIST_THROW(DistError, "FileStore: '", path_, "' is corrupt at byte ", read_offset_,
                       " (is another program writing to it?)");
    if (kind == kSetRecord)
      data_[key] = std::move(value);
    else
      data_.erase(key);
    read_offset_ += 1 + 4 + key_len + 8 + static_cast<int64_t>(value_len);
  }
}

void FileStore::write_record(int fd, uint8_t kind, const std::string& key, const Bytes& value) {
  Bytes rec;
  uint32_t key_len = static_cast<uint32_t>(key.size());
  uint64_t value_len = value.size();
  rec.push_back(kind);
  rec.insert(rec.end(), reinterpret_cast<uint8_t*>(&key_len),
             reinterpret_cast<uint8_t*>(&key_len) + 4);
  rec.insert(rec.end(), key.begin(), key.end());
  rec.insert(rec.end(), reinterpret_cast<uint8_t*>(&value_len),
             reinterpret_cast<uint8_t*>(&value_len) + 8);
  rec.insert(rec.end(), value.begin(), value.end());
  if (::lseek(fd, 0, SEEK_END) < 0)
    BRASA_DIST_THROW(DistError, "FileStore: cannot seek in '", path_, "'");
  size_t done = 0;
  while (done < rec.size()) {
    ssize_t w = ::write(fd, rec.data() + done, rec.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      BRASA_DIST_THROW(DistError, "FileStore: cannot write '", path_, "': ", std::strerror(errno));
    done += static_cast<size_t>(w);
  }
  // Our own record is now part of what we have read.
  read_offset_ += static_cast<int64_t>(rec.size());
  if (kind == kSetRecord)
    data_[key] = value;
  else
    data_.erase(key);
}

void FileStore::set(const std::string& key, const Bytes& value) {
  Locked f(*this);
  write_record(f.fd(), kSetRecord, key, value);
}

Bytes FileStore::get(const std::string& key) {
  wait({key}, timeout_);
  Locked f(*this);
  auto it = data_.find(key);
  if (it == data_.end())
    BRASA_DIST_THROW(DistError, "FileStore.get: key '", key, "' was deleted while being read");
  return it->second;
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  Locked f(*this);
  auto it = data_.find(key);
  const int64_t value =
      detail::add_to_counter("FileStore", key, it == data_.end() ? nullptr : &it->second, delta);
  write_record(f.fd(), kSetRecord, key, detail::format_counter(value));
  return value;
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  Locked f(*this);
  auto it = data_.find(key);
  bool replace = false;
  Bytes result = detail::compare_set_result(it == data_.end() ? nullptr : &it->second, expected,
                                            desired, &replace);
  if (replace) write_record(f.fd(), kSetRecord, key, desired);
  return result;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  Locked f(*this);
  return std::all_of(keys.begin(), keys.end(), [&](const auto& k) { return data_.count(k) > 0; });
}

bool FileStore::delete_key(const std::string& key) {
  Locked f(*this);
  if (!data_.count(key)) return false;
  write_record(f.fd(), kDeleteRecord, key, {});
  return true;
}

int64_t FileStore::num_keys() {
  Locked f(*this);
  return std::count_if(data_.begin(), data_.end(),
                       [](const auto& kv) { return kv.first.rfind(kInternal, 0) != 0; });
}

void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto sleep = std::chrono::milliseconds(1);
  for (;;) {
    std::vector<std::string> missing;
    {
      Locked f(*this);
      for (const auto& k : keys)
        if (!data_.count(k)) missing.push_back(k);
    }
    if (missing.empty()) return;
    if (timeout != kNoTimeout && std::chrono::steady_clock::now() >= deadline)
      BRASA_DIST_THROW(DistTimeoutError, "FileStore.wait: timed out after ", timeout.count(),
                       " ms waiting for key(s) ", detail::quote_keys(missing), " in '", path_, "'");
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::milliseconds(20));
  }
}

void FileStore::append(const std::string& key, const Bytes& value) {
  Locked f(*this);
  auto it = data_.find(key);
  Bytes v = it == data_.end() ? Bytes() : it->second;
  v.insert(v.end(), value.begin(), value.end());
  write_record(f.fd(), kSetRecord, key, v);
}

}  // namespace brasa::distributed
