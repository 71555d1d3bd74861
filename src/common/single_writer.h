// A value that one thread writes and others read (per-worker counters read by the control
// thread): a std::atomic accessed with relaxed order, so the cross-thread read is defined
// behaviour, while the single writer updates it with a plain load + store, never a locked
// read-modify-write (on x86-64 both compile to ordinary moves). Copying takes a snapshot, so
// structs of them stay copyable.
#pragma once

#include <atomic>

namespace xvs {

template <typename T>
class SingleWriter {
    static_assert(std::atomic<T>::is_always_lock_free);

  public:
    constexpr SingleWriter(T value = T{}) noexcept : value_(value) {}  // NOLINT: implicit by design
    SingleWriter(const SingleWriter& other) noexcept : value_(other.load()) {}
    SingleWriter& operator=(const SingleWriter& other) noexcept {
        store(other.load());
        return *this;
    }
    SingleWriter& operator=(T value) noexcept {
        store(value);
        return *this;
    }

    [[gnu::always_inline]] T load() const noexcept {
        return value_.load(std::memory_order_relaxed);
    }
    [[gnu::always_inline]] void store(T value) noexcept {
        value_.store(value, std::memory_order_relaxed);
    }
    operator T() const noexcept { return load(); }  // NOLINT: reads like the plain value

    // Writer side only: not atomic as a whole, which is fine with a single writer. Always
    // inline: it is two moves, and GCC left it a call (with the caller's spills) on the
    // forwarding path's counters once the calling function grew large.
    [[gnu::always_inline]] SingleWriter& operator+=(T delta) noexcept {
        store(static_cast<T>(load() + delta));
        return *this;
    }
    [[gnu::always_inline]] SingleWriter& operator-=(T delta) noexcept {
        store(static_cast<T>(load() - delta));
        return *this;
    }
    [[gnu::always_inline]] SingleWriter& operator++() noexcept { return *this += T{1}; }
    [[gnu::always_inline]] SingleWriter& operator--() noexcept { return *this -= T{1}; }

  private:
    std::atomic<T> value_;
};

}  // namespace xvs
