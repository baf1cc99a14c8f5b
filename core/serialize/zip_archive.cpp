#include <brasa/serialize/zip_archive.h>
#include <brasa/util/error.h>
#include <zlib.h>

#include <cstring>

namespace brasa::serialize {

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEndRecord = 0x06054b50,
                   kEnd64Record = 0x06064b50, kEnd64Locator = 0x07064b50;

uint64_t get(std::string_view b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(b[at + static_cast<size_t>(i)]);
  return v;
}

void put(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

bool looks_like_zip(std::string_view bytes) {
  return bytes.size() >= 4 && get(bytes, 0, 4) == kLocalHeader;
}

ZipReader::ZipReader(std::string bytes, std::string what)
    : bytes_(std::move(bytes)), what_(std::move(what)) {
  const std::string_view b(bytes_);
  auto need = [&](bool ok, const char* field) {
    BRASA_CHECK(ok, "load: '", what_, "' is not a valid zip archive (", field, ")");
  };
  need(b.size() >= 22, "too short for an end record");
  // The end record is in the last 64 KiB + 22 bytes (after an optional comment).
  size_t end = std::string_view::npos;
  for (size_t at = b.size() - 22;; --at) {
    if (get(b, at, 4) == kEndRecord) {
      end = at;
      break;
    }
    if (at == 0 || b.size() - at > 65557) break;
  }
  need(end != std::string_view::npos, "no end record");
  uint64_t count = get(b, end + 10, 2), dir_size = get(b, end + 12, 4),
           dir_at = get(b, end + 16, 4);
  if ((count == 0xffff || dir_at == 0xffffffff) && end >= 20 &&
      get(b, end - 20, 4) == kEnd64Locator) {  // zip64
    const uint64_t rec = get(b, end - 12, 8);
    need(rec + 56 <= b.size() && get(b, static_cast<size_t>(rec), 4) == kEnd64Record,
         "bad zip64 end record");
    count = get(b, static_cast<size_t>(rec) + 32, 8);
    dir_size = get(b, static_cast<size_t>(rec) + 40, 8);
    dir_at = get(b, static_cast<size_t>(rec) + 48, 8);
  }
  need(dir_at <= b.size() && dir_size <= b.size() - dir_at && count <= dir_size / 46 + 1,
       "central directory out of bounds");
  size_t at = static_cast<size_t>(dir_at);
  for (uint64_t i = 0; i < count; ++i) {
    need(at + 46 <= b.size() && get(b, at, 4) == kCentralHeader, "bad central directory entry");
    const uint64_t method = get(b, at + 10, 2);
    uint64_t size = get(b, at + 20, 4), raw_size = get(b, at + 24, 4);
    const size_t name_len = get(b, at + 28, 2), extra_len = get(b, at + 30, 2),
                 comment_len = get(b, at + 32, 2);
    uint64_t local = get(b, at + 42, 4);
    need(at + 46 + name_len + extra_len + comment_len <= b.size(), "entry runs past the directory");
    std::string name(b.substr(at + 46, name_len));
    // zip64 sizes and offset, in this order, for the fields that are all ones.
    for (size_t e = at + 46 + name_len; e + 4 <= at + 46 + name_len + extra_len;) {
      const uint64_t id = get(b, e, 2), len = get(b, e + 2, 2);
      need(e + 4 + len <= at + 46 + name_len + extra_len, "extra field runs past its entry");
      if (id == 1) {
        size_t f = e + 4;
        auto next = [&](uint64_t& v) {
          if (v != 0xffffffff) return;
          need(f + 8 <= e + 4 + len, "short zip64 field");
          v = get(b, f, 8);
          f += 8;
        };
        next(raw_size);
        next(size);
        next(local);
      }
      e += 4 + len;
    }
    need(method == 0, "compressed entries are not supported (PyTorch writes them stored)");
    need(size == raw_size, "stored entry with two sizes");
    need(local + 30 <= b.size() && get(b, static_cast<size_t>(local), 4) == kLocalHeader,
         "bad local header");
    const uint64_t data_at = local + 30 + get(b, static_cast<size_t>(local) + 26, 2) +
                             get(b, static_cast<size_t>(local) + 28, 2);
    need(data_at <= b.size() && size <= b.size() - data_at, "entry data out of bounds");
    names_.push_back(std::move(name));
    data_.push_back(b.substr(static_cast<size_t>(data_at), static_cast<size_t>(size)));
    at += 46 + name_len + extra_len + comment_len;
  }
}

bool ZipReader::has(const std::string& name) const {
  for (const auto& n : names_)
    if (n == name) return true;
  return false;
}

std::string_view ZipReader::read(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return data_[i];
  BRASA_ERROR("load: '", what_, "' has no record '", name, "'");
}

void ZipWriter::add(const std::string& name, std::string_view data) {
  BRASA_CHECK(data.size() < 0xffffffffu && out_.size() < 0xffffffffu,
              "pickle_save: archives over 4 GiB are not supported");
  const uint64_t offset = out_.size();
  // Pad the local header's extra field so that the data starts 64-byte aligned.
  const size_t header = 30 + name.size() + 4;
  const size_t pad = (64 - (offset + header) % 64) % 64;
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
  put(out_, kLocalHeader, 4);
  put(out_, 20, 2);  // version needed
  put(out_, 0, 2);   // flags
  put(out_, 0, 2);   // stored
  put(out_, 0, 4);   // time, date
  put(out_, crc, 4);
  put(out_, data.size(), 4);
  put(out_, data.size(), 4);
  put(out_, name.size(), 2);
  put(out_, 4 + pad, 2);
  out_ += name;
  put(out_, 0x6273, 2);  // a private extra-field id: padding
  put(out_, pad, 2);
  out_.append(pad, '\0');
  out_.append(data);
  entries_.push_back({name, crc, data.size(), offset});
}

std::string ZipWriter::finish() {
  const uint64_t dir_at = out_.size();
  for (const Entry& e : entries_) {
    put(out_, kCentralHeader, 4);
    put(out_, 20, 2);  // made by
    put(out_, 20, 2);  // needed
    put(out_, 0, 2);
    put(out_, 0, 2);
    put(out_, 0, 4);
    put(out_, e.crc, 4);
    put(out_, e.size, 4);
    put(out_, e.size, 4);
    put(out_, e.name.size(), 2);
    put(out_, 0, 2);  // extra
    put(out_, 0, 2);  // comment
    put(out_, 0, 2);  // disk
    put(out_, 0, 2);  // internal attributes
    put(out_, 0, 4);  // external attributes
    put(out_, e.offset, 4);
    out_ += e.name;
  }
  const uint64_t dir_size = out_.size() - dir_at;
  BRASA_CHECK(out_.size() < 0xffffffffu, "pickle_save: archives over 4 GiB are not supported");
  put(out_, kEndRecord, 4);
  put(out_, 0, 4);  // disks
  put(out_, entries_.size(), 2);
  put(out_, entries_.size(), 2);
  put(out_, dir_size, 4);
  put(out_, dir_at, 4);
  put(out_, 0, 2);  // comment
  return std::move(out_);
}

}  // namespace brasa::serialize
