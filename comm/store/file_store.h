#pragma once
// FileStore: a Store in a file that processes on one machine (or on a shared
// file system) open by path. The file is a log of records appended under an
// exclusive flock; each process replays what it has not seen yet. The last
// of `num_workers` stores to be destroyed removes the file.

#include <brasa/comm/store/store.h>

#include <map>
#include <mutex>

namespace brasa::distributed {

class FileStore : public Store {
 public:
  // num_workers <= 0: the file is never removed automatically.
  FileStore(std::string path, int num_workers, std::chrono::milliseconds timeout = kDefaultTimeout);
  ~FileStore() override;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  void append(const std::string& key, const Bytes& value) override;
  using Store::set;

  const std::string& path() const { return path_; }

 private:
  class Locked;  // the file, opened, locked and replayed
  void write_record(int fd, uint8_t kind, const std::string& key, const Bytes& value);
  void replay(int fd);

  std::string path_;
  int num_workers_;
  std::mutex mu_;
  std::map<std::string, Bytes> data_;
  int64_t read_offset_ = 0;
};

}  // namespace brasa::distributed
