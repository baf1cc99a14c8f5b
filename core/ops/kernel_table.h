#pragma once
// Per-op kernel tables (DESIGN §4). An op code is a struct that names an op
// and the signature of its kernel:
//
//   struct CopyKernel { static constexpr const char* name = "copy_"; using Fn = void (*)(...); };
//
// A device registers a function for each op code it implements
// (register_kernel<CopyKernel>(kCPU, copy_cpu)) and an op's semantic file
// calls kernel<CopyKernel>(device)(...). The op codes live in ops/kernels/*.h,
// the vocabulary shared by the semantic files and the device folders; no
// semantic file includes a device folder's headers.
#include <brasa/tensor/device.h>

namespace brasa {
namespace detail {
// Registers the kernels built into this library (ops/cpu, ops/cuda) once.
void register_builtin_kernels();
[[noreturn]] void missing_kernel(const char* op, Device d);
}  // namespace detail

template <class Op>
struct KernelTable {
  static inline typename Op::Fn fns[kNumDeviceTypes] = {};
};

template <class Op>
void register_kernel(DeviceType d, typename Op::Fn fn) {
  KernelTable<Op>::fns[static_cast<int>(d)] = fn;
}

// Whether `d` has a kernel for Op (for optional kernels).
template <class Op>
bool has_kernel(Device d) {
  static const bool builtin = (detail::register_builtin_kernels(), true);
  (void)builtin;
  return KernelTable<Op>::fns[static_cast<int>(d.type())] != nullptr;
}

template <class Op>
typename Op::Fn kernel(Device d) {
  static const bool builtin = (detail::register_builtin_kernels(), true);
  (void)builtin;
  typename Op::Fn fn = KernelTable<Op>::fns[static_cast<int>(d.type())];
  if (!fn) detail::missing_kernel(Op::name, d);
  return fn;
}

}  // namespace brasa
