// SPDX-License-Identifier: Apache-2.0
#include "core/memory.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <sys/mman.h>

#include "blockdnn/status.hpp"
#include "core/utils.hpp"

namespace blockdnn::impl {

namespace {

struct huge_pages_env_t {
    bool on = true;
    std::string error; // a value that is not 0 or 1
};

const huge_pages_env_t &huge_pages_env() {
    static const huge_pages_env_t env = [] {
        huge_pages_env_t e;
        const char *v = std::getenv("BLOCKDNN_HUGE_PAGES");
        if (!v || !*v || std::string(v) == "1") return e;
        if (std::string(v) == "0") e.on = false;
        else e.error = cat("BLOCKDNN_HUGE_PAGES: '", v, "' is not 0 or 1");
        return e;
    }();
    return env;
}

// Whether a buffer of `bytes` is a huge-page mapping: alloc_memory and free_memory both ask
// here, so they agree. No throw (free_memory runs in destructors; alloc_memory checks the
// environment first).
bool is_huge(std::size_t bytes) { return bytes >= huge_page_bytes && huge_pages_env().on; }

std::size_t huge_len(std::size_t bytes) { return (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes; }

// x86-64's base page: what the last bytes of a huge buffer take when the offset pushes them past
// its huge pages.
constexpr std::size_t small_page_bytes = 4096;

// Bytes of a huge buffer's mapping from its huge-page boundary: the huge pages huge_len(bytes)
// rounds to, and a small page beyond them if the offset pushes the buffer's end past them (a
// buffer of whole huge pages would otherwise take one more huge page for its last bytes).
// 0 where the sizes overflow. map_huge and free_memory both ask here, so they agree.
std::size_t huge_mapping_len(std::size_t bytes) {
    const std::size_t huge = huge_len(bytes), end = bytes + huge_buffer_offset;
    if (huge < bytes || end < bytes) return 0;
    const std::size_t len = end <= huge ? huge : huge + small_page_bytes;
    return len < huge ? 0 : len;
}

// A mapping of its own, trimmed to start on a huge-page boundary, the buffer huge_buffer_offset
// past it: placement that does not depend on what the heap did before (glibc serves large
// blocks from the heap once earlier ones were freed, at whatever offsets it has).
void *map_huge(std::size_t bytes) {
    const std::size_t len = huge_mapping_len(bytes);
    if (!len || len + huge_page_bytes < len) return nullptr; // size_t overflow
    void *m = mmap(nullptr, len + huge_page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    const auto base = reinterpret_cast<std::uintptr_t>(m);
    const std::uintptr_t start = (base + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    const std::size_t head = start - base, tail = huge_page_bytes - head;
    if (head) munmap(m, head);
    if (tail) munmap(reinterpret_cast<void *>(start + len), tail);
    void *p = reinterpret_cast<void *>(start);
    // Advice is best effort: without THP the buffer stays on small pages. A small page past the
    // huge ones is not advised: it stays small.
    (void)madvise(p, huge_len(bytes), MADV_HUGEPAGE);
    return static_cast<char *>(p) + huge_buffer_offset;
}

} // namespace

bool huge_pages_enabled() {
    const huge_pages_env_t &env = huge_pages_env();
    if (!env.error.empty()) fail(status::invalid_arguments, env.error);
    return env.on;
}

void *alloc_memory(std::size_t bytes) {
    if (!bytes) bytes = 1;
    (void)huge_pages_enabled(); // throws on a bad BLOCKDNN_HUGE_PAGES
    if (is_huge(bytes)) return map_huge(bytes);
    void *p = nullptr;
    // posix_memalign, unlike aligned_alloc, takes sizes that are not a multiple of the alignment.
    return posix_memalign(&p, 64, bytes) == 0 ? p : nullptr;
}

void free_memory(void *p, std::size_t bytes) {
    if (!p) return;
    if (!bytes) bytes = 1;
    if (is_huge(bytes)) munmap(static_cast<char *>(p) - huge_buffer_offset, huge_mapping_len(bytes));
    else std::free(p);
}

} // namespace blockdnn::impl
