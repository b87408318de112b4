#pragma once
// For the programs and benchmarks that measure wall time: not part of the library.

#if defined(__GLIBC__)
#include <malloc.h>  // mallopt
#endif

namespace harness {

/// Makes glibc keep freed memory in the heap, for timing at large n.
///
/// Each call of a timed function allocates its n × r matrices afresh. By default glibc gives
/// every block above 32 MiB back to the kernel when it is freed and maps a new one on the
/// next call, so each call pays a page fault per 4 KiB it touches; on the book's virtual
/// machine that costs more than the arithmetic. Does nothing without glibc.
inline void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);  // every block from the heap, none mapped separately
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace harness
