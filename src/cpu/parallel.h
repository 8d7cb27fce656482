// Multi-threading of CPU kernels: OpenMP over contiguous chunks, used only
// when the work is large enough to pay for waking threads.
#pragma once

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace hetkern {
namespace cpu {

// Threads the CPU kernels may use: hetkern::set_num_threads, else
// HETKERN_NUM_THREADS, else OpenMP's default (OMP_NUM_THREADS or all cores).
int NumThreads();

// Runs fn(begin, end) over [0, n) split into one contiguous chunk per thread,
// each at least `min_chunk` items and starting at a multiple of `align` items
// (keeps SIMD loops and cache lines of different threads apart). Runs on the
// calling thread alone when n < 2 * min_chunk, when n < min_parallel (a call
// too small to pay for waking any thread, however small the chunks it may
// then take) or when one thread is set. fn must not throw.
template <class Fn>
void ParallelFor(int64_t n, int64_t min_chunk, int64_t align, const Fn& fn, int64_t min_parallel = 0) {
  const int64_t threads =
      n < min_parallel ? 1 : std::min<int64_t>(NumThreads(), n / std::max<int64_t>(min_chunk, 1));
  if (threads <= 1) {
    fn(int64_t{0}, n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const auto bound = [&](int64_t i) { return i == nt ? n : (n * i / nt) / align * align; };
    const int64_t begin = bound(t), end = bound(t + 1);
    if (begin < end) fn(begin, end);
  }
#else
  fn(int64_t{0}, n);
#endif
}

}  // namespace cpu
}  // namespace hetkern
