#pragma once
// The MPI library as ProcessGroupMPI uses it: initialization (once, with
// MPI_THREAD_MULTIPLE; finalized at exit), our types and reduction ops for
// float16/bfloat16, and the mapping of dtypes and ReduceOps. Internal to
// brasa_comm (includes <mpi.h>).

#include <brasa/comm/types.h>
#include <brasa/tensor/scalar_type.h>
#include <mpi.h>

#include <string>

namespace brasa::distributed::mpi_detail {

std::string mpi_error_string(int rc);
// Throws DistError "<what>: MPI error: <MPI's text>" unless rc is MPI_SUCCESS.
void mpi_check(int rc, const std::string& what);
// Initializes MPI once; `before_finalize` runs at exit before MPI_Finalize
// (the groups stop their progress threads there).
void init_mpi_once(void (*before_finalize)());
MPI_Datatype mpi_type(ScalarType t);
MPI_Op mpi_op(ReduceOp op, ScalarType t);
// numel as an MPI count; the error names `op` when it does not fit an int.
int count_of(const char* op, int64_t numel);

}  // namespace brasa::distributed::mpi_detail
