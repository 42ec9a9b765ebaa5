// SPDX-License-Identifier: Apache-2.0
// libFuzzer target (scripts/fuzz.sh): arbitrary bytes as a benchdnn batch file for one of the
// drivers, read by the batch reader and every problem turned into an op spec (descriptor
// parsers and option words). A rejected input must throw blockdnn::error with a message;
// anything else thrown, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "testing/batch.hpp"
#include "driver/spec.hpp"

namespace {

void require_message(const blockdnn::error &e) {
    if (std::string(e.what()).empty()) {
        std::fprintf(stderr, "fuzz_batch: blockdnn::error without a message\n");
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size == 0) return 0;
    const auto &drivers = bdrv::driver_names();
    // The first byte picks the driver (or none, to reach "descriptor before any driver").
    const std::size_t pick = data[0] % (drivers.size() + 1);
    const std::string text(reinterpret_cast<const char *>(data + 1), size - 1);
    const std::string path = pick < drivers.size() ? "inputs/" + drivers[pick] + "/fuzz" : "fuzz";
    // Includes: "self" is the input again (nesting and cycles), anything else is missing.
    bdrv::batch_reader_t reader([&](const std::string &p) -> std::optional<std::string> {
        if (p.size() >= 4 && p.compare(p.size() - 4, 4, "self") == 0) return text;
        return std::nullopt;
    });
    try {
        reader.read_text(text, path);
    } catch (const blockdnn::error &e) {
        require_message(e);
        return 0;
    }
    std::size_t n = 0;
    for (const bdrv::problem_t &p : reader.problems()) {
        if (++n > 256) break;
        try {
            (void)bdrv::make_spec(p, n % 3 == 0 ? 1 : 0);
        } catch (const blockdnn::error &e) {
            require_message(e);
        }
    }
    return 0;
}
