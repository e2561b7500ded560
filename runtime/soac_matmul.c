/*===- soac_matmul.c - matrix products of compiled soac code ----------------===*
 *
 * soac-contractions-to-calls makes every f32/f64 linalg.matmul a call of
 * soac_matmul_f32/f64: C = op(A)·op(B) (or C += ... when `overwrite` is 0),
 * each operand given as an aligned pointer, an offset and two strides in
 * elements. A tuned BLAS does the work when one was registered
 * (soac_set_gemm: Python registers numpy's OpenBLAS when it loads this
 * library) and the operands are views it takes (one unit stride each);
 * otherwise loops here do, so that a library loaded without numpy still
 * computes the same products.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <string.h>

/* cblas_?gemm and cblas_?gemv with 64-bit sizes (OpenBLAS built with
 * INTERFACE64). */
typedef void (*dgemm_t)(int order, int trans_a, int trans_b, int64_t m,
                        int64_t n, int64_t k, double alpha, const double *a,
                        int64_t lda, const double *b, int64_t ldb, double beta,
                        double *c, int64_t ldc);
typedef void (*sgemm_t)(int order, int trans_a, int trans_b, int64_t m,
                        int64_t n, int64_t k, float alpha, const float *a,
                        int64_t lda, const float *b, int64_t ldb, float beta,
                        float *c, int64_t ldc);

typedef void (*dgemv_t)(int order, int trans, int64_t m, int64_t n,
                        double alpha, const double *a, int64_t lda,
                        const double *x, int64_t incx, double beta, double *y,
                        int64_t incy);
typedef void (*sgemv_t)(int order, int trans, int64_t m, int64_t n,
                        float alpha, const float *a, int64_t lda,
                        const float *x, int64_t incx, float beta, float *y,
                        int64_t incy);

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

static dgemm_t registered_dgemm;
static sgemm_t registered_sgemm;
static dgemv_t registered_dgemv;
static sgemv_t registered_sgemv;

/* The BLAS products run with from now on (NULL: the loops below). */
void soac_set_gemm(void *dgemm, void *sgemm) {
  registered_dgemm = (dgemm_t)dgemm;
  registered_sgemm = (sgemm_t)sgemm;
}

/* The BLAS matrix-vector products run with from now on (NULL: gemm's way).
 * A product with one column or one row goes to gemv: gemm would first copy
 * (pack) the whole matrix, which for a tall matrix times a vector costs
 * more than the product. */
void soac_set_gemv(void *dgemv, void *sgemv) {
  registered_dgemv = (dgemv_t)dgemv;
  registered_sgemv = (sgemv_t)sgemv;
}

/* How BLAS reads a stored rows x columns matrix with strides (s0, s1): as
 * row-major with leading dimension *ld, or as the transpose of a row-major
 * columns x rows one (column-major storage). 0 when neither (no unit
 * stride, a broadcast's stride 0). The stride of a dimension of size 1 is
 * never used. */
static int blas_view(int64_t rows, int64_t columns, int64_t s0, int64_t s1,
                     int transposed, int *trans, int64_t *ld) {
  int64_t row_length = columns > 1 ? columns : 1;
  int64_t column_length = rows > 1 ? rows : 1;
  if ((columns == 1 || s1 == 1) && (rows == 1 || s0 >= row_length)) {
    *trans = transposed ? TRANS : NO_TRANS;
    *ld = rows == 1 ? row_length : s0;
    return 1;
  }
  if ((rows == 1 || s0 == 1) && (columns == 1 || s1 >= column_length)) {
    *trans = transposed ? NO_TRANS : TRANS;
    *ld = columns == 1 ? column_length : s1;
    return 1;
  }
  return 0;
}

/* A matrix-vector product y = op(M)·x (or y += ...) through gemv: M stored
 * rows x columns with strides (s0, s1), read transposed when `transposed`;
 * x and y with element strides x_step and y_step. 0 when BLAS cannot take
 * them (no unit stride in M; a vector stride of 0, a broadcast, or below 0,
 * which BLAS reads from the other end). */
#define SOAC_GEMV(T, GEMV)                                                     \
  static int gemv_##T(int64_t rows, int64_t columns, int64_t s0, int64_t s1,  \
                      int transposed, const T *m, const T *x, int64_t x_step,  \
                      T *y, int64_t y_step, int overwrite) {                   \
    int trans;                                                                 \
    int64_t ld;                                                                \
    if (!GEMV || x_step <= 0 || y_step <= 0 ||                                 \
        !blas_view(rows, columns, s0, s1, transposed, &trans, &ld))            \
      return 0;                                                                \
    /* blas_view may read the storage as the transpose of a row-major        \
     * columns x rows matrix (it then flips `trans`). */                       \
    int flipped = (trans == TRANS) != (transposed != 0);                       \
    GEMV(ROW_MAJOR, trans, flipped ? columns : rows, flipped ? rows : columns, \
         (T)1, m, ld, x, x_step, overwrite ? (T)0 : (T)1, y, y_step);         \
    return 1;                                                                  \
  }

SOAC_GEMV(double, registered_dgemv)
SOAC_GEMV(float, registered_sgemv)

#define SOAC_MATMUL(NAME, T, GEMM)                                             \
  void NAME(int64_t transpose_a, int64_t transpose_b, int64_t m, int64_t n,    \
            int64_t k, intptr_t a_base, int64_t a_offset, int64_t a_s0,        \
            int64_t a_s1, intptr_t b_base, int64_t b_offset, int64_t b_s0,     \
            int64_t b_s1, intptr_t c_base, int64_t c_offset, int64_t c_s0,     \
            int64_t c_s1, int64_t overwrite) {                                 \
    const T *a = (const T *)a_base + a_offset;                                 \
    const T *b = (const T *)b_base + b_offset;                                 \
    T *c = (T *)c_base + c_offset;                                             \
    if (m == 0 || n == 0)                                                      \
      return;                                                                  \
    /* Stored shapes: op(A) is m x k, op(B) is k x n. */                       \
    int64_t a_rows = transpose_a ? k : m, a_columns = transpose_a ? m : k;     \
    int64_t b_rows = transpose_b ? n : k, b_columns = transpose_b ? k : n;     \
    /* One column of C: op(A)·(the column of op(B)); one row: its transpose, \
     * op(B)ᵀ·(the row of op(A)). */                                          \
    if (k > 1 && n == 1 && m > 1 &&                                            \
        gemv_##T(a_rows, a_columns, a_s0, a_s1, (int)transpose_a, a, b,       \
                 transpose_b ? b_s1 : b_s0, c, c_s0, (int)overwrite))          \
      return;                                                                  \
    if (k > 1 && m == 1 && n > 1 &&                                            \
        gemv_##T(b_rows, b_columns, b_s0, b_s1, !transpose_b, b, a,           \
                 transpose_a ? a_s0 : a_s1, c, c_s1, (int)overwrite))          \
      return;                                                                  \
    int trans_a, trans_b, c_trans;                                             \
    int64_t lda, ldb, ldc;                                                     \
    if (GEMM && k > 0 &&                                                       \
        blas_view(a_rows, a_columns, a_s0, a_s1, (int)transpose_a, &trans_a,  \
                  &lda) &&                                                     \
        blas_view(b_rows, b_columns, b_s0, b_s1, (int)transpose_b, &trans_b,  \
                  &ldb) &&                                                     \
        blas_view(m, n, c_s0, c_s1, 0, &c_trans, &ldc) &&                      \
        c_trans == NO_TRANS) {                                                 \
      GEMM(ROW_MAJOR, trans_a, trans_b, m, n, k, (T)1, a, lda, b, ldb,         \
           overwrite ? (T)0 : (T)1, c, ldc);                                   \
      return;                                                                  \
    }                                                                          \
    /* op(X)[i][j] = X[i][j] or X[j][i]. */                                    \
    int64_t ai = transpose_a ? a_s1 : a_s0, ak = transpose_a ? a_s0 : a_s1;    \
    int64_t bk = transpose_b ? b_s1 : b_s0, bj = transpose_b ? b_s0 : b_s1;    \
    for (int64_t i = 0; i < m; ++i) {                                          \
      T *row = c + i * c_s0;                                                   \
      if (overwrite)                                                           \
        for (int64_t j = 0; j < n; ++j)                                        \
          row[j * c_s1] = 0;                                                   \
      for (int64_t p = 0; p < k; ++p) {                                        \
        T scale = a[i * ai + p * ak];                                          \
        const T *b_row = b + p * bk;                                           \
        for (int64_t j = 0; j < n; ++j)                                        \
          row[j * c_s1] += scale * b_row[j * bj];                              \
      }                                                                        \
    }                                                                          \
  }

SOAC_MATMUL(soac_matmul_f64, double, registered_dgemm)
SOAC_MATMUL(soac_matmul_f32, float, registered_sgemm)
