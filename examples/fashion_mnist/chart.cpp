#include "chart.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace {

// One panel: a plot area at (x0, y0) of size w x h with value range [lo, hi].
struct Panel {
  double x0, y0, w, h, first_epoch, last_epoch, lo, hi;
  double x(double epoch) const {
    const double span = last_epoch - first_epoch;
    return x0 + (span > 0 ? (epoch - first_epoch) / span * w : w / 2);
  }
  double y(double v) const { return y0 + h - (v - lo) / (hi - lo) * h; }
};

// Lower and upper ends of the values, widened a little so lines stay inside.
void value_range(const std::vector<double>& values, double* lo, double* hi) {
  *lo = *std::min_element(values.begin(), values.end());
  *hi = *std::max_element(values.begin(), values.end());
  const double pad = std::max((*hi - *lo) * 0.08, 1e-3 * std::max(1.0, std::fabs(*hi)));
  *lo -= pad;
  *hi += pad;
}

void axes(std::ostream& os, const Panel& p, const char* label, const char* format) {
  os << "<rect x='" << p.x0 << "' y='" << p.y0 << "' width='" << p.w << "' height='" << p.h
     << "' fill='none' stroke='#999'/>\n";
  char text[64];
  for (int i = 0; i <= 4; ++i) {  // value ticks and grid lines
    const double v = p.lo + (p.hi - p.lo) * i / 4;
    std::snprintf(text, sizeof text, format, v);
    os << "<line x1='" << p.x0 << "' x2='" << p.x0 + p.w << "' y1='" << p.y(v) << "' y2='" << p.y(v)
       << "' stroke='#eee'/><text x='" << p.x0 - 6 << "' y='" << p.y(v) + 4
       << "' text-anchor='end'>" << text << "</text>\n";
  }
  const int first = static_cast<int>(p.first_epoch), last = static_cast<int>(p.last_epoch);
  const int step = std::max(1, (last - first) / 8);
  for (int e = first; e <= last; e += step)  // epoch ticks
    os << "<text x='" << p.x(e) << "' y='" << p.y0 + p.h + 16 << "' text-anchor='middle'>" << e
       << "</text>\n";
  os << "<text x='" << p.x0 + p.w / 2 << "' y='" << p.y0 + p.h + 34
     << "' text-anchor='middle'>epoch</text>\n<text x='" << p.x0 << "' y='" << p.y0 - 8 << "'>"
     << label << "</text>\n";
}

void series(std::ostream& os, const Panel& p, const std::vector<EpochRow>& rows,
            double EpochRow::*field, double scale, const char* color) {
  os << "<polyline fill='none' stroke='" << color << "' stroke-width='2' points='";
  for (const auto& r : rows) os << p.x(r.epoch) << "," << p.y(r.*field * scale) << " ";
  os << "'/>\n";
  for (const auto& r : rows)
    os << "<circle cx='" << p.x(r.epoch) << "' cy='" << p.y(r.*field * scale) << "' r='3' fill='"
       << color << "'/>\n";
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '\'')
      out += "&apos;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::vector<EpochRow> read_metrics_csv(const std::string& path) {
  std::ifstream in(path);
  std::vector<EpochRow> rows;
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    EpochRow r{};
    char comma;
    std::istringstream fields(line);
    if (fields >> r.epoch >> comma >> r.train_loss >> comma >> r.test_loss >> comma >>
        r.test_accuracy)
      rows.push_back(r);
  }
  return rows;
}

void write_svg_chart(const std::string& path, const std::string& title,
                     const std::vector<EpochRow>& rows) {
  if (rows.empty()) return;
  std::vector<double> losses, accuracies;
  for (const auto& r : rows) {
    losses.insert(losses.end(), {r.train_loss, r.test_loss});
    accuracies.push_back(100 * r.test_accuracy);
  }
  const double first = rows.front().epoch, last = rows.back().epoch;
  Panel loss{70, 50, 300, 200, first, last, 0, 0}, accuracy{450, 50, 300, 200, first, last, 0, 0};
  value_range(losses, &loss.lo, &loss.hi);
  value_range(accuracies, &accuracy.lo, &accuracy.hi);

  std::ostringstream os;
  os << "<svg xmlns='http://www.w3.org/2000/svg' width='800' height='320' viewBox='0 0 800 320' "
        "font-family='sans-serif' font-size='12'>\n<rect width='800' height='320' fill='white'/>\n"
     << "<text x='400' y='22' text-anchor='middle' font-size='15'>" << escape(title) << "</text>\n";
  axes(os, loss, "loss", "%.3f");
  series(os, loss, rows, &EpochRow::train_loss, 1, "#1f77b4");
  series(os, loss, rows, &EpochRow::test_loss, 1, "#d62728");
  axes(os, accuracy, "test accuracy (%)", "%.1f");
  series(os, accuracy, rows, &EpochRow::test_accuracy, 100, "#2ca02c");
  os << "<g font-size='11'><rect x='70' y='300' width='10' height='10' fill='#1f77b4'/>"
        "<text x='85' y='309'>train loss</text><rect x='160' y='300' width='10' height='10' "
        "fill='#d62728'/><text x='175' y='309'>test loss</text></g>\n</svg>\n";

  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << os.str();
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot write the chart " + path);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write the chart " + path);
  }
}
