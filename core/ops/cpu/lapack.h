#pragma once
// The LAPACK routines of the linear-algebra ops, from OpenBLAS (which ships
// LAPACK with 32-bit integers), with the Fortran calling convention: every
// argument by pointer, and one hidden length per character argument.
#include <cstddef>

namespace brasa::lapack {

// Fortran's hidden character lengths.
inline constexpr size_t kOne = 1;

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void dtrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs,
             const double* a, const int* lda, double* b, const int* ldb, int* info, size_t, size_t,
             size_t);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const double* a, const int* lda, const double* tau, double* c, const int* ldc,
             double* work, const int* lwork, int* info, size_t, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, size_t);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
            double* work, const int* lwork, int* info, size_t, size_t);
void dsytrf_(const char* uplo, const int* n, double* a, const int* lda, int* ipiv, double* work,
             const int* lwork, int* info, size_t);
void dsytrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, size_t);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork,
             int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void strtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs,
             const float* a, const int* lda, float* b, const int* ldb, int* info, size_t, size_t,
             size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void sormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const float* a, const int* lda, const float* tau, float* c, const int* ldc,
             float* work, const int* lwork, int* info, size_t, size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, size_t);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr,
            float* wi, float* vl, const int* ldvl, float* vr, const int* ldvr, float* work,
            const int* lwork, int* info, size_t, size_t);
void ssytrf_(const char* uplo, const int* n, float* a, const int* lda, int* ipiv, float* work,
             const int* lwork, int* info, size_t);
void ssytrs_(const char* uplo, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, size_t);
// The least-squares drivers.
void dgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a,
            const int* lda, double* b, const int* ldb, double* work, const int* lwork, int* info,
            size_t);
void sgels_(const char* trans, const int* m, const int* n, const int* nrhs, float* a,
            const int* lda, float* b, const int* ldb, float* work, const int* lwork, int* info,
            size_t);
void dgelsy_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
             const int* ldb, int* jpvt, const double* rcond, int* rank, double* work,
             const int* lwork, int* info);
void sgelsy_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
             const int* ldb, int* jpvt, const float* rcond, int* rank, float* work,
             const int* lwork, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
             const int* ldb, double* s, const double* rcond, int* rank, double* work,
             const int* lwork, int* iwork, int* info);
void sgelsd_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
             const int* ldb, float* s, const float* rcond, int* rank, float* work, const int* lwork,
             int* iwork, int* info);
void dgelss_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
             const int* ldb, double* s, const double* rcond, int* rank, double* work,
             const int* lwork, int* info);
void sgelss_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
             const int* ldb, float* s, const float* rcond, int* rank, float* work, const int* lwork,
             int* info);
}

// One name per routine for both precisions: the double overload calls
// LAPACK's d routine, the float one its s routine.
inline void getrf(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info) {
  dgetrf_(m, n, a, lda, ipiv, info);
}
inline void getrf(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info) {
  sgetrf_(m, n, a, lda, ipiv, info);
}
inline void getri(const int* n, double* a, const int* lda, const int* ipiv, double* work,
                  const int* lwork, int* info) {
  dgetri_(n, a, lda, ipiv, work, lwork, info);
}
inline void getri(const int* n, float* a, const int* lda, const int* ipiv, float* work,
                  const int* lwork, int* info) {
  sgetri_(n, a, lda, ipiv, work, lwork, info);
}
inline void potrf(const char* uplo, const int* n, double* a, const int* lda, int* info,
                  size_t len1) {
  dpotrf_(uplo, n, a, lda, info, len1);
}
inline void potrf(const char* uplo, const int* n, float* a, const int* lda, int* info,
                  size_t len1) {
  spotrf_(uplo, n, a, lda, info, len1);
}
inline void trtrs(const char* uplo, const char* trans, const char* diag, const int* n,
                  const int* nrhs, const double* a, const int* lda, double* b, const int* ldb,
                  int* info, size_t len1, size_t len2, size_t len3) {
  dtrtrs_(uplo, trans, diag, n, nrhs, a, lda, b, ldb, info, len1, len2, len3);
}
inline void trtrs(const char* uplo, const char* trans, const char* diag, const int* n,
                  const int* nrhs, const float* a, const int* lda, float* b, const int* ldb,
                  int* info, size_t len1, size_t len2, size_t len3) {
  strtrs_(uplo, trans, diag, n, nrhs, a, lda, b, ldb, info, len1, len2, len3);
}
inline void geqrf(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
                  const int* lwork, int* info) {
  dgeqrf_(m, n, a, lda, tau, work, lwork, info);
}
inline void geqrf(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
                  const int* lwork, int* info) {
  sgeqrf_(m, n, a, lda, tau, work, lwork, info);
}
inline void orgqr(const int* m, const int* n, const int* k, double* a, const int* lda,
                  const double* tau, double* work, const int* lwork, int* info) {
  dorgqr_(m, n, k, a, lda, tau, work, lwork, info);
}
inline void orgqr(const int* m, const int* n, const int* k, float* a, const int* lda,
                  const float* tau, float* work, const int* lwork, int* info) {
  sorgqr_(m, n, k, a, lda, tau, work, lwork, info);
}
inline void ormqr(const char* side, const char* trans, const int* m, const int* n, const int* k,
                  const double* a, const int* lda, const double* tau, double* c, const int* ldc,
                  double* work, const int* lwork, int* info, size_t len1, size_t len2) {
  dormqr_(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info, len1, len2);
}
inline void ormqr(const char* side, const char* trans, const int* m, const int* n, const int* k,
                  const float* a, const int* lda, const float* tau, float* c, const int* ldc,
                  float* work, const int* lwork, int* info, size_t len1, size_t len2) {
  sormqr_(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info, len1, len2);
}
inline void gesdd(const char* jobz, const int* m, const int* n, double* a, const int* lda,
                  double* s, double* u, const int* ldu, double* vt, const int* ldvt, double* work,
                  const int* lwork, int* iwork, int* info, size_t len1) {
  dgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, len1);
}
inline void gesdd(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
                  float* u, const int* ldu, float* vt, const int* ldvt, float* work,
                  const int* lwork, int* iwork, int* info, size_t len1) {
  sgesdd_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, len1);
}
inline void syevd(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
                  double* w, double* work, const int* lwork, int* iwork, const int* liwork,
                  int* info, size_t len1, size_t len2) {
  dsyevd_(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, len1, len2);
}
inline void syevd(const char* jobz, const char* uplo, const int* n, float* a, const int* lda,
                  float* w, float* work, const int* lwork, int* iwork, const int* liwork, int* info,
                  size_t len1, size_t len2) {
  ssyevd_(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, len1, len2);
}
inline void getrs(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
                  const int* ipiv, double* b, const int* ldb, int* info, size_t len1) {
  dgetrs_(trans, n, nrhs, a, lda, ipiv, b, ldb, info, len1);
}
inline void getrs(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
                  const int* ipiv, float* b, const int* ldb, int* info, size_t len1) {
  sgetrs_(trans, n, nrhs, a, lda, ipiv, b, ldb, info, len1);
}
inline void geev(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
                 double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
                 double* work, const int* lwork, int* info, size_t len1, size_t len2) {
  dgeev_(jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork, info, len1, len2);
}
inline void geev(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda,
                 float* wr, float* wi, float* vl, const int* ldvl, float* vr, const int* ldvr,
                 float* work, const int* lwork, int* info, size_t len1, size_t len2) {
  sgeev_(jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork, info, len1, len2);
}
inline void sytrf(const char* uplo, const int* n, double* a, const int* lda, int* ipiv,
                  double* work, const int* lwork, int* info, size_t len1) {
  dsytrf_(uplo, n, a, lda, ipiv, work, lwork, info, len1);
}
inline void sytrf(const char* uplo, const int* n, float* a, const int* lda, int* ipiv, float* work,
                  const int* lwork, int* info, size_t len1) {
  ssytrf_(uplo, n, a, lda, ipiv, work, lwork, info, len1);
}
inline void sytrs(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
                  const int* ipiv, double* b, const int* ldb, int* info, size_t len1) {
  dsytrs_(uplo, n, nrhs, a, lda, ipiv, b, ldb, info, len1);
}
inline void sytrs(const char* uplo, const int* n, const int* nrhs, const float* a, const int* lda,
                  const int* ipiv, float* b, const int* ldb, int* info, size_t len1) {
  ssytrs_(uplo, n, nrhs, a, lda, ipiv, b, ldb, info, len1);
}

// The drivers' overloads take the same arguments (rcond as the buffer's type).
inline void gels(const char* trans, const int* m, const int* n, const int* nrhs, double* a,
                 const int* lda, double* b, const int* ldb, double* work, const int* lwork,
                 int* info, size_t len1) {
  dgels_(trans, m, n, nrhs, a, lda, b, ldb, work, lwork, info, len1);
}
inline void gels(const char* trans, const int* m, const int* n, const int* nrhs, float* a,
                 const int* lda, float* b, const int* ldb, float* work, const int* lwork, int* info,
                 size_t len1) {
  sgels_(trans, m, n, nrhs, a, lda, b, ldb, work, lwork, info, len1);
}
inline void gelsy(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
                  const int* ldb, int* jpvt, const double* rcond, int* rank, double* work,
                  const int* lwork, int* info) {
  dgelsy_(m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, work, lwork, info);
}
inline void gelsy(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
                  const int* ldb, int* jpvt, const float* rcond, int* rank, float* work,
                  const int* lwork, int* info) {
  sgelsy_(m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, work, lwork, info);
}
inline void gelsd(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
                  const int* ldb, double* s, const double* rcond, int* rank, double* work,
                  const int* lwork, int* iwork, int* info) {
  dgelsd_(m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, iwork, info);
}
inline void gelsd(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
                  const int* ldb, float* s, const float* rcond, int* rank, float* work,
                  const int* lwork, int* iwork, int* info) {
  sgelsd_(m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, iwork, info);
}
inline void gelss(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
                  const int* ldb, double* s, const double* rcond, int* rank, double* work,
                  const int* lwork, int* info) {
  dgelss_(m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, info);
}
inline void gelss(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
                  const int* ldb, float* s, const float* rcond, int* rank, float* work,
                  const int* lwork, int* info) {
  sgelss_(m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, info);
}

}  // namespace brasa::lapack
