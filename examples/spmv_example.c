/* Smallest complete use of the C API: a 1D Laplacian, planned once, executed, checked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <spmvjit/spmvjit.h>

int main(void) {
  enum { n = 1000 };
  int32_t* rp = malloc(sizeof(int32_t) * (n + 1));
  int32_t* ci = malloc(sizeof(int32_t) * 3 * n);
  double* va = malloc(sizeof(double) * 3 * n);
  double x[n], y[n];
  int32_t k = 0;
  for (int i = 0; i < n; ++i) {
    rp[i] = k;
    for (int j = i - 1; j <= i + 1; ++j)
      if (j >= 0 && j < n) ci[k] = j, va[k++] = (i == j) ? 2.0 : -1.0;
    x[i] = 1.0;
  }
  rp[n] = k;
  spmv_csr_t a = {n, n, k, rp, ci, va, SPMV_INDEX_INT32, SPMV_VALUE_DOUBLE, 0, SPMV_MEMORY_HOST};
  spmv_options_t opt;
  spmv_options_init(&opt);
  opt.backend = SPMV_BACKEND_CPU;
  spmv_plan_t plan;
  if (spmv_plan(&plan, &a, &opt) != SPMV_STATUS_SUCCESS) {
    fprintf(stderr, "spmv_plan: %s\n", spmv_last_error());
    return 1;
  }
  const double alpha = 1.0, beta = 0.0;
  if (spmv_execute(plan, &alpha, x, &beta, y, NULL) != SPMV_STATUS_SUCCESS) {
    fprintf(stderr, "spmv_execute: %s\n", spmv_last_error());
    return 1;
  }
  /* A * ones = 1 at both ends, 0 inside. */
  int bad = fabs(y[0] - 1.0) > 0 || fabs(y[n - 1] - 1.0) > 0 || fabs(y[n / 2]) > 0;
  printf("spmv_example: y[0]=%g y[n/2]=%g y[n-1]=%g %s\n", y[0], y[n / 2], y[n - 1], bad ? "WRONG" : "ok");
  spmv_plan_destroy(plan);
  free(rp), free(ci), free(va);
  return bad;
}
