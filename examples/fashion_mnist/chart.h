#pragma once
// A self-contained SVG chart of a run's metrics: train and test loss per epoch
// on the left, test accuracy on the right. No plotting dependency.
#include <string>
#include <vector>

struct EpochRow {
  double epoch, train_loss, test_loss, test_accuracy;
};

// Reads the rows of the main job's metrics CSV (header line first).
std::vector<EpochRow> read_metrics_csv(const std::string& path);

// Writes the chart to `path` atomically (a temporary file renamed over it).
// Throws std::runtime_error when the file cannot be written.
void write_svg_chart(const std::string& path, const std::string& title,
                     const std::vector<EpochRow>& rows);
