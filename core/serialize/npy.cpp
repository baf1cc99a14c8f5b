#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/serialize/npy.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace brasa {
namespace {

const char kMagic[] = "\x93NUMPY";

std::string descr_of(ScalarType t) {
  switch (t) {
    case kFloat:
      return "<f4";
    case kDouble:
      return "<f8";
    case kHalf:
      return "<f2";
    case kLong:
      return "<i8";
    case kInt:
      return "<i4";
    case kShort:
      return "<i2";
    case kChar:
      return "|i1";
    case kByte:
      return "|u1";
    case kBool:
      return "|b1";
    default:
      BRASA_ERROR("save_npy: dtype ", t, " has no NumPy equivalent (bfloat16 is not a NumPy type)");
  }
}

ScalarType dtype_of(const std::string& d, const std::string& path) {
  BRASA_CHECK(d.size() >= 3, "load_npy: '", path, "': malformed dtype descriptor '", d, "'");
  BRASA_CHECK(d[0] != '>' || d.substr(1) == "i1" || d.substr(1) == "u1" || d.substr(1) == "b1",
              "load_npy: '", path, "': big-endian data ('", d, "') is not supported");
  std::string k = d.substr(1);
  if (k == "f4") return kFloat;
  if (k == "f8") return kDouble;
  if (k == "f2") return kHalf;
  if (k == "i8") return kLong;
  if (k == "i4") return kInt;
  if (k == "i2") return kShort;
  if (k == "i1") return kChar;
  if (k == "u1") return kByte;
  if (k == "b1") return kBool;
  BRASA_ERROR("load_npy: '", path, "': unsupported dtype descriptor '", d, "'");
}

// Value of `key` in the header dict, as written by NumPy: 'key': value,
std::string header_field(const std::string& h, const std::string& key, const std::string& path) {
  auto k = h.find("'" + key + "'");
  BRASA_CHECK(k != std::string::npos, "load_npy: '", path, "': header has no '", key,
              "' entry: ", h);
  auto colon = h.find(':', k);
  BRASA_CHECK(colon != std::string::npos, "load_npy: '", path, "': malformed header: ", h);
  size_t s = colon + 1;
  while (s < h.size() && h[s] == ' ') ++s;
  BRASA_CHECK(s < h.size(), "load_npy: '", path, "': malformed header: ", h);
  if (h[s] == '(') {
    auto e = h.find(')', s);
    BRASA_CHECK(e != std::string::npos, "load_npy: '", path,
                "': unterminated shape tuple in header: ", h);
    return h.substr(s, e - s + 1);
  }
  if (h[s] == '\'') {
    auto e = h.find('\'', s + 1);
    BRASA_CHECK(e != std::string::npos, "load_npy: '", path,
                "': unterminated string in header: ", h);
    return h.substr(s + 1, e - s - 1);
  }
  auto e = h.find_first_of(",}", s);
  BRASA_CHECK(e != std::string::npos, "load_npy: '", path, "': malformed header: ", h);
  return h.substr(s, e - s);
}

DimVector parse_shape(const std::string& tuple, const std::string& path) {
  DimVector shape;
  std::string inner = tuple.substr(1, tuple.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t a = item.find_first_not_of(' '), b = item.find_last_not_of(' ');
    if (a == std::string::npos) continue;
    item = item.substr(a, b - a + 1);
    BRASA_CHECK(!item.empty() && item.find_first_not_of("0123456789") == std::string::npos &&
                    item.size() < 19,
                "load_npy: '", path, "': invalid dimension '", item, "' in shape ", tuple);
    shape.push_back(std::stoll(item));
  }
  return shape;
}

}  // namespace

void save_npy(const std::string& path, const Tensor& t) {
  std::string descr = descr_of(t.dtype());
  Tensor c = contiguous(t);
  std::ostringstream h;
  h << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (int64_t i = 0; i < t.dim(); ++i)
    h << t.size(i) << (t.dim() == 1 || i + 1 < t.dim() ? ", " : "");
  h << "), }";
  std::string header = h.str();
  if (t.dim() == 1) header.replace(header.find(", ), }"), 6, ",), }");
  // Pad so that the data starts on a 64-byte boundary; the header ends in '\n'.
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  BRASA_CHECK(header.size() <= 65535, "save_npy: header too long for format 1.0");
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  BRASA_CHECK(fd >= 0, "save_npy: cannot open '", tmp, "' for writing: ", std::strerror(errno));
  auto write_all = [&](const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      ssize_t w = ::write(fd, c, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        int e = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        BRASA_ERROR("save_npy: write to '", tmp, "' failed: ", std::strerror(e));
      }
      c += w;
      n -= static_cast<size_t>(w);
    }
  };
  unsigned char pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           static_cast<unsigned char>(header.size() & 0xff),
                           static_cast<unsigned char>(header.size() >> 8)};
  write_all(pre, 10);
  write_all(header.data(), header.size());
  if (c.nbytes()) write_all(c.data_ptr(), c.nbytes());
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    BRASA_ERROR("save_npy: cannot flush '", tmp, "': ", std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    BRASA_ERROR("save_npy: cannot rename '", tmp, "' to '", path, "': ", std::strerror(e));
  }
}

Tensor load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  BRASA_CHECK(f.good(), "load_npy: cannot open '", path, "': ", std::strerror(errno));
  f.seekg(0, std::ios::end);
  int64_t file_size = f.tellg();
  f.seekg(0);
  char pre[8];
  BRASA_CHECK(file_size >= 10 && f.read(pre, 8), "load_npy: '", path, "' is truncated (", file_size,
              " bytes, shorter than the .npy preamble)");
  BRASA_CHECK(std::memcmp(pre, kMagic, 6) == 0, "load_npy: '", path,
              "' is not a .npy file (bad magic string)");
  int major = static_cast<unsigned char>(pre[6]);
  BRASA_CHECK(major >= 1 && major <= 3, "load_npy: '", path, "': unsupported format version ",
              major);
  uint32_t hlen = 0;
  unsigned char lb[4] = {};
  int nlen = major == 1 ? 2 : 4;
  BRASA_CHECK(f.read(reinterpret_cast<char*>(lb), nlen), "load_npy: '", path,
              "' is truncated in the header length");
  for (int i = nlen - 1; i >= 0; --i) hlen = (hlen << 8) | lb[i];
  int64_t data_start = 8 + nlen + static_cast<int64_t>(hlen);
  BRASA_CHECK(data_start <= file_size, "load_npy: '", path, "' is truncated: header of ", hlen,
              " bytes runs past the end of the file (", file_size, " bytes)");
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  std::string descr = header_field(header, "descr", path);
  std::string fortran = header_field(header, "fortran_order", path);
  BRASA_CHECK(fortran == "False" || fortran == "True", "load_npy: '", path,
              "': bad fortran_order '", fortran, "'");
  std::string shape_s = header_field(header, "shape", path);
  BRASA_CHECK(shape_s.size() >= 2 && shape_s.front() == '(', "load_npy: '", path, "': bad shape ",
              shape_s);
  DimVector shape = parse_shape(shape_s, path);
  ScalarType t = dtype_of(descr, path);
  int64_t numel = compute_numel(shape);
  int64_t nbytes = numel * static_cast<int64_t>(elementSize(t));
  BRASA_CHECK(data_start + nbytes <= file_size, "load_npy: '", path, "' is truncated: shape ",
              IntArrayRef(shape), " of ", t, " needs ", nbytes, " data bytes but only ",
              file_size - data_start, " are present");
  bool is_fortran = fortran == "True";
  DimVector rev;
  for (size_t i = shape.size(); i-- > 0;) rev.push_back(shape[i]);
  Tensor out = empty(is_fortran ? IntArrayRef(rev) : IntArrayRef(shape), TensorOptions().dtype(t));
  if (nbytes) f.read(static_cast<char*>(out.data_ptr()), nbytes);
  if (t == kBool) {
    // NumPy bools are bytes; anything but 0/1 would be undefined behaviour here.
    uint8_t* b = static_cast<uint8_t*>(out.data_ptr());
    for (int64_t i = 0; i < numel; ++i)
      BRASA_CHECK(b[i] <= 1, "load_npy: '", path, "': invalid bool byte ", int(b[i]),
                  " at element ", i);
  }
  if (is_fortran) {
    DimVector perm;
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) perm.push_back(i);
    out = contiguous(out.permute(perm));
  }
  return out;
}

}  // namespace brasa
