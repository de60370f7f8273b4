// GPU CSR-adaptive kernels (CSR arrays + plan-time row blocks, Greathouse & Daga style).
// spmvjit_part_<e>: one block per row block (<= ROWS rows, <= S nonzeros). A row block averaging
// under 2 nonzeros per row is summed thread-per-row straight from global memory (each thread up
// to ROWS / BLOCK rows, their first two entries loaded before the sums): for rows that short, neighbouring
// threads read neighbouring nonzeros, so the loads are coalesced without the shared-memory round trip.
// Otherwise the block streams the block's nonzeros with 16-byte loads (fully coalesced whatever
// the row lengths), stores the products in shared memory, then sums each row with a lane group
// sized to the rows per block (1..32 lanes; the whole block when the row block is one row; one
// thread per row, several rows per thread, past BLOCK rows). A row longer than S is its own row
// block: the stream step only applies beta to it (y = beta*y, or 0 when beta == 0).
// spmvjit_long_<e>: one block per chunk of S nonzeros of a long row; the block sum is added to
// y with one atomicAdd (alpha applied), after the stream step applied beta. It is launched early
// (programmatic dependent launch, sm_90+): its blocks stream and sum their chunk in the stream
// step's tail and wait for that step only before the atomic.
// With COL_BITS 16 the column indices are 16-bit offsets from each row block's or chunk's base
// column (col_base): 2 bytes per entry instead of 4 or 8.
// Launch: stream grid n[ADAPTIVE_N_BLOCKS], long grid n[ADAPTIVE_N_CHUNKS], blocks of ADAPTIVE_BLOCK.
#include "../contract/csr_adaptive.h"
#include "prelude.h"

#ifndef SPMVJIT_COL_BITS
#define SPMVJIT_COL_BITS 0
#endif

namespace adaptive {

#if SPMVJIT_COL_BITS == 16
typedef unsigned short col_t;  // offset from the segment's base column
// Segment s's base column: row block s, or chunk s - n[ADAPTIVE_N_BLOCKS].
SPMVJIT_DEVICE i64 col_base(const SpmvArgs& a, i64 s) {
  return spmvjit_ldg((const I*)a.a[ADAPTIVE_COL_BASE] + s);
}
#elif SPMVJIT_COL_BITS == 0
typedef I col_t;
SPMVJIT_DEVICE i64 col_base(const SpmvArgs&, i64) { return 0; }
#else
#error "SPMVJIT_COL_BITS must be 0 or 16"
#endif

constexpr int kBlock = ADAPTIVE_BLOCK;
constexpr int kRows = ADAPTIVE_GPU_ROWS;  // rows per row block at most
constexpr int kRowsPerThread = (kRows + kBlock - 1) / kBlock;
constexpr i64 kS = ADAPTIVE_S;
constexpr int kVec = 16 / int(sizeof(V));                           // entries per 16-byte load
constexpr int kUnits = int((kS / kVec + 1 + kBlock - 1) / kBlock);  // loads per thread (<= S span)

// N consecutive T from p (aligned to sizeof(T) * N) with the widest streaming loads.
template <class T, int N>
SPMVJIT_DEVICE void load_pack(const T* p, T (&out)[N]) {
  constexpr int B = int(sizeof(T)) * N;
  if constexpr (B % 16 == 0) {
    union {
      uint4 u[B / 16];
      T v[N];
    } w;
#pragma unroll
    for (int i = 0; i < B / 16; ++i) w.u[i] = spmvjit_ld_stream((const uint4*)p + i);
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = w.v[i];
  } else if constexpr (B == 4) {
    union {
      unsigned int u;
      T v[N];
    } w;
    w.u = spmvjit_ld_stream((const unsigned int*)p);
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = w.v[i];
  } else if constexpr (B == 8) {
    union {
      uint2 u;
      T v[N];
    } w;
    w.u = spmvjit_ld_stream((const uint2*)p);
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = w.v[i];
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = spmvjit_ld_stream(p + i);
  }
}
#if SPMVJIT_VALUE_CODEC != SPMVJIT_VALUES_PLAIN
// Compressed values (templates/gpu/values.cuh): N codes, or the uniform value, one by one.
template <int N>
SPMVJIT_DEVICE void load_pack(const spmvjit_values_t p, V (&out)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = spmvjit_ld_stream(p + i);
}
#endif

// Calls f(k, values[k] * x[cb + col[k]]) for every k in [k0, k1) (k1 - k0 <= S), each k once,
// spread over the block: all loads of a thread are issued before the first gather, the gathers
// before the first product. cb is the segment's base column (0 without COL_BITS).
template <class F>
SPMVJIT_DEVICE void for_products(const col_t* SPMVJIT_RESTRICT ci,
                                 spmvjit_values_t SPMVJIT_VALUES_RESTRICT va, const V* SPMVJIT_RESTRICT x,
                                 i64 cb, i64 k0, i64 k1, F&& f) {
  const i64 base = k0 & ~i64(kVec - 1);
  V vv[kUnits][kVec];
  col_t cc[kUnits][kVec];
#pragma unroll
  for (int j = 0; j < kUnits; ++j) {
    const i64 k = base + (i64(threadIdx.x) + i64(j) * kBlock) * kVec;
    if (k < k1) {
      load_pack(va + k, vv[j]);
      load_pack(ci + k, cc[j]);
    }
  }
  V xv[kUnits][kVec];
#pragma unroll
  for (int j = 0; j < kUnits; ++j)
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const i64 k = base + (i64(threadIdx.x) + i64(j) * kBlock) * kVec + i;
      xv[j][i] = (k >= k0 && k < k1) ? spmvjit_ldg(x + (cb + i64(cc[j][i]))) : V(0);
    }
#pragma unroll
  for (int j = 0; j < kUnits; ++j)
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const i64 k = base + (i64(threadIdx.x) + i64(j) * kBlock) * kVec + i;
      if (k >= k0 && k < k1) f(k, vv[j][i] * xv[j][i]);
    }
}

// Sum of s over the block, valid in thread 0. `ws` holds one slot per warp.
SPMVJIT_DEVICE V block_sum(V s, V* ws) {
  for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) s += spmvjit_shfl_down(s, d);
  if (spmvjit_lane() == 0) ws[threadIdx.x / SPMVJIT_WARP] = s;
  spmvjit_sync_block();
  V t = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kBlock / SPMVJIT_WARP; ++w) t += ws[w];
  return t;
}

}  // namespace adaptive

// Rows [r0, r0 + nrows) thread-per-row from global memory (the row block averages < 2 nonzeros
// per row): all row bounds, then all first two entries, are loaded before any sum.
template <int E>
SPMVJIT_DEVICE void adaptive_thin(const SpmvArgs& a, i64 cb, i64 r0, i64 nrows) {
  using namespace adaptive;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_ROW_PTR];
  const col_t* SPMVJIT_RESTRICT ci = (const col_t*)a.a[ADAPTIVE_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, ADAPTIVE_VALUES);
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  i64 kb[kRowsPerThread], ke[kRowsPerThread];
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j) {
    const i64 row = i64(threadIdx.x) + i64(j) * kBlock;
    kb[j] = ke[j] = 0;
    if (row < nrows) kb[j] = spmvjit_ldg(rp + r0 + row), ke[j] = spmvjit_ldg(rp + r0 + row + 1);
  }
  V s[kRowsPerThread];
  // Every row's first two entries (most rows of a thin block have at most two), all loads issued
  // before the first product (3.5% off short:8000000:2 on an H100 against the first entry alone).
  V v[kRowsPerThread][2], xv[kRowsPerThread][2];
  col_t c[kRowsPerThread][2];
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (kb[j] + h < ke[j])
        v[j][h] = spmvjit_ld_stream(va + kb[j] + h), c[j][h] = spmvjit_ld_stream(ci + kb[j] + h);
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) xv[j][h] = kb[j] + h < ke[j] ? spmvjit_ldg(x + (cb + i64(c[j][h]))) : V(0);
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j) {
    s[j] = kb[j] < ke[j] ? v[j][0] * xv[j][0] : V(0);
    if (kb[j] + 1 < ke[j]) s[j] += v[j][1] * xv[j][1];
  }
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j) {
    for (i64 k = kb[j] + 2; k < ke[j]; ++k)
      s[j] += spmvjit_ld_stream(va + k) * spmvjit_ldg(x + (cb + i64(spmvjit_ld_stream(ci + k))));
    const i64 row = i64(threadIdx.x) + i64(j) * kBlock;
    if (row < nrows) y[r0 + row] = spmvjit_epilogue<E>(s[j], y, r0 + row, alpha, beta);
  }
}

template <int E>
SPMVJIT_DEVICE void adaptive_stream(const SpmvArgs& a) {
  using namespace adaptive;
  SPMVJIT_SHARED V prod[kS];
  // Row offsets from k0 (<= S) in 16 bits: the block's shared memory then stays under a fifth of
  // the 100 KB carveout, so five blocks per SM leave the L1 its largest share for the x gathers
  // (H100: forcing the 228 KB carveout made random-2M 34% slower).
  static_assert(kS <= 65535, "16-bit row offsets");
  SPMVJIT_SHARED unsigned short rps[kRows + 1];
  SPMVJIT_SHARED V ws[kBlock / SPMVJIT_WARP];
  SPMVJIT_SHARED int wide[kS / (SPMVJIT_WARP + 1) + 1];  // rows queued for a warp
  SPMVJIT_SHARED int nwide;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_ROW_PTR];
  const col_t* SPMVJIT_RESTRICT ci = (const col_t*)a.a[ADAPTIVE_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, ADAPTIVE_VALUES);
  const I* SPMVJIT_RESTRICT blk = (const I*)a.a[ADAPTIVE_ROW_BLOCKS];
  const I* SPMVJIT_RESTRICT bnz = (const I*)a.a[ADAPTIVE_BLOCK_NNZ];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  V* y = (V*)a.y;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  const int t = int(threadIdx.x);
  spmvjit_grid_launch_dependents();  // the long step's blocks may fill this step's tail
  // Independent loads: the block's rows, nonzeros and base column come in one memory round trip.
  const i64 r0 = spmvjit_ldg(blk + blockIdx.x), r1 = spmvjit_ldg(blk + blockIdx.x + 1);
  const i64 k0 = spmvjit_ldg(bnz + blockIdx.x), k1 = spmvjit_ldg(bnz + blockIdx.x + 1);
  const i64 cb = col_base(a, blockIdx.x);
  const int nrows = int(r1 - r0);
  if (k1 - k0 > kS) {  // a long row (alone in its row block): the long step adds its sum
    if (t == 0) y[r0] = spmvjit_beta_zero<E>(beta) ? V(0) : beta * y[r0];
    return;
  }
  if (k1 - k0 < 2 * nrows) {  // uniform per block: every thread takes the same branch
    adaptive_thin<E>(a, cb, r0, nrows);
    return;
  }
  // Row bounds are loaded with the stream (registers), stored to shared memory after it, as
  // offsets from k0.
  I rv[kRowsPerThread];
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j) {
    const int i = t + j * kBlock;
    if (i < nrows) rv[j] = spmvjit_ldg(rp + r0 + i);
  }
  for_products(ci, va, x, cb, k0, k1, [&](i64 k, V p) { prod[k - k0] = p; });
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j) {
    const int i = t + j * kBlock;
    if (i < nrows) rps[i] = (unsigned short)(i64(rv[j]) - k0);
  }
  if (t == 0) rps[nrows] = (unsigned short)(k1 - k0), nwide = 0;
  spmvjit_sync_block();
  if (nrows == 1) {
    V s = 0;
    for (int i = t; i < int(k1 - k0); i += kBlock) s += prod[i];
    s = block_sum(s, ws);
    if (t == 0) y[r0] = spmvjit_epilogue<E>(s, y, r0, alpha, beta);
    return;
  }
  // Lane groups: the largest power of two <= 32 lanes per row with nrows groups fitting in the
  // block (1 past BLOCK / 32 rows: a thread per row, several rows per thread past BLOCK). A row
  // longer than 32 times its group is queued for a whole warp instead, so one long row among
  // many short ones does not hold the block.
  int tpr = SPMVJIT_WARP;
  while (tpr > 1 && tpr * nrows > kBlock) tpr >>= 1;
  bool queued = false;
  if (tpr == 1) {
    for (int row = t; row < nrows; row += kBlock) {
      const int b = rps[row], e = rps[row + 1];
      if (e - b > SPMVJIT_WARP) {
        wide[spmvjit_atomic_inc_shared(&nwide)] = row, queued = true;
        continue;
      }
      V s = 0;
      for (int k = b; k < e; ++k) s += prod[k];
      y[r0 + row] = spmvjit_epilogue<E>(s, y, r0 + row, alpha, beta);
    }
  } else {  // at most one row per group: every lane reaches the shuffles
    const int row = t / tpr, g = t & (tpr - 1);
    const int b = row < nrows ? rps[row] : 0, e = row < nrows ? rps[row + 1] : 0;
    const bool w = tpr < SPMVJIT_WARP && e - b > SPMVJIT_WARP * tpr;
    V s = 0;
    if (!w)
      for (int k = b + g; k < e; k += tpr) s += prod[k];
    for (int d = tpr / 2; d > 0; d >>= 1) s += spmvjit_shfl_down(s, d);
    if (g == 0 && row < nrows) {
      if (w)
        wide[spmvjit_atomic_inc_shared(&nwide)] = row, queued = true;
      else
        y[r0 + row] = spmvjit_epilogue<E>(s, y, r0 + row, alpha, beta);
    }
  }
  if (!spmvjit_sync_block_or(queued)) return;
  // Queued rows, one warp each (each row's sum in a fixed order whatever the queue order).
  const int lane = spmvjit_lane();
  for (int i = t / SPMVJIT_WARP; i < nwide; i += kBlock / SPMVJIT_WARP) {
    const int row = wide[i], e = rps[row + 1];
    V s = 0;
    for (int k = rps[row] + lane; k < e; k += SPMVJIT_WARP) s += prod[k];
    for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) s += spmvjit_shfl_down(s, d);
    if (lane == 0) y[r0 + row] = spmvjit_epilogue<E>(s, y, r0 + row, alpha, beta);
  }
}

namespace adaptive {
// Chunk blockIdx.x of a long row: the block's sum of its products (in thread 0) and its row.
SPMVJIT_DEVICE V chunk_sum(const SpmvArgs& a, V* ws, i64* row) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[ADAPTIVE_ROW_PTR];
  const col_t* SPMVJIT_RESTRICT ci = (const col_t*)a.a[ADAPTIVE_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, ADAPTIVE_VALUES);
  const I* SPMVJIT_RESTRICT crow = (const I*)a.a[ADAPTIVE_CHUNK_ROW];
  const I* SPMVJIT_RESTRICT cstart = (const I*)a.a[ADAPTIVE_CHUNK_START];
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  const i64 r = spmvjit_ldg(crow + blockIdx.x);
  const i64 ks = spmvjit_ldg(cstart + blockIdx.x);
  const i64 re = spmvjit_ldg(rp + r + 1);
  const i64 cb = col_base(a, a.n[ADAPTIVE_N_BLOCKS] + blockIdx.x);
  const i64 ke = ks + kS < re ? ks + kS : re;
  V s = 0;
  for_products(ci, va, x, cb, ks, ke, [&](i64, V p) { s += p; });
  *row = r;
  return block_sum(s, ws);
}
}  // namespace adaptive

template <int E>
SPMVJIT_DEVICE void adaptive_long(const SpmvArgs& a) {
  SPMVJIT_SHARED V ws[adaptive::kBlock / SPMVJIT_WARP];
  i64 r;
  const V s = adaptive::chunk_sum(a, ws, &r);
  if (threadIdx.x == 0) {
    spmvjit_grid_wait();  // launched early: the row-block step must have applied beta to y[r]
    spmvjit_atomic_add((V*)a.y + r, spmvjit_alpha_one<E>(spmvjit_alpha(a)) ? s : spmvjit_alpha(a) * s);
  }
}

// Deterministic mode (DETERMINISTIC = 1 in the plan's params; same module): spmvjit_long_part
// writes each chunk's sum to scratch[chunk], and spmvjit_long_sum gives each long row's first
// chunk a warp that adds the row's chunk sums in a fixed order (lane strides, then a shuffle
// tree) and y[r] += alpha * sum: bitwise the same on every run, no atomics.
template <int E>
SPMVJIT_DEVICE void adaptive_long_part(const SpmvArgs& a) {
  SPMVJIT_SHARED V ws[adaptive::kBlock / SPMVJIT_WARP];
  spmvjit_grid_launch_dependents();  // spmvjit_long_sum may start; it waits for this step's end
  i64 r;
  const V s = adaptive::chunk_sum(a, ws, &r);
  if (threadIdx.x == 0) {
    // Launched early: wait for the row-block step, so that this step's end implies its end
    // (spmvjit_long_sum waits only for this one before it adds into y).
    spmvjit_grid_wait();
    ((V*)a.scratch)[blockIdx.x] = s;
  }
}

template <int E>
SPMVJIT_DEVICE void adaptive_long_sum(const SpmvArgs& a) {
  const I* SPMVJIT_RESTRICT crow = (const I*)a.a[ADAPTIVE_CHUNK_ROW];
  const i64 nc = a.n[ADAPTIVE_N_CHUNKS];
  const i64 c = (i64(blockIdx.x) * blockDim.x + threadIdx.x) / SPMVJIT_WARP;
  if (c >= nc) return;
  const i64 r = spmvjit_ldg(crow + c);
  if (c > 0 && i64(spmvjit_ldg(crow + c - 1)) == r) return;  // not the row's first chunk
  spmvjit_grid_wait();  // launched early: the chunk sums are the previous step's
  const V* sums = (const V*)a.scratch;
  V s = 0;
  for (i64 u = c + spmvjit_lane(); u < nc && i64(spmvjit_ldg(crow + u)) == r; u += SPMVJIT_WARP) s += sums[u];
  for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) s += spmvjit_shfl_down(s, d);
  V* y = (V*)a.y;
  if (spmvjit_lane() == 0) y[r] += spmvjit_alpha_one<E>(spmvjit_alpha(a)) ? s : spmvjit_alpha(a) * s;
}

SPMVJIT_EXPORT_KERNEL(adaptive_stream, spmvjit_part, ADAPTIVE_BLOCK)
SPMVJIT_EXPORT_KERNEL(adaptive_long, spmvjit_long, ADAPTIVE_BLOCK)
SPMVJIT_EXPORT_KERNEL(adaptive_long_part, spmvjit_long_part, ADAPTIVE_BLOCK)
SPMVJIT_EXPORT_KERNEL(adaptive_long_sum, spmvjit_long_sum, ADAPTIVE_BLOCK)
