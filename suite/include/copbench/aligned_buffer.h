// A page-aligned message buffer, the way IMB and OSU allocate theirs: used by echo,
// bandwidth and ring (suite/bench) and by the backends' bare echo loops, so both sides of
// `copbench run overhead` send from and receive into the same kind of memory.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <span>

namespace copbench {

// A message buffer aligned to a page, as IMB and OSU allocate theirs, so a message does
// not straddle a page more than it must and two buffers never share a cache line.
class AlignedBuffer {
 public:
  // Filled with payload()'s pattern for `seed`.
  explicit AlignedBuffer(std::size_t bytes, int seed = 0) : size_(bytes) {
    void* p = nullptr;
    // At least one byte, so even a 0-byte message has an address of its own.
    if (::posix_memalign(&p, page_size(), std::max<std::size_t>(bytes, 1)) != 0) throw std::bad_alloc();
    data_ = static_cast<std::byte*>(p);
    for (std::size_t i = 0; i < bytes; ++i)
      data_[i] = static_cast<std::byte>((i * 31 + static_cast<std::size_t>(seed)) & 0xff);
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(data_); }
  std::span<std::byte> span() { return {data_, size_}; }
  std::span<const std::byte> span() const { return {data_, size_}; }
  std::byte* data() { return data_; }
  std::size_t size() const { return size_; }
  static std::size_t page_size() {
    static const std::size_t page = [] {
      long p = ::sysconf(_SC_PAGESIZE);
      return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
    }();
    return page;
  }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace copbench
