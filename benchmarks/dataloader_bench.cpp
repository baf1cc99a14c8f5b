// DataLoader throughput on Fashion-MNIST (scripts/bench mp runs it beside
// dataloader_bench_torch.py, PyTorch 1.13's DataLoader): batch 64, each
// sample converted from bytes to float and normalized in get() (light), or
// with an augmentation-like transform of about 50 us added (heavy). Prints
// `result brasa dataloader <light|heavy> <threads|processes> <workers> <batches/s>`.
#include <brasa/torch.h>
#include <brasa/util/cli.h>

#include <chrono>
#include <cstdio>
#include <string>

using namespace brasa;

namespace {

struct Images : data::datasets::Dataset<Images> {
  Images(Tensor bytes, Tensor labels, bool heavy)
      : bytes(std::move(bytes)), labels(std::move(labels)), heavy(heavy) {}
  data::Example<> get(size_t i) override {
    Tensor x = (bytes[static_cast<int64_t>(i)].to(kFloat).div(255.0) - 0.2860) / 0.3530;
    if (heavy)  // an augmentation-like cost: a few passes over the image
      for (int k = 0; k < 2; ++k) x = (x * 0.999 + 0.001).tanh() + x.flip({1}) * 0.0001;
    return {x.unsqueeze(0), labels[static_cast<int64_t>(i)]};
  }
  std::optional<size_t> size() const override { return static_cast<size_t>(bytes.size(0)); }
  Tensor bytes, labels;
  bool heavy;
};

}  // namespace

int main(int argc, char** argv) {
  brasa::cli::Parser("dataloader_bench",
                     "DataLoader with 0, 1 and 2 thread or process workers (see scripts/bench).")
      .parse_or_exit(argc, argv);
  set_num_threads(1);
  data::datasets::MNIST mnist("/usr/share/datasets/fashion-mnist",
                              data::datasets::MNIST::Mode::kTrain);
  Tensor bytes = (mnist.data().squeeze(1) * 255).round().to(kByte);
  Tensor labels = mnist.targets();
  for (bool heavy : {false, true}) {
    {
      Images probe(bytes, labels, heavy);
      auto t0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < 2000; ++i) probe.get(i);
      double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
          2000;
      std::printf("# %s transform: %.1f us per sample\n", heavy ? "heavy" : "light", us);
    }
    const int64_t batches = heavy ? 450 : 900;  // long enough to outlast the noise
    for (bool processes : {false, true})
      for (int workers : {0, 1, 2}) {
        if (workers == 0 && processes) continue;
        auto loader = data::make_data_loader<data::samplers::RandomSampler>(
            Images(bytes, labels, heavy),
            data::DataLoaderOptions(64).workers(workers).process_workers(processes));
        int64_t n = 0;
        auto t0 = std::chrono::steady_clock::now();
        for (auto& b : *loader) {
          (void)b;
          if (++n == 5) t0 = std::chrono::steady_clock::now();  // after the workers start
          if (n == batches + 5) break;
        }
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("result brasa dataloader %s %s %d %.1f\n", heavy ? "heavy" : "light",
                    workers == 0 ? "-" : (processes ? "processes" : "threads"), workers,
                    static_cast<double>(batches) / s);
        std::fflush(stdout);
      }
  }
  return 0;
}
