#include "src/cpu/parallel.h"

#include <tvm/ffi/error.h>

#include <atomic>
#include <cstdlib>

#include "hetkern/hetkern.h"

namespace hetkern {
namespace cpu {
namespace {

int DefaultThreads() {
  if (const char* env = std::getenv("HETKERN_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

std::atomic<int> g_threads{0};  // 0: not set, use DefaultThreads()

}  // namespace

int NumThreads() {
  const int n = g_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  static const int default_threads = DefaultThreads();
  return default_threads;
}

}  // namespace cpu

int num_threads() { return cpu::NumThreads(); }

void set_num_threads(int n) {
  if (n < 0) TVM_FFI_THROW(ValueError) << "hetkern.set_num_threads: 'n' is " << n << "; expected >= 1, or 0 for the default";
  cpu::g_threads.store(n, std::memory_order_relaxed);
}

}  // namespace hetkern
