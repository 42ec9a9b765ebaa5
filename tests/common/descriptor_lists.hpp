// SPDX-License-Identifier: Apache-2.0
// The descriptor lists of tests/data/<op>/, batch files in benchdnn syntax, read with the
// library's batch reader as blockdnn-bench reads them.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/utils.hpp"
#include "testing/batch.hpp"

namespace bdtest {

/// The message of the case a test lists when it cannot find its data.
inline const char *const test_data_unset = "BLOCKDNN_TEST_DATA is not set (meson test sets it to tests/data)";

/// $BLOCKDNN_TEST_DATA (set by tests/meson.build), or nullptr if unset or empty.
inline const char *test_data_root() {
    const char *root = std::getenv("BLOCKDNN_TEST_DATA");
    return root && *root ? root : nullptr;
}

/// The problems of <root>/<op>/<list>, each of driver `op` and without options (what the test
/// varies comes from the test, so an option in the file would be ignored). Throws what is
/// wrong with the list: unreadable, a problem of another driver or with an option, or empty.
inline std::vector<bdrv::problem_t> read_descriptor_list(
        const std::string &root, const std::string &op, const std::string &list) {
    using blockdnn::impl::cat;
    const std::string path = cat(root, "/", op, "/", list);
    bdrv::batch_reader_t reader;
    reader.read_file(path);
    for (const bdrv::problem_t &p : reader.problems()) {
        if (p.driver != op) throw std::runtime_error(cat(p.where, ": driver ", p.driver, ", not ", op));
        if (!p.opts.empty())
            throw std::runtime_error(cat(p.where, ": --", p.opts.begin()->first, " set; the test takes no options"));
    }
    if (reader.problems().empty()) throw std::runtime_error(cat(path, ": no descriptors (empty file)"));
    return reader.problems();
}

} // namespace bdtest
