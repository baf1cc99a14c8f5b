#pragma once
// Registration of the CPU kernels, one function per op family, called once by
// detail::register_builtin_kernels (ops/register_builtin.cpp).
#include <brasa/ops/kernel_table.h>

namespace brasa::cpu {
void register_binary_kernels();
void register_unary_kernels();
void register_copy_kernels();
void register_reduction_kernels();
void register_indexing_kernels();
void register_linalg_kernels();
void register_conv_kernels();
void register_pooling_kernels();
void register_sort_kernels();
}  // namespace brasa::cpu
