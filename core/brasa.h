#pragma once
// The whole public API. Lean per-part headers exist for translation units that
// need less: <brasa/tensor/tensor.h>, <brasa/ops/...>, <brasa/serialize/...>.
#include <brasa/autograd/autograd.h>
#include <brasa/data/data.h>
#include <brasa/nn/functional.h>
#include <brasa/nn/init.h>
#include <brasa/nn/modules.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/conv.h>
#include <brasa/ops/pooling.h>
#include <brasa/optim/optimizer.h>
#include <brasa/serialize/checkpoint.h>
#include <brasa/serialize/safetensors.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/random.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/sort.h>
#include <brasa/ops/unary.h>
#include <brasa/serialize/dlpack.h>
#include <brasa/serialize/npy.h>
#include <brasa/tensor/indexing.h>
#include <brasa/tensor/tensor.h>
#include <brasa/util/parallel.h>
