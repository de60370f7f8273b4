// sell_diag's value map read off its layout: two passes over the slices (each row's count, then
// the positions, a merge only where a row has both kinds of slot), balanced by stored slots,
// and a scan of the counts between.
#include "engine/formats/sell_diag_slots.hpp"

#include <atomic>
#include <vector>

#include "core/buffer.hpp"
#include "core/parallel.hpp"
#include "engine/formats/partition.hpp"

namespace spmvjit {
#include "templates/contract/sell_diag.h"

bool sell_diag_number_slots(const FormatData& d, const CsrRef& shape, const HeldSlots& held,
                            void* const* positions, size_t pos_bytes) {
  SPMVJIT_ASSERT(held.marks(), "sell_diag numbers its slots from marks");
  const int64_t c = d.params.at("C"), slices = d.ints[SELL_DIAG_N_SLICES], rows = shape.rows;
  const int64_t* dp = d.arrays[SELL_DIAG_DIAG_PTR].buf.as<int64_t>();
  const int64_t* rp = d.arrays[SELL_DIAG_REM_PTR].buf.as<int64_t>();
  const std::vector<int64_t> base = value_slot_bases(d);
  const uint8_t* hd = held.marks() + base[SELL_DIAG_DIAG_VALUES];
  const uint8_t* hr = held.marks() + base[SELL_DIAG_REM_VALUES];
  const int threads = plan_threads(dp[slices] * c + rp[slices] + rows);
  const std::vector<int64_t> split =
      split_prefix(slices, threads, [&](int64_t u) { return dp[u] * c + rp[u] + u * c; });
  return dispatch_index(shape.index, [&]<class I>() {
    const I* off = d.arrays[SELL_DIAG_DIAG_OFFSET].buf.template as<I>();
    const I* rc = d.arrays[SELL_DIAG_REM_COL].buf.template as<I>();
    HostVector<int64_t> start(size_t(rows) + 1);
    start[0] = 0;
    std::atomic<bool> ok{true};
    parallel_for(threads, threads, [&](int64_t t, int64_t, int) {
      bool bad = false;
      for (int64_t s = split[size_t(t)]; s < split[size_t(t) + 1]; ++s) {
        for (int64_t j = dp[s] + 1; j < dp[s + 1]; ++j) bad |= off[j - 1] >= off[j];
        const int64_t width = (rp[s + 1] - rp[s]) / c;
        for (int64_t i = 0; i < c; ++i) {
          int64_t n = 0;
          for (int64_t j = dp[s]; j < dp[s + 1]; ++j) n += hd[j * c + i] != 0;
          for (int64_t q = 0; q < width; ++q) n += hr[rp[s] + q * c + i] != 0;
          if (s * c + i < rows)
            start[size_t(s * c + i) + 1] = n;
          else
            bad |= n != 0;  // positions past the matrix's rows hold nothing
        }
      }
      if (bad) ok = false;
    });
    if (!ok) return false;
    parallel_prefix_sum(start.data() + 1, rows);
    if (start[size_t(rows)] != shape.nnz) return false;
    with_position_type(pos_bytes, [&]<class P>() {
      P* od = static_cast<P*>(positions[SELL_DIAG_DIAG_VALUES]);
      P* orm = static_cast<P*>(positions[SELL_DIAG_REM_VALUES]);
      parallel_for(threads, threads, [&](int64_t t, int64_t, int) {
        for (int64_t s = split[size_t(t)]; s < split[size_t(t) + 1]; ++s) {
          const int64_t width = (rp[s + 1] - rp[s]) / c;
          for (int64_t i = 0; i < c; ++i) {
            const int64_t row = s * c + i;
            int64_t next = row < rows ? start[size_t(row)] : 0;
            int64_t j = dp[s], q = 0;
            // Padding first (-1), then the row's held slots in column order.
            for (int64_t u = dp[s]; u < dp[s + 1]; ++u) od[u * c + i] = P(-1);
            for (int64_t v = 0; v < width; ++v) orm[rp[s] + v * c + i] = P(-1);
            auto next_diag = [&] {
              while (j < dp[s + 1] && !hd[j * c + i]) ++j;
            };
            auto next_rem = [&] {
              while (q < width && !hr[rp[s] + q * c + i]) ++q;
            };
            next_diag();
            next_rem();
            while (j < dp[s + 1] || q < width) {
              const bool diag =
                  q >= width || (j < dp[s + 1] && row + int64_t(off[j]) < int64_t(rc[rp[s] + q * c + i]));
              if (diag) {
                od[j * c + i] = P(next++);
                ++j;
                next_diag();
              } else {
                orm[rp[s] + q * c + i] = P(next++);
                ++q;
                next_rem();
              }
            }
          }
        }
      });
    });
    return true;
  });
}

}  // namespace spmvjit
