// Zero-filled arrays for the search's large tables, asking Linux for
// transparent huge pages (madvise MADV_HUGEPAGE): the state table is probed
// at random, and with 4 KiB pages nearly every probe also misses the TLB.
// Small searches do not ask: a huge page is zeroed whole on first touch.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace nvmesim::platform::verify {

template <class T>
class BigArray {
 public:
  BigArray() = default;
  static constexpr size_t kHugePage = size_t(2) << 20;
  BigArray(size_t count, bool huge_pages) : count_(count) {
    bytes_ = count * sizeof(T);
#ifdef __linux__
    if (huge_pages) {
      bytes_ = (bytes_ + kHugePage - 1) / kHugePage * kHugePage;
      void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      madvise(p, bytes_, MADV_HUGEPAGE);  // advice only: without it the pages are small
      data_ = static_cast<T*>(p);
      mapped_ = true;
      return;
    }
#endif
    (void)huge_pages;
    data_ = static_cast<T*>(std::calloc(bytes_ ? bytes_ : 1, 1));
    if (!data_) throw std::bad_alloc();
  }
  ~BigArray() { release(); }
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;
  BigArray(BigArray&& o) noexcept { *this = std::move(o); }
  BigArray& operator=(BigArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_;
      count_ = o.count_;
      bytes_ = o.bytes_;
      mapped_ = o.mapped_;
      o.data_ = nullptr;
      o.count_ = o.bytes_ = 0;
    }
    return *this;
  }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return count_; }

 private:
  void release() {
    if (!data_) return;
#ifdef __linux__
    if (mapped_) {
      munmap(data_, bytes_);
      data_ = nullptr;
      return;
    }
#endif
    std::free(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  size_t count_ = 0, bytes_ = 0;
  bool mapped_ = false;
};

}  // namespace nvmesim::platform::verify
