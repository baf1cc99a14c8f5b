// The main job: train a CNN or an MLP on Fashion-MNIST.
//
//   fashion_mnist [--model cnn|mlp] [--epochs N] [--batch-size B] [--lr LR]
//                 [--optimizer sgd|adam] [--threads T] [--data DIR]
//                 [--checkpoint FILE] [--metrics FILE] [--resume] [--seed S]
//
// Every epoch prints a one-line summary, appends to a CSV of metrics and
// writes a checkpoint atomically; --resume continues exactly where the last
// checkpoint stopped (epoch e shuffles with seed + e, so the data order does
// not depend on what ran before).
#include <brasa/brasa.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

using namespace brasa;

namespace {

struct Args {
  std::string model = "cnn", optimizer = "adam", data = "/usr/share/datasets/fashion-mnist";
  std::string checkpoint = "fashion_mnist.safetensors", metrics = "fashion_mnist_metrics.csv";
  int64_t epochs = 6, batch_size = 64, threads = 0, seed = 1;
  double lr = -1;  // default depends on the optimizer
  bool resume = false;
};

[[noreturn]] void usage(const std::string& error) {
  std::fprintf(
      stderr,
      "%s\nusage: fashion_mnist [--model cnn|mlp] [--epochs N] [--batch-size B] [--lr LR]\n"
      "                     [--optimizer sgd|adam] [--threads T] [--data DIR] [--checkpoint FILE]\n"
      "                     [--metrics FILE] [--resume] [--seed S]\n",
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

template <class Model>
double evaluate(Model& model, const data::TensorDataset& test, double* accuracy) {
  NoGradGuard ng;
  model.eval();
  double loss_sum = 0;
  int64_t correct = 0;
  const int64_t n = test.size(), B = 1000;
  for (int64_t s = 0; s < n; s += B) {
    int64_t len = std::min(B, n - s);
    Tensor x = normalize(test.data().narrow(0, s, len)), y = test.targets().narrow(0, s, len);
    Tensor logits = model.forward(x);
    loss_sum +=
        F::cross_entropy(logits, y, F::CrossEntropyFuncOptions().reduction(kSum)).item<double>();
    correct += logits.argmax(1).eq(y).sum().item<int64_t>();
  }
  model.train();
  *accuracy = static_cast<double>(correct) / static_cast<double>(n);
  return loss_sum / static_cast<double>(n);
}

template <class Model>
int train(const Args& a, std::shared_ptr<Model> model) {
  data::datasets::MNIST train_set(a.data, data::datasets::MNIST::Mode::kTrain);
  data::datasets::MNIST test_set(a.data, data::datasets::MNIST::Mode::kTest);
  std::unique_ptr<optim::Optimizer> opt;
  if (a.optimizer == "adam")
    opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(a.lr));
  else
    opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions(a.lr).momentum(0.9));

  int64_t first_epoch = 1;
  if (a.resume) {
    auto meta = serialize::load_checkpoint(a.checkpoint, *model, opt.get());
    first_epoch = std::stoll(meta.at("epoch")) + 1;
    std::printf("resumed from %s after epoch %ld\n", a.checkpoint.c_str(),
                static_cast<long>(first_epoch - 1));
  } else {
    std::ofstream(a.metrics)
        << "epoch,train_loss,test_loss,test_accuracy,seconds,samples_per_second\n";
  }
  std::printf("model %s, optimizer %s (lr %g), batch %ld, %d threads, %ld training samples\n",
              a.model.c_str(), a.optimizer.c_str(), a.lr, static_cast<long>(a.batch_size),
              get_num_threads(), static_cast<long>(train_set.size()));
  std::fflush(stdout);

  auto loader = data::make_data_loader<data::samplers::RandomSampler>(
      data::TensorDataset(train_set.data(), train_set.targets()),
      data::DataLoaderOptions(a.batch_size));
  double accuracy = 0;
  for (int64_t epoch = first_epoch; epoch <= a.epochs; ++epoch) {
    manual_seed(static_cast<uint64_t>(a.seed * 1000 + epoch));  // this epoch's shuffle
    auto t0 = std::chrono::steady_clock::now();
    Progress progress(epoch, a.epochs, train_set.size());
    double loss_sum = 0, running = 0;
    int64_t seen = 0, batches = 0;
    for (auto& batch : *loader) {
      opt->zero_grad();
      Tensor loss = F::cross_entropy(model->forward(normalize(batch.data)), batch.target);
      loss.backward();
      opt->step();
      const double l = loss.item<double>();
      const int64_t b = batch.data.size(0);
      loss_sum += l * static_cast<double>(b);
      running = batches == 0 ? l : 0.98 * running + 0.02 * l;
      seen += b;
      ++batches;
      if (batches % 20 == 0 || seen == train_set.size())
        progress.update(seen, running, seen == train_set.size());
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double test_loss = evaluate(*model, test_set, &accuracy);
    EpochResult r{loss_sum / static_cast<double>(seen), test_loss, accuracy, secs,
                  static_cast<double>(seen) / secs};
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
  std::printf("final test accuracy %.2f%% (metrics: %s, checkpoint: %s)\n", 100 * accuracy,
              a.metrics.c_str(), a.checkpoint.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  if (a.threads > 0) set_num_threads(static_cast<int>(a.threads));
  try {
    manual_seed(static_cast<uint64_t>(a.seed));
    if (a.model == "cnn") return train(a, std::make_shared<CnnImpl>());
    return train(a, std::make_shared<MlpImpl>());
  } catch (const Error& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 1;
  }
}
