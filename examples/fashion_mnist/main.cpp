// The main job: train a CNN or an MLP on Fashion-MNIST, in one process or
// data-parallel over several.
//
//   fashion_mnist [--model cnn|mlp] [--epochs N] [--batch-size B] [--lr LR] ...
//   fashion_mnist --help                              # every option
//   brasarun --nproc-per-node 2 fashion_mnist ...     # data-parallel
//   mpirun -np 2 fashion_mnist ...                    # the same under Open MPI
//
// Every epoch prints a one-line summary, appends to a CSV of metrics, redraws
// an SVG chart of them and writes a checkpoint atomically; the default file
// names carry the model, so the CNN's and the MLP's runs stay apart. --resume
// continues exactly where the last checkpoint stopped (epoch e shuffles with
// seed + e, so the data order does not depend on what ran before), with the
// checkpoint's settings unless options say otherwise.
//
// Started by brasarun or mpirun with more than one process, each rank trains
// a DistributedDataParallel replica on its share of every epoch
// (DistributedSampler); --batch-size is the global batch, split evenly over
// the ranks, so the updates are those of one process with that batch. Only
// rank 0 prints and writes metrics, chart and checkpoints; every rank resumes
// from the checkpoint, also by itself when brasarun restarts the job after a
// failure.
#include <brasa/brasa.h>
#include <brasa/util/cli.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "chart.h"

using namespace brasa;

namespace {

struct Args {
  std::string model = "cnn", optimizer = "adam", data = "/usr/share/datasets/fashion-mnist";
  std::string run_dir = ".", checkpoint, metrics, chart;  // default names carry the model
  std::string backend;  // default: mpi under mpirun, gloo otherwise
  std::string device = "cpu";
  int64_t epochs = 6, batch_size = 64, threads = 0, seed = 1, train_samples = 0;
  double lr = 0;  // 0: the optimizer's default
  bool resume = false, verbose = false;
};

cli::Parser make_parser(Args& a) {
  cli::Parser p("fashion_mnist",
                "Trains a CNN or an MLP on Fashion-MNIST; data-parallel when started by\n"
                "brasarun --nproc-per-node N (or mpirun -np N).");
  p.option("--model", &a.model, "the network (default cnn)", {"cnn", "mlp"})
      .option("--epochs", &a.epochs, 1, 100000, "epochs to train in all (default 6)")
      .option("--batch-size", &a.batch_size, 1, 60000,
              "global batch, split over the processes (default 64)")
      .option("--lr", &a.lr, 1e-8, 10, "learning rate (default 0.001 for adam, 0.05 for sgd)")
      .option("--optimizer", &a.optimizer, "the optimizer (default adam)", {"sgd", "adam"})
      .option("--device", &a.device, "where to train (default cpu)", {"cpu", "cuda"})
      .option("--threads", &a.threads, 0, 1024,
              "threads per process (default 0: the cores shared out)")
      .option("--data", &a.data, "the Fashion-MNIST directory (default Debian's)")
      .metavar("DIR")
      .option("--run-dir", &a.run_dir, "where the default files go (default .)")
      .metavar("DIR")
      .option("--checkpoint", &a.checkpoint,
              "checkpoint file (default RUN_DIR/fashion_mnist_MODEL.safetensors)")
      .metavar("FILE")
      .option("--metrics", &a.metrics,
              "metrics CSV (default RUN_DIR/fashion_mnist_MODEL_metrics.csv); the SVG chart "
              "goes beside it")
      .metavar("FILE")
      .flag("--resume", &a.resume, "continue from the checkpoint, with its settings")
      .option("--seed", &a.seed, 0, int64_t{1} << 40, "random seed (default 1)")
      .option("--train-samples", &a.train_samples, 0, 60000,
              "train on the first N images only (default 0: all)")
      .option("--backend", &a.backend, "data-parallel backend (default mpi under mpirun)",
              {"gloo", "mpi", "shm"})
      .flag("--verbose", &a.verbose, "errors show the failed check and where it failed");
  return p;
}

// A setting given on the command line that the program cannot honour: exit 2.
[[noreturn]] void refuse(const std::string& message) { throw cli::UsageError(message); }

// Where a resumed run stands; `complete` when the checkpoint holds the last epoch.
struct ResumeState {
  bool active = false, complete = false;
  int64_t done_epochs = 0;
  std::string stored_accuracy;  // empty in checkpoints that do not store it
};

std::string text_of(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Reads the checkpoint's settings: options not given take their stored value;
// a given model or optimizer that differs is refused (the state would not
// fit); other given settings are applied and announced.
ResumeState settle_resume(Args& a, const cli::Parser& p, bool lead) {
  ResumeState r;
  auto meta = serialize::read_checkpoint_metadata(a.checkpoint);
  r.active = true;
  auto stored = [&](const char* key) -> const std::string* {
    auto it = meta.find(key);
    return it == meta.end() ? nullptr : &it->second;
  };
  for (auto [option, field] : {std::pair{"--model", &a.model}, {"--optimizer", &a.optimizer}}) {
    const std::string* s = stored(option + 2);
    if (!s) continue;
    if (p.given(option) && *s != *field)
      refuse(std::string(option) + " " + *field + " conflicts with the checkpoint " + a.checkpoint +
             ", which holds a run with " + option + " " + *s);
    *field = *s;
  }
  struct Setting {
    const char* option;
    const char* key;
    std::string current;
    std::function<void(const std::string&)> adopt;
  };
  std::vector<Setting> settings = {
      {"--lr", "lr", text_of(a.lr), [&](const std::string& v) { a.lr = std::stod(v); }},
      {"--batch-size", "batch_size", std::to_string(a.batch_size),
       [&](const std::string& v) { a.batch_size = std::stoll(v); }},
      {"--seed", "seed", std::to_string(a.seed),
       [&](const std::string& v) { a.seed = std::stoll(v); }},
      {"--train-samples", "train_samples", std::to_string(a.train_samples),
       [&](const std::string& v) { a.train_samples = std::stoll(v); }},
      {"--epochs", "epochs", std::to_string(a.epochs),
       [&](const std::string& v) { a.epochs = std::stoll(v); }}};
  for (auto& s : settings) {
    const std::string* v = stored(s.key);
    if (!v) continue;
    if (!p.given(s.option))
      s.adopt(*v);
    else if (*v != s.current && lead && std::strcmp(s.key, "epochs") != 0)
      std::printf("resume: %s %s applied (the checkpoint's run had %s)\n", s.option,
                  s.current.c_str(), v->c_str());
  }
  if (const std::string* e = stored("epoch")) r.done_epochs = std::stoll(*e);
  if (const std::string* acc = stored("test_accuracy")) r.stored_accuracy = *acc;
  r.complete = r.done_epochs >= a.epochs;
  return r;
}

// Checks before any training that rank 0 can write its files: a bad path is
// an error naming the option at once, not after an epoch.
void check_writable(const std::string& option, const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string probe = dir + "/.fashion_mnist_probe." + std::to_string(getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    refuse(option + " " + path + ": cannot write in its directory (" + std::strerror(errno) + ")");
  ::close(fd);
  ::unlink(probe.c_str());
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    refuse(option + " " + path + ": is a directory, expected a file");
  if (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) != 0)
    refuse(option + " " + path + ": the file is not writable (" + std::strerror(errno) + ")");
}

// metrics.csv -> metrics.svg
std::string chart_path(const std::string& metrics) {
  const size_t dot = metrics.rfind('.'), slash = metrics.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    return metrics.substr(0, dot) + ".svg";
  return metrics + ".svg";
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
double evaluate(const Job& job, Model& model, const data::TensorDataset& test, Device device,
                double* accuracy) {
  NoGradGuard ng;
  model.eval();
  double loss_sum = 0, correct = 0;
  // Each rank evaluates its share of the test set.
  const int64_t n = static_cast<int64_t>(test.size().value()), B = 1000;
  const int64_t begin = n * job.rank / job.world, end = n * (job.rank + 1) / job.world;
  for (int64_t s = begin; s < end; s += B) {
    int64_t len = std::min(B, end - s);
    Tensor x = normalize(test.data().narrow(0, s, len).to(device)),
           y = test.targets().narrow(0, s, len).to(device);
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

// The settings a checkpoint stores, so that --resume continues with them.
serialize::Metadata run_metadata(const Args& a, int64_t epoch, double test_loss,
                                 double test_accuracy) {
  return {{"epoch", std::to_string(epoch)},
          {"epochs", std::to_string(a.epochs)},
          {"model", a.model},
          {"optimizer", a.optimizer},
          {"lr", text_of(a.lr)},
          {"batch_size", std::to_string(a.batch_size)},
          {"seed", std::to_string(a.seed)},
          {"train_samples", std::to_string(a.train_samples)},
          {"test_loss", text_of(test_loss)},
          {"test_accuracy", text_of(test_accuracy)}};
}

void append_metrics(const std::string& path, int64_t epoch, const EpochResult& r) {
  std::ofstream out(path, std::ios::app);
  out << epoch << "," << r.train_loss << "," << r.test_loss << "," << r.test_accuracy << ","
      << r.seconds << "," << r.samples_per_second << "\n";
  out.close();
  if (!out) throw std::runtime_error("cannot append to the metrics file " + path);
}

template <class Model>
int train(Args a, const Job& job, const ResumeState& resume, std::shared_ptr<Model> model) {
  data::datasets::MNIST train_set(a.data, data::datasets::MNIST::Mode::kTrain);
  data::datasets::MNIST test_set(a.data, data::datasets::MNIST::Mode::kTest);
  Tensor train_images = train_set.data(), train_labels = train_set.targets();
  if (a.train_samples > 0 && a.train_samples < train_images.size(0)) {
    train_images = train_images.narrow(0, 0, a.train_samples);
    train_labels = train_labels.narrow(0, 0, a.train_samples);
  }
  const int64_t train_size = train_images.size(0);
  if (a.batch_size % job.world != 0)
    refuse("--batch-size " + std::to_string(a.batch_size) +
           " is the global batch: it must divide evenly over the " + std::to_string(job.world) +
           " processes");
  const int64_t local_batch = a.batch_size / job.world;
  const Device device(a.device);
  model->to(device);

  std::unique_ptr<optim::Optimizer> opt;
  if (a.optimizer == "adam")
    opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(a.lr));
  else
    opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions(a.lr).momentum(0.9));

  int64_t first_epoch = 1;
  if (resume.active) {
    serialize::load_checkpoint(a.checkpoint, *model, opt.get());
    first_epoch = resume.done_epochs + 1;
    // The checkpoint restored the optimizer's learning rate; an --lr given
    // now replaces it, and what is printed below is what runs.
    for (auto& group : opt->param_groups()) group.options().set_lr(a.lr);
    const int restarts = launch::launch_info().restart_count;
    if (job.lead())
      std::printf("%sresumed from %s after epoch %ld\n",
                  restarts > 0 ? ("restart " + std::to_string(restarts) + ": ").c_str() : "",
                  a.checkpoint.c_str(), static_cast<long>(first_epoch - 1));
  }
  if (job.lead() && (!resume.active || ::access(a.metrics.c_str(), F_OK) != 0)) {
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
    // The learning rate the optimizer holds, which is what runs.
    std::printf("model %s, optimizer %s (lr %g), batch %ld", a.model.c_str(), a.optimizer.c_str(),
                opt->param_groups()[0].options().get_lr(), static_cast<long>(a.batch_size));
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
      Tensor loss =
          F::cross_entropy(forward(normalize(batch.data.to(device))), batch.target.to(device));
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
    double test_loss = job.world > 1 ? evaluate(job, *ddp, test_set, device, &accuracy)
                                     : evaluate(job, *model, test_set, device, &accuracy);
    EpochResult r{totals[0] / totals[1], test_loss, accuracy, secs, totals[1] / secs};
    if (!job.lead()) continue;
    std::printf(
        "epoch %ld: train loss %.4f, test loss %.4f, test accuracy %.2f%%, %.1f s (%.0f "
        "samples/s)\n",
        static_cast<long>(epoch), r.train_loss, r.test_loss, 100 * r.test_accuracy, r.seconds,
        r.samples_per_second);
    std::fflush(stdout);
    append_metrics(a.metrics, epoch, r);
    write_svg_chart(a.chart, "Fashion-MNIST, " + a.model + " (" + a.optimizer + ")",
                    read_metrics_csv(a.metrics));
    serialize::save_checkpoint(a.checkpoint, *model, opt.get(),
                               run_metadata(a, epoch, r.test_loss, r.test_accuracy));
  }
  if (job.lead())
    std::printf("final test accuracy %.2f%%\nmetrics: %s\nchart: %s\ncheckpoint: %s\n",
                100 * accuracy, a.metrics.c_str(), a.chart.c_str(), a.checkpoint.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  cli::Parser parser = make_parser(a);
  parser.parse_or_exit(argc, argv);
  try {
    const launch::LaunchInfo launch = launch::launch_info();
    const bool lead = launch.rank == 0;
    if (a.checkpoint.empty())
      a.checkpoint = a.run_dir + "/fashion_mnist_" + a.model + ".safetensors";
    // brasarun restarts a failed job with a restart count > 0: pick up the
    // last checkpoint when there is one.
    const bool resuming =
        a.resume || (launch.restart_count > 0 && ::access(a.checkpoint.c_str(), F_OK) == 0);
    if (a.resume && ::access(a.checkpoint.c_str(), F_OK) != 0)
      refuse("--resume: there is no checkpoint " + a.checkpoint + " to resume from");
    ResumeState resume;
    if (resuming) resume = settle_resume(a, parser, lead);
    if (a.lr == 0) a.lr = a.optimizer == "adam" ? 1e-3 : 0.05;
    if (a.metrics.empty()) a.metrics = a.run_dir + "/fashion_mnist_" + a.model + "_metrics.csv";
    a.chart = chart_path(a.metrics);
    if (resume.complete) {
      if (lead) {
        std::printf("the run in %s is complete: it trained %ld of %ld epochs", a.checkpoint.c_str(),
                    static_cast<long>(resume.done_epochs), static_cast<long>(a.epochs));
        if (!resume.stored_accuracy.empty())
          std::printf("; test accuracy %.2f%%", 100 * std::stod(resume.stored_accuracy));
        std::printf("\nmetrics: %s\nchart: %s\n(pass --epochs N with N > %ld to train on)\n",
                    a.metrics.c_str(), a.chart.c_str(), static_cast<long>(resume.done_epochs));
      }
      return 0;
    }
    if (lead) {
      // The run directory is made when missing (rank 0 writes every file).
      std::error_code made;
      std::filesystem::create_directories(a.run_dir, made);
      if (made)
        refuse("--run-dir " + a.run_dir + ": cannot make the directory (" + made.message() + ")");
      check_writable("--checkpoint", a.checkpoint);
      check_writable("--metrics", a.metrics);
      check_writable("--metrics", a.chart);
    }
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
    if (a.model == "cnn") return train(a, job, resume, std::make_shared<CnnImpl>());
    return train(a, job, resume, std::make_shared<MlpImpl>());
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", cli::user_message(e, a.verbose).c_str());
    if (!a.verbose) std::fprintf(stderr, "(--verbose shows where it failed)\n");
    return 1;
  }
}
