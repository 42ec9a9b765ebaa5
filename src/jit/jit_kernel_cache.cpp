// SPDX-License-Identifier: Apache-2.0
// kernel_cache_t: an lru_map_t under one mutex; each entry is a shared_future, so concurrent
// requests for one key wait on a single generation.
#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <new>

#include "core/utils.hpp"
#include "jit/jit_kernel_cache.hpp"

namespace blockdnn::impl {

namespace {
thread_local kernel_recorder_t *innermost_recorder = nullptr;
} // namespace

kernel_recorder_t::kernel_recorder_t() : outer_(innermost_recorder) { innermost_recorder = this; }

kernel_recorder_t::~kernel_recorder_t() { innermost_recorder = outer_; }

void kernel_recorder_t::note(const std::string &key, const kernel_ptr &k) {
    for (kernel_recorder_t *r = innermost_recorder; r; r = r->outer_) {
        if (std::find(r->keys_.begin(), r->keys_.end(), key) != r->keys_.end()) continue;
        r->keys_.push_back(key);
        r->kernels_.push_back(k);
    }
}

kernel_cache_t::result_t kernel_cache_t::generate(const factory_t &make) {
    result_t r;
    try {
        std::unique_ptr<jit_generator_t> k = make();
        r.st = k->create(r.why);
        if (r.st == status::success) r.kernel = std::move(k);
    } catch (const std::bad_alloc &) {
        r.st = status::out_of_memory;
        r.why = "out of memory while constructing a kernel";
    } catch (const Xbyak::Error &e) { // the code buffer's first allocation
        r.st = status::out_of_memory;
        r.why = std::string("Xbyak error while constructing a kernel: ") + e.what();
    }
    return r;
}

status kernel_cache_t::get(const std::string &key, const factory_t &make, kernel_ptr &out, std::string &why) {
    const status st = get_unrecorded(key, make, out, why);
    if (st == status::success && innermost_recorder) kernel_recorder_t::note(key, out);
    return st;
}

status kernel_cache_t::get_unrecorded(
        const std::string &key, const factory_t &make, kernel_ptr &out, std::string &why) {
    std::unique_lock<std::mutex> lock(m_);
    if (!config_error_.empty()) {
        why = config_error_;
        return status::invalid_arguments;
    }
    if (entries_.capacity() == 0) {
        ++stats_.misses;
        lock.unlock();
        result_t r = generate(make);
        out = r.kernel;
        why = r.why;
        return r.st;
    }
    if (const std::shared_future<result_t> *held = entries_.find(key)) {
        ++stats_.hits;
        std::shared_future<result_t> f = *held;
        lock.unlock();
        const result_t &r = f.get(); // waits if another thread is still generating it
        out = r.kernel;
        why = r.why;
        return r.st;
    }
    ++stats_.misses;
    std::promise<result_t> promise;
    std::shared_future<result_t> mine = promise.get_future().share();
    stats_.evictions += entries_.insert(key, mine);
    lock.unlock();

    promise.set_value(generate(make));
    const result_t &r = mine.get();
    if (r.st != status::success) {
        // Forget the failure (if the entry is still ours) so a later request tries again.
        std::lock_guard<std::mutex> relock(m_);
        entries_.erase(key);
    }
    out = r.kernel;
    why = r.why;
    return r.st;
}

void kernel_cache_t::set_capacity(std::size_t capacity) {
    std::lock_guard<std::mutex> lock(m_);
    stats_.evictions += entries_.set_capacity(capacity);
}

std::size_t kernel_cache_t::capacity() const {
    std::lock_guard<std::mutex> lock(m_);
    return entries_.capacity();
}

std::size_t kernel_cache_t::size() const {
    std::lock_guard<std::mutex> lock(m_);
    return entries_.size();
}

void kernel_cache_t::clear() {
    std::lock_guard<std::mutex> lock(m_);
    entries_.clear();
}

kernel_cache_t::stats_t kernel_cache_t::stats() const {
    std::lock_guard<std::mutex> lock(m_);
    return stats_;
}

bool parse_kernel_cache_capacity(const char *text, std::size_t &capacity, std::string &why) {
    if (!text || !*text) {
        why = "empty value";
        return false;
    }
    for (const char *p = text; *p; ++p)
        if (*p < '0' || *p > '9') {
            why = cat("'", text, "' is not a non-negative decimal integer");
            return false;
        }
    errno = 0;
    const unsigned long long v = std::strtoull(text, nullptr, 10);
    if (errno == ERANGE || v >= (1ull << 31)) {
        why = cat("'", text, "' is too large (at most ", (1ull << 31) - 1, ")");
        return false;
    }
    capacity = static_cast<std::size_t>(v);
    return true;
}

kernel_cache_t &kernel_cache() {
    struct env_config_t {
        std::size_t capacity = default_kernel_cache_capacity;
        std::string error;
    };
    static const env_config_t env = [] {
        env_config_t e;
        std::string why;
        const char *v = std::getenv("BLOCKDNN_KERNEL_CACHE_CAPACITY");
        if (v && !parse_kernel_cache_capacity(v, e.capacity, why)) {
            e.capacity = 0;
            e.error = cat("BLOCKDNN_KERNEL_CACHE_CAPACITY: ", why);
        }
        return e;
    }();
    static kernel_cache_t cache(env.capacity, env.error);
    return cache;
}

} // namespace blockdnn::impl
