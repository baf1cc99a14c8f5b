#include <brasa/ops/factory.h>
#include <brasa/serialize/safetensors.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace brasa::serialize {
namespace {

const char* dtype_name(ScalarType t) {
  switch (t) {
    case kFloat:
      return "F32";
    case kDouble:
      return "F64";
    case kHalf:
      return "F16";
    case kBFloat16:
      return "BF16";
    case kLong:
      return "I64";
    case kInt:
      return "I32";
    case kShort:
      return "I16";
    case kChar:
      return "I8";
    case kByte:
      return "U8";
    case kBool:
      return "BOOL";
    default:
      BRASA_ERROR("safetensors: unsupported dtype ", t);
  }
}

ScalarType dtype_of(const std::string& s, const std::string& path, const std::string& key) {
  static const std::map<std::string, ScalarType> names = {
      {"F32", kFloat}, {"F64", kDouble}, {"F16", kHalf}, {"BF16", kBFloat16}, {"I64", kLong},
      {"I32", kInt},   {"I16", kShort},  {"I8", kChar},  {"U8", kByte},       {"BOOL", kBool}};
  auto it = names.find(s);
  BRASA_CHECK(it != names.end(), "safetensors: '", path, "': tensor '", key,
              "' has unsupported dtype '", s, "'");
  return it->second;
}

void write_all(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    BRASA_CHECK(w > 0, "save: writing '", path, "' failed: ", std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Temp files of writers that were killed mid-save ("<name>.tmp.<pid>" whose
// process no longer exists) are removed after a successful save.
void remove_stale_temps(const std::string& dir, const std::string& name) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  const std::string prefix = name + ".tmp.";
  while (dirent* e = ::readdir(d)) {
    std::string f = e->d_name;
    if (f.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    long pid = std::strtol(f.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::unlink((dir + "/" + f).c_str());
  }
  ::closedir(d);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  BRASA_CHECK(fd >= 0, "save: cannot create '", tmp, "': ", std::strerror(errno));
  try {
    write_all(fd, bytes.data(), bytes.size(), tmp);
    BRASA_CHECK(::fsync(fd) == 0, "save: fsync of '", tmp, "' failed: ", std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    BRASA_ERROR("save: cannot rename '", tmp, "' to '", path, "': ", std::strerror(e));
  }
  // Make the rename itself durable.
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  remove_stale_temps(dir.empty() ? "/" : dir, path.substr(path.rfind('/') + 1));
  int dfd = ::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void save_safetensors(const std::string& path, const TensorDict& tensors,
                      const Metadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> contiguous;
  size_t offset = 0;
  for (const auto& item : tensors) {
    BRASA_CHECK(item.key() != "__metadata__", "save_safetensors: '__metadata__' is reserved");
    // A tensor on another device is saved from a CPU copy (as safetensors'
    // own save_file does): the file has no device field.
    Tensor t = item.value().detach().cpu().contiguous();
    size_t n = t.nbytes();
    header[item.key()] = {{"dtype", dtype_name(t.dtype())},
                          {"shape", t.sizes().vec()},
                          {"data_offsets", {offset, offset + n}}};
    offset += n;
    contiguous.push_back(t);
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h.push_back(' ');  // data starts 8-byte aligned
  std::string bytes;
  bytes.reserve(8 + h.size() + offset);
  uint64_t len = h.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  bytes += h;
  for (const auto& t : contiguous) bytes.append(static_cast<const char*>(t.data_ptr()), t.nbytes());
  write_file_atomically(path, bytes);
}

TensorDict load_safetensors(const std::string& path, Metadata* metadata) {
  std::ifstream in(path, std::ios::binary);
  BRASA_CHECK(in, "load_safetensors: cannot open '", path, "': ", std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BRASA_CHECK(bytes.size() >= 8, "load_safetensors: '", path, "' is truncated (", bytes.size(),
              " bytes, shorter than the 8-byte header length)");
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i)
    len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  BRASA_CHECK(len <= bytes.size() - 8, "load_safetensors: '", path,
              "' is truncated: header length ", len, " exceeds the file size ", bytes.size());
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, len));
  } catch (const std::exception& e) {
    BRASA_ERROR("load_safetensors: '", path, "' has a corrupt JSON header: ", e.what());
  }
  BRASA_CHECK(header.is_object(), "load_safetensors: '", path,
              "': the header is not a JSON object");
  const size_t data_start = 8 + len, data_size = bytes.size() - data_start;
  TensorDict out;
  // Keep the file's order: sort entries by their data offset.
  std::vector<std::pair<size_t, std::string>> order;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      BRASA_CHECK(it.value().is_object(), "load_safetensors: '", path,
                  "': __metadata__ is not a JSON object");
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        BRASA_CHECK(m.value().is_string(), "load_safetensors: '", path, "': metadata '", m.key(),
                    "' is not a string");
        if (metadata) (*metadata)[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    // Every field is checked for its JSON type before it is read: a value of
    // another type would throw nlohmann's exception, and an index past the
    // end of an array reads out of bounds.
    const auto& e = it.value();
    const auto is_count = [](const nlohmann::json& v) { return v.is_number_unsigned(); };
    BRASA_CHECK(e.is_object() && e.contains("dtype") && e["dtype"].is_string() &&
                    e.contains("shape") && e["shape"].is_array() &&
                    std::all_of(e["shape"].begin(), e["shape"].end(), is_count) &&
                    e.contains("data_offsets") && e["data_offsets"].is_array() &&
                    e["data_offsets"].size() == 2 && is_count(e["data_offsets"][0]) &&
                    is_count(e["data_offsets"][1]),
                "load_safetensors: '", path, "': entry '", it.key(),
                "' needs a string dtype, a shape of non-negative integers and data_offsets of two "
                "non-negative integers");
    order.push_back({e["data_offsets"][0].get<size_t>(), it.key()});
  }
  std::sort(order.begin(), order.end());
  for (const auto& [start, key] : order) {
    const auto& e = header[key];
    ScalarType t = dtype_of(e["dtype"].get<std::string>(), path, key);
    std::vector<int64_t> shape = e["shape"].get<std::vector<int64_t>>();
    size_t b = e["data_offsets"][0].get<size_t>(), en = e["data_offsets"][1].get<size_t>();
    int64_t numel = 1;
    for (auto s : shape)
      BRASA_CHECK(s >= 0 && !__builtin_mul_overflow(numel, s, &numel) &&
                      numel <= static_cast<int64_t>(data_size),
                  "load_safetensors: '", path, "': tensor '", key, "' of shape ",
                  IntArrayRef(shape), " has more elements than the file's ", data_size,
                  " data bytes");
    BRASA_CHECK(b <= en && en <= data_size, "load_safetensors: '", path, "': tensor '", key,
                "' has data offsets [", b, ", ", en, "] outside the ", data_size,
                " data bytes (file truncated?)");
    BRASA_CHECK(en - b == static_cast<size_t>(numel) * elementSize(t), "load_safetensors: '", path,
                "': tensor '", key, "' of shape ", IntArrayRef(shape), " and dtype ", t, " needs ",
                numel * elementSize(t), " bytes but its offsets span ", en - b);
    Tensor x = empty(shape, TensorOptions().dtype(t));
    if (en > b) std::memcpy(x.data_ptr(), bytes.data() + data_start + b, en - b);
    out.insert(key, x);
  }
  return out;
}

}  // namespace brasa::serialize
