#include "../test_util.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace brasa;

namespace {
std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("brasa_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}
// A version 1.0 .npy header for the given dict text.
std::string npy_header(const std::string& dict) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}
}  // namespace

TEST(Npy, RoundTripEveryDtype) {
  for (auto t : {kFloat, kDouble, kHalf, kLong, kInt, kShort, kChar, kByte, kBool}) {
    auto x = (arange(12) % 5).to(t).view({3, 4});
    auto path = tmp_path("rt.npy");
    save_npy(path, x);
    auto y = load_npy(path);
    EXPECT_EQ(y.dtype(), t);
    EXPECT_SHAPE(y, {3, 4});
    EXPECT_TRUE(y.equal(x)) << t;
    std::remove(path.c_str());
  }
}

TEST(Npy, NonContiguousScalarAndEmpty) {
  auto path = tmp_path("nc.npy");
  auto x = arange(6, kFloat).view({2, 3}).t();
  save_npy(path, x);
  EXPECT_TRUE(load_npy(path).equal(x));
  save_npy(path, scalar_tensor(2.5));
  auto s = load_npy(path);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 2.5f);
  save_npy(path, zeros({0, 2}));
  EXPECT_SHAPE(load_npy(path), {0, 2});
  std::remove(path.c_str());
}

TEST(Npy, ReadsFortranOrderAsNumPyWrites) {
  auto path = tmp_path("f.npy");
  std::string bytes = npy_header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }");
  int32_t data[6] = {0, 3, 1, 4, 2, 5};  // column-major [[0,1,2],[3,4,5]]
  bytes.append(reinterpret_cast<char*>(data), sizeof data);
  write_bytes(path, bytes);
  auto t = load_npy(path);
  EXPECT_VALUES(t, {0, 1, 2, 3, 4, 5});
  std::remove(path.c_str());
}

TEST(Npy, CorruptFilesGiveClearErrors) {
  auto path = tmp_path("bad.npy");
  auto expect_error = [&](const std::string& bytes, const std::string& needle) {
    write_bytes(path, bytes);
    try {
      load_npy(path);
      ADD_FAILURE() << "expected an error containing '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  };
  expect_error("NOTNUMPYFILE", "bad magic");
  expect_error("\x93NUM", "truncated");
  std::string ok = npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }");
  expect_error(ok + std::string(8, '\0'), "truncated");  // 4 floats need 16 bytes
  expect_error(npy_header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }") +
                   std::string(8, '\0'),
               "unsupported dtype");
  expect_error(npy_header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") +
                   std::string(4, '\0'),
               "big-endian");
  expect_error(npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }"),
               "invalid dimension");
  expect_error(npy_header("{'fortran_order': False, 'shape': (1,), }"), "no 'descr'");
  std::string hdr = ok;
  hdr[8] = static_cast<char>(0xff);  // header length past the end
  hdr[9] = static_cast<char>(0x7f);
  expect_error(hdr, "truncated");
  EXPECT_THROW(load_npy(tmp_path("does_not_exist.npy")), Error);
  std::remove(path.c_str());
}

TEST(Npy, SaveIsAtomic) {
  auto path = tmp_path("atomic.npy");
  save_npy(path, ones({3}));
  // A failed save (bfloat16 has no NumPy type) leaves the old file intact.
  EXPECT_THROW(save_npy(path, ones({3}, kBFloat16)), Error);
  EXPECT_TRUE(load_npy(path).equal(ones({3})));
  std::remove(path.c_str());
}

TEST(DLPack, ZeroCopyBothWays) {
  auto x = arange(6, kFloat).view({2, 3}).t();
  DLManagedTensor* m = to_dlpack(x);
  EXPECT_EQ(m->dl_tensor.data, x.data_ptr());
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.shape[0], 3);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 32);
  auto y = from_dlpack(m);  // takes ownership, shares memory
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
  EXPECT_TRUE(y.equal(x));
  y.index_put_({0, 0}, 42);
  EXPECT_EQ(x.index({0, 0}).item<float>(), 42.0f);
  // The exporter's storage stays alive after the original handle is gone.
  auto keep = arange(3, kDouble);
  void* p = keep.data_ptr();
  auto z = from_dlpack(to_dlpack(keep));
  keep.reset();
  EXPECT_EQ(z.data_ptr(), p);
  EXPECT_VALUES(z, {0, 1, 2});
  EXPECT_EQ(from_dlpack(to_dlpack(ones({2}, kBFloat16))).dtype(), kBFloat16);
}
