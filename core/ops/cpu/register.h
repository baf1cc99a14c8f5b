#pragma once
// Registration of the CPU kernels, one function per op family, called once by
// detail::register_builtin_kernels (ops/register_builtin.cpp).
#include <brasa/ops/kernel_table.h>

namespace brasa::cpu {
void register_binary_kernels();
void register_unary_kernels();
void register_copy_kernels();
}  // namespace brasa::cpu
