#include <brasa/data/data.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>

#include <zlib.h>

#include <cstring>

namespace brasa::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  BRASA_CHECK(data_.dim() >= 1 && targets_.dim() >= 1 && data_.size(0) == targets_.size(0),
              "TensorDataset: data ", data_.sizes(), " and targets ", targets_.sizes(),
              " must have the same first dimension");
}

Example<> TensorDataset::get(int64_t i) const {
  BRASA_CHECK(i >= 0 && i < size(), "TensorDataset: index ", i, " out of range for a dataset of size ", size());
  return {data_[i], targets_[i]};
}

Example<> TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  Tensor idx = tensor(indices);
  return {data_.index_select(0, idx), targets_.index_select(0, idx)};
}

namespace datasets {
namespace {

// Reads a whole IDX file (gzip or plain: zlib reads both).
std::vector<unsigned char> read_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  BRASA_CHECK(f, "MNIST: cannot open '", path, "' (", std::strerror(errno),
              "); install the dataset-fashion-mnist package or pass the directory holding the IDX files");
  std::vector<unsigned char> out;
  unsigned char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.insert(out.end(), buf, buf + n);
  int err = 0;
  const char* msg = gzerror(f, &err);
  gzclose(f);
  BRASA_CHECK(n == 0 && err == Z_OK, "MNIST: '", path, "' is corrupt: ", msg);
  return out;
}

uint32_t be32(const std::vector<unsigned char>& b, size_t off) {
  return (uint32_t(b[off]) << 24) | (uint32_t(b[off + 1]) << 16) | (uint32_t(b[off + 2]) << 8) | uint32_t(b[off + 3]);
}

std::string find_file(const std::string& root, const std::string& base) {
  for (const char* suffix : {"", ".gz"}) {
    std::string p = root + "/" + base + suffix;
    if (FILE* f = std::fopen(p.c_str(), "rb")) {
      std::fclose(f);
      return p;
    }
  }
  BRASA_ERROR("MNIST: neither '", root, "/", base, "' nor '", root, "/", base,
              ".gz' exists; install the dataset-fashion-mnist package or pass the directory holding the IDX files");
}

Tensor read_images(const std::string& path) {
  auto b = read_file(path);
  BRASA_CHECK(b.size() >= 16 && be32(b, 0) == 2051, "MNIST: '", path, "' is not an IDX image file (bad magic number ",
              b.size() >= 4 ? be32(b, 0) : 0, ", expected 2051)");
  const int64_t n = be32(b, 4), rows = be32(b, 8), cols = be32(b, 12);
  BRASA_CHECK(static_cast<int64_t>(b.size()) == 16 + n * rows * cols, "MNIST: '", path, "' is truncated: header says ",
              n, " images of ", rows, "x", cols, " (", 16 + n * rows * cols, " bytes) but the file has ", b.size(),
              " bytes");
  Tensor out = empty({n, 1, rows, cols});
  float* p = out.data_ptr<float>();
  for (int64_t i = 0; i < n * rows * cols; ++i) p[i] = static_cast<float>(b[16 + i]) / 255.0f;
  return out;
}

Tensor read_labels(const std::string& path) {
  auto b = read_file(path);
  BRASA_CHECK(b.size() >= 8 && be32(b, 0) == 2049, "MNIST: '", path, "' is not an IDX label file (bad magic number ",
              b.size() >= 4 ? be32(b, 0) : 0, ", expected 2049)");
  const int64_t n = be32(b, 4);
  BRASA_CHECK(static_cast<int64_t>(b.size()) == 8 + n, "MNIST: '", path, "' is truncated: header says ", n,
              " labels but the file has ", b.size() - 8);
  Tensor out = empty({n}, TensorOptions().dtype(kLong));
  int64_t* p = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = b[8 + i];
  return out;
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode) : TensorDataset(empty({0}), empty({0})), train_(mode == Mode::kTrain) {
  const std::string prefix = train_ ? "train" : "t10k";
  data_ = read_images(find_file(root, prefix + "-images-idx3-ubyte"));
  targets_ = read_labels(find_file(root, prefix + "-labels-idx1-ubyte"));
  BRASA_CHECK(data_.size(0) == targets_.size(0), "MNIST: ", data_.size(0), " images but ", targets_.size(0),
              " labels in ", root);
}

}  // namespace datasets

namespace samplers {

void SequentialSampler::reset(std::optional<int64_t> new_size) {
  if (new_size) size_ = *new_size;
  pos_ = 0;
}
std::vector<int64_t> SequentialSampler::next(int64_t batch_size) {
  std::vector<int64_t> out;
  for (; pos_ < size_ && static_cast<int64_t>(out.size()) < batch_size; ++pos_) out.push_back(pos_);
  return out;
}

void RandomSampler::reset(std::optional<int64_t> new_size) {
  if (new_size) size_ = *new_size;
  Tensor perm = randperm(size_);
  const int64_t* p = perm.data_ptr<int64_t>();
  order_.assign(p, p + size_);
  pos_ = 0;
}
std::vector<int64_t> RandomSampler::next(int64_t batch_size) {
  std::vector<int64_t> out;
  for (; pos_ < size_ && static_cast<int64_t>(out.size()) < batch_size; ++pos_) out.push_back(order_[pos_]);
  return out;
}

}  // namespace samplers
}  // namespace brasa::data
