// Printing in PyTorch's format: tensor([[ 1.0000, -0.5000]], dtype=torch.float64)
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/node.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/type_queries.h>
#include <brasa/ops/unary.h>
#include <brasa/tensor/tensor.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

namespace brasa {
namespace {

constexpr int kPrecision = 4, kEdgeItems = 3, kLineWidth = 80;
constexpr int64_t kThreshold = 1000;

double value_at(const Tensor& t, int64_t offset_elems) {
  const char* base = static_cast<const char*>(t.data_ptr());
  return BRASA_DISPATCH_ALL_TYPES_AND_BOOL(t.dtype(), "print", [&]() -> double {
    return static_cast<double>(
        static_cast<opmath_t<scalar_t>>(reinterpret_cast<const scalar_t*>(base)[offset_elems]));
  });
}

// Visits the elements that will be shown (all, or the edges when summarizing).
template <class F>
void visit(const Tensor& t, int64_t dim, int64_t offset, bool summarize, const F& f) {
  if (dim == t.dim()) return f(value_at(t, offset));
  int64_t n = t.size(dim);
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
    visit(t, dim + 1, offset + i * t.stride(dim), summarize, f);
  }
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

struct Formatter {
  ScalarType dtype;
  bool floating, int_mode = true, sci = false;
  size_t width = 1;

  Formatter(const Tensor& t, bool summarize) : dtype(t.dtype()), floating(t.is_floating_point()) {
    std::vector<double> vals;
    visit(t, 0, 0, summarize, [&](double v) { vals.push_back(v); });
    if (!floating) {
      for (double v : vals) width = std::max(width, format(v).size());
      return;
    }
    std::vector<double> nz;
    for (double v : vals)
      if (std::isfinite(v) && v != 0) nz.push_back(std::abs(v));
    if (nz.empty()) return;
    double lo = *std::min_element(nz.begin(), nz.end()),
           hi = *std::max_element(nz.begin(), nz.end());
    for (double v : nz)
      if (v != std::ceil(v)) int_mode = false;
    if (int_mode)
      sci = hi / lo > 1000.0 || hi > 1.0e8;
    else
      sci = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
    for (double v : vals)
      if (std::isfinite(v) && v != 0) width = std::max(width, format_raw(v).size());
  }

  std::string format_raw(double v) const {
    if (dtype == kBool) return v != 0 ? "True" : "False";
    if (!floating) return fmt("%.0f", v);
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci) return fmt("%.4e", v);
    if (int_mode) return fmt("%.0f", v) + ".";
    return fmt("%.4f", v);
  }
  std::string format(double v) const {
    std::string s = format_raw(v);
    return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
  }
};

// How each element prints: its text from its offset (in elements from the
// data pointer), padded to `width`.
struct Items {
  std::function<std::string(int64_t)> at;
  size_t width;
};

void vector_str(std::ostream& os, const Tensor& t, int64_t offset, int indent, bool summarize,
                const Items& f) {
  const size_t element_length = f.width + 2;
  const int64_t per_line =
      std::max<int64_t>(1, (kLineWidth - indent) / static_cast<int64_t>(element_length));
  std::vector<std::string> items;
  int64_t n = t.size(t.dim() - 1), st = t.stride(t.dim() - 1);
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      items.push_back(" ...");
      i = n - kEdgeItems;
    }
    items.push_back(f.at(offset + i * st));
  }
  os << "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      os << ",";
      if (static_cast<int64_t>(i) % per_line == 0)
        os << "\n" << std::string(indent + 1, ' ');
      else
        os << " ";
    }
    os << items[i];
  }
  os << "]";
}

void tensor_str(std::ostream& os, const Tensor& t, int64_t dim, int64_t offset, int indent,
                bool summarize, const Items& f) {
  if (dim == t.dim() - 1) {
    // Re-root the vector printer at this offset: it reads the last dim only.
    vector_str(os, t, offset, indent, summarize, f);
    return;
  }
  int64_t n = t.size(dim);
  os << "[";
  bool first = true;
  std::string sep(",");
  sep.append(static_cast<size_t>(t.dim() - dim - 1), '\n')
      .append(static_cast<size_t>(indent + 1), ' ');
  for (int64_t i = 0; i < n; ++i) {
    if (!first) os << sep;
    first = false;
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << "..." << sep;
      i = n - kEdgeItems;
    }
    tensor_str(os, t, dim + 1, offset + i * t.stride(dim), indent + 1, summarize, f);
  }
  os << "]";
}

// Real elements by one Formatter; complex ones as Python prints them,
// "1.+2.j", the real and imaginary parts each with a Formatter of its own.
Items items_of(const Tensor& t, bool summarize) {
  if (!t.is_complex()) {
    auto f = std::make_shared<Formatter>(t, summarize);
    return {[f, t](int64_t i) { return f->format(value_at(t, i)); }, f->width};
  }
  NoGradGuard no_grad;
  Tensor re = real(t), im = imag(t);
  auto fr = std::make_shared<Formatter>(re, summarize);
  auto fi = std::make_shared<Formatter>(abs(im), summarize);
  const size_t width = fr->width + fi->width + 2;
  return {[fr, fi, re, width](int64_t i) {
            const double a = value_at(re, 2 * i), b = value_at(re, 2 * i + 1);
            std::string s = fr->format(a) + (b < 0 ? "-" : "+") + fi->format_raw(std::abs(b)) + "j";
            return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
          },
          width};
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t_any) {
  if (!t_any.defined()) return os << "[ Tensor (undefined) ]";
  // Values are read on the host; the suffix still names the tensor's device.
  const Tensor t = t_any.is_cpu() ? t_any : t_any.detach().to(Device(kCPU));
  std::vector<std::string> suffixes;
  std::ostringstream body;
  const int indent = 7;  // strlen("tensor(")
  if (t.numel() == 0) {
    body << "[]";
    if (t.dim() != 1) {
      std::ostringstream s;
      s << "size=(";
      for (int64_t i = 0; i < t.dim(); ++i) s << (i ? ", " : "") << t.size(i);
      s << (t.dim() == 1 ? ",)" : ")");
      suffixes.push_back(s.str());
    }
    if (t.dtype() != get_default_dtype())
      suffixes.push_back(std::string("dtype=") + python_name(t.dtype()));
  } else {
    bool summarize = t.numel() > kThreshold;
    Items f = items_of(t, summarize);
    if (t.dim() == 0)
      body << f.at(0);
    else
      tensor_str(body, t, 0, 0, indent, summarize, f);
    if (t.dtype() != get_default_dtype() && t.dtype() != kLong && t.dtype() != kBool)
      suffixes.push_back(std::string("dtype=") + python_name(t.dtype()));
  }
  if (!t_any.device().is_cpu())
    suffixes.insert(suffixes.begin(), "device='" + t_any.device().str() + "'");
  // As Python: a result names the function that made it, a leaf says it requires grad.
  if (const auto& fn = t_any.grad_fn())
    suffixes.push_back("grad_fn=<" + fn->name() + ">");
  else if (t_any.requires_grad())
    suffixes.push_back("requires_grad=True");
  os << "tensor(" << body.str();
  for (const auto& s : suffixes) os << ", " << s;
  return os << ")";
}

std::string Tensor::toString() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

void Tensor::print() const { std::cout << *this << std::endl; }

}  // namespace brasa
