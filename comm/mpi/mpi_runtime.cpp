#include "mpi_runtime.h"

#include <brasa/comm/errors.h>
#include <brasa/tensor/half.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace brasa::distributed::mpi_detail {

std::string mpi_error_string(int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return std::string(msg, static_cast<size_t>(len));
}

void mpi_check(int rc, const std::string& what) {
  if (rc != MPI_SUCCESS) BRASA_DIST_THROW(DistError, what, ": MPI error: ", mpi_error_string(rc));
}

namespace {

// ---- float16 / bfloat16: MPI has no such types; they travel as 2-byte
// blobs and reduce through our own MPI_Ops (in float).
template <class T, class F>
void reduce_16bit(void* in, void* inout, int* len, F f) {
  auto* a = static_cast<const T*>(in);
  auto* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = T(f(static_cast<float>(a[i]), static_cast<float>(b[i])));
}
template <class T>
void sum16(void* a, void* b, int* n, MPI_Datatype*) {
  reduce_16bit<T>(a, b, n, [](float x, float y) { return x + y; });
}
template <class T>
void prod16(void* a, void* b, int* n, MPI_Datatype*) {
  reduce_16bit<T>(a, b, n, [](float x, float y) { return x * y; });
}
template <class T>
void min16(void* a, void* b, int* n, MPI_Datatype*) {
  reduce_16bit<T>(a, b, n, [](float x, float y) { return std::min(x, y); });
}
template <class T>
void max16(void* a, void* b, int* n, MPI_Datatype*) {
  reduce_16bit<T>(a, b, n, [](float x, float y) { return std::max(x, y); });
}

struct Global {
  MPI_Datatype half_type = MPI_DATATYPE_NULL, bf16_type = MPI_DATATYPE_NULL;
  MPI_Op half_ops[4], bf16_ops[4];  // SUM, PRODUCT, MIN, MAX
};
Global& global() {
  static Global* g = new Global();  // never destroyed: used from atexit
  return *g;
}

void (*g_before_finalize)() = nullptr;

// At exit: MPI_Finalize waits for every rank to finalize too, so a rank
// that exits on an error while its peers wait in a collective would leave
// the whole job hanging until their timeout. A failing exit aborts the job
// instead, which mpirun turns into the job's failure at once.
void finalize_on_exit(int status, void*) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (status != 0 && size > 1) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr,
                 "brasa: rank %d exits with status %d in an MPI job of %d ranks: aborting the job "
                 "so that the other ranks do not wait for it\n",
                 rank, status, size);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  if (g_before_finalize) g_before_finalize();
  MPI_Finalize();
}

}  // namespace

void init_mpi_once(void (*before_finalize)()) {
  static std::once_flag once;
  std::call_once(once, [before_finalize] {
    int initialized = 0, provided = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided),
                "MPI_Init_thread");
      g_before_finalize = before_finalize;
      on_exit(finalize_on_exit, nullptr);  // glibc: like atexit, with the exit status
    } else {
      MPI_Query_thread(&provided);
    }
    BRASA_CHECK(provided >= MPI_THREAD_MULTIPLE,
                "ProcessGroupMPI: this MPI library provides thread level ", provided,
                ", but MPI_THREAD_MULTIPLE is needed (groups make progress in their own threads)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    Global& g = global();
    MPI_Type_contiguous(2, MPI_BYTE, &g.half_type);
    MPI_Type_commit(&g.half_type);
    MPI_Type_contiguous(2, MPI_BYTE, &g.bf16_type);
    MPI_Type_commit(&g.bf16_type);
    MPI_Op_create(sum16<Half>, 1, &g.half_ops[0]);
    MPI_Op_create(prod16<Half>, 1, &g.half_ops[1]);
    MPI_Op_create(min16<Half>, 1, &g.half_ops[2]);
    MPI_Op_create(max16<Half>, 1, &g.half_ops[3]);
    MPI_Op_create(sum16<BFloat16>, 1, &g.bf16_ops[0]);
    MPI_Op_create(prod16<BFloat16>, 1, &g.bf16_ops[1]);
    MPI_Op_create(min16<BFloat16>, 1, &g.bf16_ops[2]);
    MPI_Op_create(max16<BFloat16>, 1, &g.bf16_ops[3]);
  });
}

MPI_Datatype mpi_type(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
      return MPI_UINT8_T;
    case ScalarType::Char:
      return MPI_INT8_T;
    case ScalarType::Short:
      return MPI_INT16_T;
    case ScalarType::Int:
      return MPI_INT32_T;
    case ScalarType::Long:
      return MPI_INT64_T;
    case ScalarType::Half:
      return global().half_type;
    case ScalarType::Float:
      return MPI_FLOAT;
    case ScalarType::Double:
      return MPI_DOUBLE;
    case ScalarType::Bool:
      return MPI_UINT8_T;  // one byte, 0 or 1
    case ScalarType::BFloat16:
      return global().bf16_type;
    default:
      break;
  }
  BRASA_ERROR("ProcessGroupMPI: dtype ", toString(t), " cannot be communicated");
}

MPI_Op mpi_op(ReduceOp op, ScalarType t) {
  if (t == ScalarType::Half || t == ScalarType::BFloat16) {
    MPI_Op* ops = t == ScalarType::Half ? global().half_ops : global().bf16_ops;
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        return ops[0];
      case ReduceOp::PRODUCT:
        return ops[1];
      case ReduceOp::MIN:
        return ops[2];
      case ReduceOp::MAX:
        return ops[3];
      default:
        break;  // bitwise ops were rejected before
    }
  }
  if (t == ScalarType::Bool) {  // as PyTorch: SUM/MAX are "any", PRODUCT/MIN are "all"
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::MAX:
        return MPI_LOR;
      case ReduceOp::PRODUCT:
      case ReduceOp::MIN:
        return MPI_LAND;
      default:
        break;
    }
  }
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return MPI_SUM;
    case ReduceOp::PRODUCT:
      return MPI_PROD;
    case ReduceOp::MIN:
      return MPI_MIN;
    case ReduceOp::MAX:
      return MPI_MAX;
    case ReduceOp::BAND:
      return MPI_BAND;
    case ReduceOp::BOR:
      return MPI_BOR;
    case ReduceOp::BXOR:
      return MPI_BXOR;
  }
  return MPI_SUM;
}

int count_of(const char* op, int64_t numel) {
  BRASA_CHECK(numel <= INT_MAX, "ProcessGroupMPI.", op, ": ", numel,
              " elements are more than one MPI call can carry (2^31 - 1)");
  return static_cast<int>(numel);
}

}  // namespace brasa::distributed::mpi_detail
