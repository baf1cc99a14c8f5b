// The main job: train a CNN or an MLP on Fashion-MNIST, in one process or
// data-parallel over several.
//
//   fashion_mnist [--model cnn|mlp] [--epochs N] [--batch-size B] [--lr LR]
//                 [--optimizer sgd|adam] [--threads T] [--data DIR]
//                 [--checkpoint FILE] [--metrics FILE] [--resume] [--seed S]
//                 [--train-samples N] [--backend gloo|mpi]
//   brasarun --nproc-per-node 2 fashion_mnist ...     # data-parallel
//   mpirun -np 2 fashion_mnist ...                    # the same under Open MPI
//
// Every epoch prints a one-line summary, appends to a CSV of metrics and
// writes a checkpoint atomically; --resume continues exactly where the last
// checkpoint stopped (epoch e shuffles with seed + e, so the data order does
// not depend on what ran before).
//
// Started by brasarun or mpirun with more than one process, each rank trains
// a DistributedDataParallel replica on its share of every epoch
// (DistributedSampler); --batch-size is the global batch, split evenly over
// the ranks, so the updates are those of one process with that batch. Only
// rank 0 prints, writes metrics and checkpoints; every rank resumes from the
// checkpoint, also by itself when brasarun restarts the job after a failure.
#include <brasa/brasa.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace brasa;

namespace {

struct Args {
  std::string model = "cnn", optimizer = "adam", data = "/usr/share/datasets/fashion-mnist";
  std::string checkpoint = "fashion_mnist.safetensors", metrics = "fashion_mnist_metrics.csv";
  std::string backend;  // default: mpi under mpirun, gloo otherwise
  int64_t epochs = 6, batch_size = 64, threads = 0, seed = 1, train_samples = 0;
  double lr = -1;  // default depends on the optimizer
  bool resume = false;
};

[[noreturn]] void usage(const std::string& error) {
  std::fprintf(
      stderr,
      "%s\nusage: fashion_mnist [--model cnn|mlp] [--epochs N] [--batch-size B] [--lr LR]\n"
      "                     [--optimizer sgd|adam] [--threads T] [--data DIR] [--checkpoint FILE]\n"
      "                     [--metrics FILE] [--resume] [--seed S] [--train-samples N]\n"
      "                     [--backend gloo|mpi]\n"
      "Data-parallel: brasarun --nproc-per-node N fashion_mnist ... (or mpirun -np N)\n",
      error.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value for " + k);
      return argv[++i];
    };
    try {
      if (k == "--model")
        a.model = value();
      else if (k == "--epochs")
        a.epochs = std::stoll(value());
      else if (k == "--batch-size")
        a.batch_size = std::stoll(value());
      else if (k == "--lr")
        a.lr = std::stod(value());
      else if (k == "--optimizer")
        a.optimizer = value();
      else if (k == "--threads")
        a.threads = std::stoll(value());
      else if (k == "--data")
        a.data = value();
      else if (k == "--checkpoint")
        a.checkpoint = value();
      else if (k == "--metrics")
        a.metrics = value();
      else if (k == "--seed")
        a.seed = std::stoll(value());
      else if (k == "--train-samples")
        a.train_samples = std::stoll(value());
      else if (k == "--backend")
        a.backend = value();
      else if (k == "--resume")
        a.resume = true;
      else if (k == "--help" || k == "-h")
        usage("Train a CNN or MLP on Fashion-MNIST.");
      else
        usage("unknown option " + k);
    } catch (const std::invalid_argument&) {
      usage("bad number for " + k);
    }
  }
  if (a.model != "cnn" && a.model != "mlp") usage("--model must be cnn or mlp");
  if (a.optimizer != "sgd" && a.optimizer != "adam") usage("--optimizer must be sgd or adam");
  if (a.epochs < 1 || a.batch_size < 1) usage("--epochs and --batch-size must be positive");
  if (a.train_samples < 0) usage("--train-samples must not be negative");
  if (!a.backend.empty() && a.backend != "gloo" && a.backend != "mpi")
    usage("--backend must be gloo or mpi");
  if (a.lr < 0) a.lr = a.optimizer == "adam" ? 1e-3 : 0.05;
  return a;
}

// The classic CNN: conv(1,10,5)-pool-relu-conv(10,20,5)-pool-relu-fc(320,50)-fc(50,10).
struct CnnImpl : nn::Module {
  CnnImpl() : nn::Module("Cnn") {
    conv1 = register_module("conv1", nn::Conv2d(1, 10, 5));
    conv2 = register_module("conv2", nn::Conv2d(10, 20, 5));
    fc1 = register_module("fc1", nn::Linear(320, 50));
    fc2 = register_module("fc2", nn::Linear(50, 10));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = relu(max_pool2d(conv1->forward(x), {2}));
    h = relu(max_pool2d(conv2->forward(h), {2}));
    h = relu(fc1->forward(h.flatten(1)));
    return fc2->forward(h);
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
};

// The MLP 784-512-256-10.
struct MlpImpl : nn::Module {
  MlpImpl() : nn::Module("Mlp") {
    fc1 = register_module("fc1", nn::Linear(784, 512));
    fc2 = register_module("fc2", nn::Linear(512, 256));
    fc3 = register_module("fc3", nn::Linear(256, 10));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = relu(fc1->forward(x.flatten(1)));
    h = relu(fc2->forward(h));
    return fc3->forward(h);
  }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

// Fashion-MNIST's pixel mean and standard deviation.
Tensor normalize(const Tensor& images) { return (images - 0.2860) / 0.3530; }

struct EpochResult {
  double train_loss, test_loss, test_accuracy, seconds, samples_per_second;
};

class Progress {
 public:
  Progress(int64_t epoch, int64_t epochs, int64_t total)
      : epoch_(epoch),
        epochs_(epochs),
        total_(total),
        tty_(isatty(fileno(stderr))),
        start_(std::chrono::steady_clock::now()) {}
  void update(int64_t done, double running_loss, bool last) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    int64_t quarter = total_ / 4;
    // On a terminal: a redrawn bar; in a log: one line per quarter epoch.
    if (!tty_ && !last && (quarter == 0 || done / quarter == printed_quarter_)) return;
    printed_quarter_ = quarter ? done / quarter : 0;
    const int width = 30;
    int filled = static_cast<int>(width * done / std::max<int64_t>(total_, 1));
    std::fprintf(stderr, "%sepoch %ld/%ld [%s%s] %6ld/%ld  %7.0f samples/s  loss %.4f%s",
                 tty_ ? "\r" : "", static_cast<long>(epoch_), static_cast<long>(epochs_),
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                 static_cast<long>(done), static_cast<long>(total_), secs > 0 ? done / secs : 0.0,
                 running_loss, tty_ && !last ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  int64_t epoch_, epochs_, total_;
  bool tty_;
  int64_t printed_quarter_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// This process's place in the job (one process: rank 0 of 1).
struct Job {
  int rank = 0, world = 1;
  bool lead() const { return rank == 0; }
};

// Sums `values` over the ranks.
void sum_over_ranks(const Job& job, std::vector<double>& values) {
  if (job.world == 1) return;
  Tensor t = tensor(values, TensorOptions().dtype(kDouble));
  distributed::all_reduce(t);
  for (size_t i = 0; i < values.size(); ++i) values[i] = t[static_cast<int64_t>(i)].item<double>();
}

template <class Model>
double evaluate(const Job& job, Model& model, const data::TensorDataset& test, double* accuracy) {
  NoGradGuard ng;
  model.eval();
  double loss_sum = 0, correct = 0;
  // Each rank evaluates its share of the test set.
  const int64_t n = static_cast<int64_t>(test.size().value()), B = 1000;
  const int64_t begin = n * job.rank / job.world, end = n * (job.rank + 1) / job.world;
  for (int64_t s = begin; s < end; s += B) {
    int64_t len = std::min(B, end - s);
    Tensor x = normalize(test.data().narrow(0, s, len)), y = test.targets().narrow(0, s, len);
    Tensor logits = model.forward(x);
    loss_sum +=
        F::cross_entropy(logits, y, F::CrossEntropyFuncOptions().reduction(kSum)).item<double>();
    correct += static_cast<double>(logits.argmax(1).eq(y).sum().item<int64_t>());
  }
  model.train();
  std::vector<double> totals{loss_sum, correct};
  sum_over_ranks(job, totals);
  *accuracy = totals[1] / static_cast<double>(n);
  return totals[0] / static_cast<double>(n);
}

template <class Model>
int train(const Args& a, const Job& job, std::shared_ptr<Model> model) {
  data::datasets::MNIST train_set(a.data, data::datasets::MNIST::Mode::kTrain);
  data::datasets::MNIST test_set(a.data, data::datasets::MNIST::Mode::kTest);
  Tensor train_images = train_set.data(), train_labels = train_set.targets();
  if (a.train_samples > 0 && a.train_samples < train_images.size(0)) {
    train_images = train_images.narrow(0, 0, a.train_samples);
    train_labels = train_labels.narrow(0, 0, a.train_samples);
  }
  const int64_t train_size = train_images.size(0);
  if (a.batch_size % job.world != 0)
    throw std::invalid_argument("--batch-size " + std::to_string(a.batch_size) +
                                " is the global batch: it must divide evenly over the " +
                                std::to_string(job.world) + " processes");
  const int64_t local_batch = a.batch_size / job.world;

  std::unique_ptr<optim::Optimizer> opt;
  if (a.optimizer == "adam")
    opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(a.lr));
  else
    opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions(a.lr).momentum(0.9));

  // brasarun restarts a failed job with LAUNCH restart count > 0: pick up
  // the last checkpoint when there is one.
  const int restarts = launch::launch_info().restart_count;
  const bool resume = a.resume || (restarts > 0 && std::ifstream(a.checkpoint).good());
  int64_t first_epoch = 1;
  if (resume) {
    auto meta = serialize::load_checkpoint(a.checkpoint, *model, opt.get());
    first_epoch = std::stoll(meta.at("epoch")) + 1;
    if (job.lead())
      std::printf("%sresumed from %s after epoch %ld\n",
                  restarts > 0 ? ("restart " + std::to_string(restarts) + ": ").c_str() : "",
                  a.checkpoint.c_str(), static_cast<long>(first_epoch - 1));
  } else if (job.lead()) {
    std::ofstream(a.metrics)
        << "epoch,train_loss,test_loss,test_accuracy,seconds,samples_per_second\n";
  }
  // Data-parallel: a replica per rank (parameters broadcast from rank 0).
  nn::parallel::DistributedDataParallel<Model> ddp(nullptr);
  if (job.world > 1) ddp = nn::parallel::DistributedDataParallel(model);
  auto forward = [&](const Tensor& x) {
    return job.world > 1 ? ddp->forward(x) : model->forward(x);
  };
  if (job.lead()) {
    std::printf("model %s, optimizer %s (lr %g), batch %ld", a.model.c_str(), a.optimizer.c_str(),
                a.lr, static_cast<long>(a.batch_size));
    if (job.world > 1)
      std::printf(" (%ld per process, %d processes, %s)", static_cast<long>(local_batch), job.world,
                  distributed::get_backend().c_str());
    std::printf(", %d threads%s, %ld training samples\n", get_num_threads(),
                job.world > 1 ? " each" : "", static_cast<long>(train_size));
    std::fflush(stdout);
  }

  data::TensorDataset train_data(train_images, train_labels);
  double accuracy = 0;
  for (int64_t epoch = first_epoch; epoch <= a.epochs; ++epoch) {
    manual_seed(static_cast<uint64_t>(a.seed * 1000 + epoch));  // this epoch's shuffle
    std::unique_ptr<data::DataLoader<data::TensorDataset>> loader;
    if (job.world == 1) {
      loader = data::make_data_loader<data::samplers::RandomSampler>(
          train_data, data::DataLoaderOptions(local_batch));
    } else {
      data::samplers::DistributedSampler sampler(train_size, job.world, job.rank, true, true,
                                                 static_cast<uint64_t>(a.seed));
      sampler.set_epoch(epoch);
      loader = data::make_data_loader(train_data, std::move(sampler),
                                      data::DataLoaderOptions(local_batch));
    }
    const int64_t local_total = (train_size + job.world - 1) / job.world;
    auto t0 = std::chrono::steady_clock::now();
    Progress progress(epoch, a.epochs, local_total * job.world);
    double loss_sum = 0, running = 0;
    int64_t seen = 0, batches = 0;
    for (auto& batch : *loader) {
      opt->zero_grad();
      Tensor loss = F::cross_entropy(forward(normalize(batch.data)), batch.target);
      loss.backward();
      opt->step();
      const double l = loss.item<double>();
      const int64_t b = batch.data.size(0);
      loss_sum += l * static_cast<double>(b);
      running = batches == 0 ? l : 0.98 * running + 0.02 * l;
      seen += b;
      ++batches;
      if (job.lead() && (batches % 20 == 0 || seen == local_total))
        progress.update(seen * job.world, running, seen == local_total);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> totals{loss_sum, static_cast<double>(seen)};
    sum_over_ranks(job, totals);
    double test_loss = job.world > 1 ? evaluate(job, *ddp, test_set, &accuracy)
                                     : evaluate(job, *model, test_set, &accuracy);
    EpochResult r{totals[0] / totals[1], test_loss, accuracy, secs, totals[1] / secs};
    if (!job.lead()) continue;
    std::printf(
        "epoch %ld: train loss %.4f, test loss %.4f, test accuracy %.2f%%, %.1f s (%.0f "
        "samples/s)\n",
        static_cast<long>(epoch), r.train_loss, r.test_loss, 100 * r.test_accuracy, r.seconds,
        r.samples_per_second);
    std::fflush(stdout);
    std::ofstream(a.metrics, std::ios::app)
        << epoch << "," << r.train_loss << "," << r.test_loss << "," << r.test_accuracy << ","
        << r.seconds << "," << r.samples_per_second << "\n";
    serialize::save_checkpoint(a.checkpoint, *model, opt.get(),
                               {{"epoch", std::to_string(epoch)}, {"model", a.model}});
  }
  if (job.lead())
    std::printf("final test accuracy %.2f%% (metrics: %s, checkpoint: %s)\n", 100 * accuracy,
                a.metrics.c_str(), a.checkpoint.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  try {
    const launch::LaunchInfo launch = launch::launch_info();
    Job job;
    if (launch.world_size > 1) {
      std::string backend = a.backend;
      if (backend.empty())
        backend = launch.source == launch::LaunchSource::kOpenMPI ? "mpi" : "gloo";
      distributed::init_process_group(backend);
      job.rank = distributed::get_rank();
      job.world = distributed::get_world_size();
    }
    // The processes on one node share its cores.
    if (a.threads > 0)
      set_num_threads(static_cast<int>(a.threads));
    else if (launch.local_world_size > 1)
      set_num_threads(std::max(1, get_num_threads() / launch.local_world_size));
    manual_seed(static_cast<uint64_t>(a.seed));
    if (a.model == "cnn") return train(a, job, std::make_shared<CnnImpl>());
    return train(a, job, std::make_shared<MlpImpl>());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 1;
  }
}
