#pragma once
// Grad modes: whether ops record autograd history on this thread.
namespace brasa {
namespace autograd::detail {
extern thread_local bool grad_enabled;
extern thread_local bool inference_mode;
}  // namespace autograd::detail

inline bool is_grad_enabled() { return autograd::detail::grad_enabled; }
inline void set_grad_enabled(bool on) { autograd::detail::grad_enabled = on; }

// Sets grad mode for a scope (libtorch's AutoGradMode).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~AutoGradMode() { set_grad_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

// Inference mode: no history is recorded (like NoGradGuard). Brasa has no
// separate inference tensors, so the difference from NoGradGuard is only
// that InferenceMode::is_enabled() reports it.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true)
      : prev_grad_(is_grad_enabled()), prev_inference_(autograd::detail::inference_mode) {
    autograd::detail::inference_mode = enabled;
    if (enabled) set_grad_enabled(false);
  }
  ~InferenceMode() {
    autograd::detail::inference_mode = prev_inference_;
    set_grad_enabled(prev_grad_);
  }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled() { return autograd::detail::inference_mode; }

 private:
  bool prev_grad_, prev_inference_;
};

namespace autograd {
struct GradMode {
  static bool is_enabled() { return is_grad_enabled(); }
  static void set_enabled(bool on) { set_grad_enabled(on); }
};
}  // namespace autograd

}  // namespace brasa
