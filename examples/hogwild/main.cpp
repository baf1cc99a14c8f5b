// Hogwild (Recht et al., 2011), as PyTorch's mnist_hogwild example: one model
// in shared memory, N processes each training it on their shard of every
// epoch with their own optimizer, lock-free — gradients stay per process,
// updates land in the shared parameters as they come. Then the parent
// evaluates the model.
//
//   hogwild [--processes N] [--threads T] [--epochs E] [--batch-size B] [--lr LR]
//           [--momentum M] [--train-samples N] [--data DIR] [--seed S]   (--help)
//
// --threads is per process (default: the cores divided among the processes).
#include <brasa/brasa.h>
#include <brasa/util/cli.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using namespace brasa;
namespace F = brasa::nn::functional;
namespace mp = brasa::multiprocessing;

namespace {

struct Args {
  int64_t processes = 2, threads = 0, epochs = 1, batch_size = 64, train_samples = 0, seed = 1;
  double lr = 0.01, momentum = 0.5;
  std::string data = "/usr/share/datasets/fashion-mnist";
  bool verbose = false;
};

cli::Parser make_parser(Args& a) {
  cli::Parser p("hogwild",
                "Hogwild training of a CNN on Fashion-MNIST: N processes, one shared model.");
  p.option("--processes", &a.processes, 1, 256, "processes training the model (default 2)")
      .option("--threads", &a.threads, 0, 1024,
              "threads per process (default 0: the cores divided among the processes)")
      .option("--epochs", &a.epochs, 1, 100000, "epochs (default 1)")
      .option("--batch-size", &a.batch_size, 1, 60000, "batch per process (default 64)")
      .option("--lr", &a.lr, 1e-8, 10, "learning rate (default 0.01)")
      .option("--momentum", &a.momentum, 0, 1, "SGD momentum (default 0.5)")
      .option("--train-samples", &a.train_samples, 0, 60000,
              "train on the first N images only (default 0: all)")
      .option("--data", &a.data, "the Fashion-MNIST directory (default Debian's)")
      .metavar("DIR")
      .option("--seed", &a.seed, 0, int64_t{1} << 40, "random seed (default 1)")
      .flag("--verbose", &a.verbose, "errors show the failed check and where it failed");
  return p;
}

// PyTorch's mnist_hogwild network.
struct NetImpl : nn::Module {
  NetImpl() {
    conv1 = register_module("conv1", nn::Conv2d(1, 10, 5));
    conv2 = register_module("conv2", nn::Conv2d(10, 20, 5));
    fc1 = register_module("fc1", nn::Linear(320, 50));
    fc2 = register_module("fc2", nn::Linear(50, 10));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = F::relu(max_pool2d(conv1->forward(x), {2}));
    h = F::relu(max_pool2d(F::dropout2d(conv2->forward(h), 0.5, is_training()), {2}));
    h = F::relu(fc1->forward(h.flatten(1)));
    h = F::dropout(h, 0.5, is_training());
    return F::log_softmax(fc2->forward(h), 1);
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr};
};

Tensor normalize(const Tensor& images) { return (images - 0.2860) / 0.3530; }

}  // namespace

int main(int argc, char** argv) {
  Args a;
  make_parser(a).parse_or_exit(argc, argv);
  try {
    data::datasets::MNIST train_set(a.data, data::datasets::MNIST::Mode::kTrain);
    data::datasets::MNIST test_set(a.data, data::datasets::MNIST::Mode::kTest);
    Tensor images = train_set.data(), labels = train_set.targets();
    if (a.train_samples > 0 && a.train_samples < images.size(0)) {
      images = images.narrow(0, 0, a.train_samples);
      labels = labels.narrow(0, 0, a.train_samples);
    }
    manual_seed(static_cast<uint64_t>(a.seed));
    auto model = std::make_shared<NetImpl>();
    model->share_memory();  // the one copy every process trains
    const int threads = a.threads > 0
                            ? static_cast<int>(a.threads)
                            : std::max(1, get_num_threads() / static_cast<int>(a.processes));
    std::printf("hogwild: %ld processes x %d threads, batch %ld, lr %g, momentum %g, %ld samples\n",
                static_cast<long>(a.processes), threads, static_cast<long>(a.batch_size), a.lr,
                a.momentum, static_cast<long>(images.size(0)));
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    mp::spawn(
        [&](int rank) {
          set_num_threads(threads);
          manual_seed(static_cast<uint64_t>(a.seed + rank));  // dropout masks differ per process
          optim::SGD opt(model->parameters(), optim::SGDOptions(a.lr).momentum(a.momentum));
          for (int64_t epoch = 1; epoch <= a.epochs; ++epoch) {
            // Every process shuffles alike and takes every N-th sample.
            data::samplers::DistributedSampler sampler(images.size(0), a.processes, rank, true,
                                                       false, static_cast<uint64_t>(a.seed));
            sampler.set_epoch(epoch);
            sampler.reset();
            for (auto idx = sampler.next(a.batch_size); !idx.empty();
                 idx = sampler.next(a.batch_size)) {
              Tensor index = tensor(idx, TensorOptions().dtype(kLong));
              Tensor x = normalize(images.index_select(0, index));
              Tensor y = labels.index_select(0, index);
              opt.zero_grad();
              F::nll_loss(model->forward(x), y).backward();
              opt.step();
            }
          }
        },
        static_cast<int>(a.processes));
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double samples = static_cast<double>(images.size(0) * a.epochs);

    NoGradGuard no_grad;
    model->eval();
    Tensor logits = model->forward(normalize(test_set.data()));
    const double loss = F::nll_loss(logits, test_set.targets()).item<double>();
    const double accuracy =
        logits.argmax(1).eq(test_set.targets()).to(kDouble).mean().item<double>();
    std::printf(
        "trained %.0f samples in %.2f s (%.0f samples/s); test loss %.4f, test accuracy "
        "%.2f%%\n",
        samples, secs, samples / secs, loss, 100 * accuracy);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hogwild: %s\n", cli::user_message(e, a.verbose).c_str());
    return 1;
  }
}
