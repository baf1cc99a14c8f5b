#include <brasa/data/data.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/shape.h>
#include <brasa/util/parallel.h>

#include <zlib.h>

#include <atomic>
#include <cstring>

namespace brasa::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets)
    : data_(std::move(data)), targets_(std::move(targets)) {
  BRASA_CHECK(data_.dim() >= 1 && targets_.dim() >= 1 && data_.size(0) == targets_.size(0),
              "TensorDataset: data ", data_.sizes(), " and targets ", targets_.sizes(),
              " must have the same first dimension");
}

TensorDataset::TensorDataset(Tensor data) : data_(std::move(data)) {
  BRASA_CHECK(data_.defined() && data_.dim() >= 1,
              "TensorDataset: expected a tensor of at least one dimension (examples along dim 0)",
              data_.defined() ? ", got shape " : ", got an undefined tensor",
              data_.defined() ? data_.sizes() : IntArrayRef());
}

Example<> TensorDataset::get(int64_t i) const {
  BRASA_CHECK(i >= 0 && i < data_.size(0), "TensorDataset: index ", i,
              " out of range for a dataset of size ", data_.size(0));
  return {data_[i], targets_.defined() ? targets_[i] : Tensor()};
}

Example<> TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  Tensor idx = tensor(indices);
  return {data_.index_select(0, idx),
          targets_.defined() ? targets_.index_select(0, idx) : Tensor()};
}

Example<> detail::stack_examples(const std::vector<Example<>>& examples) {
  BRASA_CHECK(!examples.empty(), "Dataset::get_batch: no indices");
  std::vector<Tensor> data, targets;
  for (const auto& e : examples) {
    data.push_back(e.data);
    if (e.target.defined()) targets.push_back(e.target);
  }
  // Examples without targets (TensorExample) stack to a batch without one.
  BRASA_CHECK(targets.empty() || targets.size() == examples.size(),
              "Dataset::get_batch: ", targets.size(), " of ", examples.size(),
              " examples have a target; all or none must");
  return {stack(data, 0), targets.empty() ? Tensor() : stack(targets, 0)};
}

namespace datasets {
namespace {

// Reads a whole IDX file (gzip or plain: zlib reads both).
std::vector<unsigned char> read_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  BRASA_CHECK(
      f, "MNIST: cannot open '", path, "' (", std::strerror(errno),
      "); install the dataset-fashion-mnist package or pass the directory holding the IDX files");
  std::vector<unsigned char> out;
  unsigned char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.insert(out.end(), buf, buf + n);
  int err = 0;
  // gzerror's text lives in the gzFile: copy it before gzclose frees it.
  const std::string msg = gzerror(f, &err);
  gzclose(f);
  BRASA_CHECK(n == 0 && err == Z_OK, "MNIST: '", path, "' is corrupt: ", msg);
  return out;
}

uint32_t be32(const std::vector<unsigned char>& b, size_t off) {
  return (uint32_t(b[off]) << 24) | (uint32_t(b[off + 1]) << 16) | (uint32_t(b[off + 2]) << 8) |
         uint32_t(b[off + 3]);
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
              ".gz' exists; install the dataset-fashion-mnist package or pass the directory "
              "holding the IDX files");
}

Tensor read_images(const std::string& path) {
  auto b = read_file(path);
  BRASA_CHECK(b.size() >= 16 && be32(b, 0) == 2051, "MNIST: '", path,
              "' is not an IDX image file (bad magic number ", b.size() >= 4 ? be32(b, 0) : 0,
              ", expected 2051)");
  const int64_t n = be32(b, 4), rows = be32(b, 8), cols = be32(b, 12);
  // The header's counts are the file's word: their product is checked for
  // overflow before it is compared with the size.
  int64_t pixels = 0;
  const bool fits = !__builtin_mul_overflow(n, rows, &pixels) &&
                    !__builtin_mul_overflow(pixels, cols, &pixels) && pixels <= INT64_MAX - 16;
  BRASA_CHECK(fits && static_cast<int64_t>(b.size()) == 16 + pixels, "MNIST: '", path,
              "' is truncated: header says ", n, " images of ", rows, "x", cols, " (",
              fits ? std::to_string(16 + pixels) : std::string("more than 2^63"),
              " bytes) but the file has ", b.size(), " bytes");
  Tensor out = empty({n, 1, rows, cols});
  float* p = out.data_ptr<float>();
  for (int64_t i = 0; i < pixels; ++i) p[i] = static_cast<float>(b[16 + i]) / 255.0f;
  return out;
}

Tensor read_labels(const std::string& path) {
  auto b = read_file(path);
  BRASA_CHECK(b.size() >= 8 && be32(b, 0) == 2049, "MNIST: '", path,
              "' is not an IDX label file (bad magic number ", b.size() >= 4 ? be32(b, 0) : 0,
              ", expected 2049)");
  const int64_t n = be32(b, 4);
  BRASA_CHECK(static_cast<int64_t>(b.size()) == 8 + n, "MNIST: '", path,
              "' is truncated: header says ", n, " labels but the file has ", b.size() - 8);
  Tensor out = empty({n}, TensorOptions().dtype(kLong));
  int64_t* p = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = b[8 + i];
  return out;
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode)
    : TensorDataset(empty({0}), empty({0})), train_(mode == Mode::kTrain) {
  const std::string prefix = train_ ? "train" : "t10k";
  data_ = read_images(find_file(root, prefix + "-images-idx3-ubyte"));
  targets_ = read_labels(find_file(root, prefix + "-labels-idx1-ubyte"));
  BRASA_CHECK(data_.size(0) == targets_.size(0), "MNIST: ", data_.size(0), " images but ",
              targets_.size(0), " labels in ", root);
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
  for (; pos_ < size_ && static_cast<int64_t>(out.size()) < batch_size; ++pos_)
    out.push_back(order_[pos_]);
  return out;
}

DistributedSampler::DistributedSampler(int64_t size, int64_t num_replicas, int64_t rank,
                                       bool shuffle, bool allow_duplicates, uint64_t seed)
    : size_(size),
      replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      allow_duplicates_(allow_duplicates),
      seed_(seed) {
  BRASA_CHECK(num_replicas > 0 && rank >= 0 && rank < num_replicas,
              "DistributedSampler: invalid rank ", rank, " for ", num_replicas, " replicas");
  reset();
}

int64_t DistributedSampler::local_size() const {
  return allow_duplicates_ ? (size_ + replicas_ - 1) / replicas_ : size_ / replicas_;
}

void DistributedSampler::reset(std::optional<int64_t> new_size) {
  if (new_size) size_ = *new_size;
  std::vector<int64_t> order(size_);
  if (shuffle_) {
    Generator gen(seed_ + static_cast<uint64_t>(epoch_));  // same order on every replica
    Tensor perm = randperm(size_, &gen);
    const int64_t* p = perm.data_ptr<int64_t>();
    order.assign(p, p + size_);
  } else {
    for (int64_t i = 0; i < size_; ++i) order[i] = i;
  }
  const int64_t total = local_size() * replicas_;
  for (int64_t i = size_; i < total; ++i)
    order.push_back(order[(i - size_) % std::max<int64_t>(size_, 1)]);
  mine_.clear();
  for (int64_t i = rank_; i < total; i += replicas_) mine_.push_back(order[i]);
  pos_ = 0;
}

std::vector<int64_t> DistributedSampler::next(int64_t batch_size) {
  std::vector<int64_t> out;
  for (; pos_ < static_cast<int64_t>(mine_.size()) && static_cast<int64_t>(out.size()) < batch_size;
       ++pos_)
    out.push_back(mine_[pos_]);
  return out;
}

}  // namespace samplers

namespace {
std::optional<WorkerInfo> g_worker_info;
std::atomic<detail::ProcessWorkersFactory> g_process_workers{nullptr};
}  // namespace

std::optional<WorkerInfo> get_worker_info() { return g_worker_info; }

namespace detail {

void set_worker_info(std::optional<WorkerInfo> info) { g_worker_info = info; }

void register_process_workers(ProcessWorkersFactory factory) { g_process_workers.store(factory); }

std::unique_ptr<ProcessWorkers> make_process_workers(ProcessWorkerSpec spec) {
  ProcessWorkersFactory f = g_process_workers.load();
  BRASA_CHECK(f != nullptr,
              "DataLoader: process workers come with brasa_multiprocessing; link it (brasa::brasa "
              "does) and include <brasa/multiprocessing/multiprocessing.h> or <brasa/torch.h>");
  BRASA_CHECK(spec.workers > 0 && spec.prefetch_factor > 0,
              "DataLoader: workers and prefetch_factor must be positive, got ", spec.workers,
              " and ", spec.prefetch_factor);
  return f(std::move(spec));
}

uint64_t draw_worker_seed() {
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  return g.engine()() >> 1;
}

Prefetcher::Prefetcher(int64_t n_batches, int64_t workers, int64_t window,
                       std::function<Example<>(int64_t)> make)
    : make_(std::move(make)), n_(n_batches), window_(std::max<int64_t>(window, 1)) {
  for (int64_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void Prefetcher::work() {
  InlineParallelGuard serial;  // batches are assembled single-threaded, beside the training loop
  while (true) {
    int64_t i;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || next_claim_ >= n_ || next_claim_ < next_out_ + window_; });
      if (stop_ || next_claim_ >= n_) return;
      i = next_claim_++;
    }
    Example<> batch;
    std::exception_ptr err;
    try {
      batch = make_(i);
    } catch (...) {
      err = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      ready_[i] = {std::move(batch), err};
    }
    cv_.notify_all();
  }
}

bool Prefetcher::next(Example<>& out) {
  std::unique_lock<std::mutex> lk(mu_);
  if (next_out_ >= n_) return false;
  cv_.wait(lk, [&] { return ready_.count(next_out_) > 0; });
  auto [batch, err] = std::move(ready_[next_out_]);
  ready_.erase(next_out_);
  ++next_out_;  // a failed batch is consumed too: iterating on moves to the next one
  lk.unlock();
  cv_.notify_all();
  if (err) std::rethrow_exception(err);
  out = std::move(batch);
  return true;
}

}  // namespace detail
}  // namespace brasa::data
