// SPDX-License-Identifier: Apache-2.0
// Loads ONNX backend test cases (Debian's libonnx-testdata) for conformance tests: the graph's
// nodes with their attributes, its initializers, and the input/output tensors of
// test_data_set_0. Parsing uses ONNX's own message definitions (libonnx-dev) and libprotobuf.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace onnx_data {

/// Where the test data lives (/usr/share/libonnx-testdata/data), or $ONNX_TESTDATA_DIR.
std::string data_root();

/// A float tensor (other element types are converted to float; int64 shapes and indices fit).
struct array_t {
    std::string name;
    std::vector<std::int64_t> dims;
    std::vector<float> data;
    std::int64_t numel() const;
};

/// One attribute of a node. `kind` tells which member holds the value.
struct attribute_t {
    enum class kind_t { i, f, s, ints, floats, strings, tensor, other } kind = kind_t::other;
    std::int64_t i = 0;
    float f = 0;
    std::string s;
    std::vector<std::int64_t> ints;
    std::vector<float> floats;
    std::vector<std::string> strings;
};

struct node_t {
    std::string op_type, name;
    std::vector<std::string> inputs, outputs; // "" marks an omitted optional input
    std::map<std::string, attribute_t> attrs;

    bool has(const std::string &a) const { return attrs.count(a) != 0; }
    std::int64_t get_i(const std::string &a, std::int64_t dflt) const;
    float get_f(const std::string &a, float dflt) const;
    std::string get_s(const std::string &a, const std::string &dflt) const;
    std::vector<std::int64_t> get_ints(const std::string &a, std::vector<std::int64_t> dflt = {}) const;
    std::vector<float> get_floats(const std::string &a, std::vector<float> dflt = {}) const;
};

/// A whole test case: the graph and the first data set, with every graph input resolved to
/// its array (from the data set or, for weights stored in the model, an initializer).
struct case_t {
    std::string name, dir;
    std::vector<node_t> nodes;
    std::vector<std::string> graph_inputs, graph_outputs; // graph input names exclude initializers
    std::map<std::string, array_t> values;                // every named input/initializer
    std::vector<array_t> expected;                        // outputs, in graph output order

    const array_t &value(const std::string &name) const; // throws std::runtime_error if absent
    bool has_value(const std::string &name) const { return !name.empty() && values.count(name) != 0; }
};

/// Loads dir (a folder with model.onnx and test_data_set_0). Throws std::runtime_error with the
/// path on a missing or unparsable file.
case_t load_case(const std::string &dir);

/// Names of the test folders in data_root()/<suite> ("node", "pytorch-converted") whose graph
/// contains a node of one of `op_types`, sorted. Empty if the folder does not exist.
std::vector<std::string> find_cases(const std::string &suite, const std::vector<std::string> &op_types);

/// Tally of a conformance run: each case is run, skipped (with a reason) or failed (with a
/// message); print() lists every case and the counts.
class report_t {
public:
    explicit report_t(std::string title) : title_(std::move(title)) {}
    void ran(const std::string &c) { lines_.push_back("  run     " + c), ++run_; }
    void skipped(const std::string &c, const std::string &why) {
        lines_.push_back("  skipped " + c + ": " + why), ++skipped_;
    }
    void failed(const std::string &c, const std::string &why) {
        lines_.push_back("  FAILED  " + c + ": " + why), ++failed_;
    }
    int run() const { return run_; }
    int n_skipped() const { return skipped_; }
    int n_failed() const { return failed_; }
    /// Prints every case and 'title: N run, N skipped, N failed' to stdout.
    void print() const;

private:
    std::string title_;
    std::vector<std::string> lines_;
    int run_ = 0, skipped_ = 0, failed_ = 0;
};

} // namespace onnx_data
