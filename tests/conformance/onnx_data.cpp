// SPDX-License-Identifier: Apache-2.0
#include "onnx_data.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <onnx/onnx_pb.h>

namespace onnx_data {

namespace fs = std::filesystem;

std::string data_root() {
    if (const char *env = std::getenv("ONNX_TESTDATA_DIR"); env && *env) return env;
    return "/usr/share/libonnx-testdata/data";
}

std::int64_t array_t::numel() const {
    std::int64_t n = 1;
    for (std::int64_t d : dims) n *= d;
    return n;
}

namespace {

template <typename Msg>
Msg parse_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("onnx_data: cannot open " + path);
    Msg m;
    if (!m.ParseFromIstream(&f)) throw std::runtime_error("onnx_data: cannot parse " + path);
    return m;
}

array_t to_array(const onnx::TensorProto &t) {
    array_t a;
    a.name = t.name();
    a.dims.assign(t.dims().begin(), t.dims().end());
    const std::int64_t n = a.numel();
    a.data.resize(static_cast<std::size_t>(n));
    const std::string &raw = t.raw_data();
    auto from_raw = [&](auto zero) {
        using T = decltype(zero);
        if (raw.size() != static_cast<std::size_t>(n) * sizeof(T))
            throw std::runtime_error("onnx_data: tensor " + a.name + " raw size mismatch");
        for (std::int64_t k = 0; k < n; ++k) {
            T v;
            std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
            a.data[k] = static_cast<float>(v);
        }
    };
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
        if (t.has_raw_data()) from_raw(float {});
        else std::copy(t.float_data().begin(), t.float_data().end(), a.data.begin());
        break;
    case onnx::TensorProto::DOUBLE:
        if (t.has_raw_data()) from_raw(double {});
        else
            std::transform(
                    t.double_data().begin(), t.double_data().end(), a.data.begin(), [](double v) { return float(v); });
        break;
    case onnx::TensorProto::INT64:
        if (t.has_raw_data()) from_raw(std::int64_t {});
        else
            std::transform(t.int64_data().begin(), t.int64_data().end(), a.data.begin(),
                    [](std::int64_t v) { return float(v); });
        break;
    case onnx::TensorProto::INT32:
        if (t.has_raw_data()) from_raw(std::int32_t {});
        else
            std::transform(t.int32_data().begin(), t.int32_data().end(), a.data.begin(),
                    [](std::int32_t v) { return float(v); });
        break;
    case onnx::TensorProto::BOOL:
        if (t.has_raw_data()) from_raw(std::uint8_t {});
        else
            std::transform(t.int32_data().begin(), t.int32_data().end(), a.data.begin(),
                    [](std::int32_t v) { return float(v); });
        break;
    default:
        throw std::runtime_error(
                "onnx_data: tensor " + a.name + " has unsupported element type " + std::to_string(t.data_type()));
    }
    return a;
}

attribute_t to_attribute(const onnx::AttributeProto &p) {
    attribute_t a;
    switch (p.type()) {
    case onnx::AttributeProto::INT:
        a.kind = attribute_t::kind_t::i;
        a.i = p.i();
        break;
    case onnx::AttributeProto::FLOAT:
        a.kind = attribute_t::kind_t::f;
        a.f = p.f();
        break;
    case onnx::AttributeProto::STRING:
        a.kind = attribute_t::kind_t::s;
        a.s = p.s();
        break;
    case onnx::AttributeProto::INTS:
        a.kind = attribute_t::kind_t::ints;
        a.ints.assign(p.ints().begin(), p.ints().end());
        break;
    case onnx::AttributeProto::FLOATS:
        a.kind = attribute_t::kind_t::floats;
        a.floats.assign(p.floats().begin(), p.floats().end());
        break;
    case onnx::AttributeProto::STRINGS:
        a.kind = attribute_t::kind_t::strings;
        a.strings.assign(p.strings().begin(), p.strings().end());
        break;
    case onnx::AttributeProto::TENSOR: a.kind = attribute_t::kind_t::tensor; break;
    default: a.kind = attribute_t::kind_t::other; break;
    }
    return a;
}

} // namespace

std::int64_t node_t::get_i(const std::string &a, std::int64_t dflt) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? dflt : it->second.i;
}
float node_t::get_f(const std::string &a, float dflt) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? dflt : it->second.f;
}
std::string node_t::get_s(const std::string &a, const std::string &dflt) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? dflt : it->second.s;
}
std::vector<std::int64_t> node_t::get_ints(const std::string &a, std::vector<std::int64_t> dflt) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? dflt : it->second.ints;
}
std::vector<float> node_t::get_floats(const std::string &a, std::vector<float> dflt) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? dflt : it->second.floats;
}

const array_t &case_t::value(const std::string &n) const {
    auto it = values.find(n);
    if (it == values.end()) throw std::runtime_error("onnx_data: case " + name + " has no value named '" + n + "'");
    return it->second;
}

case_t load_case(const std::string &dir) {
    case_t c;
    c.dir = dir;
    c.name = fs::path(dir).filename().string();
    const auto model = parse_file<onnx::ModelProto>(dir + "/model.onnx");
    const onnx::GraphProto &g = model.graph();
    for (const onnx::NodeProto &n : g.node()) {
        node_t node;
        node.op_type = n.op_type();
        node.name = n.name();
        node.inputs.assign(n.input().begin(), n.input().end());
        node.outputs.assign(n.output().begin(), n.output().end());
        for (const onnx::AttributeProto &a : n.attribute()) node.attrs[a.name()] = to_attribute(a);
        c.nodes.push_back(std::move(node));
    }
    for (const onnx::TensorProto &t : g.initializer()) c.values[t.name()] = to_array(t);
    for (const onnx::ValueInfoProto &v : g.input())
        if (!c.values.count(v.name())) c.graph_inputs.push_back(v.name());
    for (const onnx::ValueInfoProto &v : g.output()) c.graph_outputs.push_back(v.name());

    const std::string data = dir + "/test_data_set_0";
    for (std::size_t k = 0; k < c.graph_inputs.size(); ++k) {
        const std::string p = data + "/input_" + std::to_string(k) + ".pb";
        if (!fs::exists(p)) continue;
        array_t a = to_array(parse_file<onnx::TensorProto>(p));
        a.name = c.graph_inputs[k];
        c.values[a.name] = std::move(a);
    }
    for (std::size_t k = 0; k < c.graph_outputs.size(); ++k) {
        const std::string p = data + "/output_" + std::to_string(k) + ".pb";
        if (!fs::exists(p)) throw std::runtime_error("onnx_data: missing " + p);
        array_t a = to_array(parse_file<onnx::TensorProto>(p));
        a.name = c.graph_outputs[k];
        c.expected.push_back(std::move(a));
    }
    return c;
}

std::vector<std::string> find_cases(const std::string &suite, const std::vector<std::string> &op_types) {
    std::vector<std::string> out;
    const fs::path root = fs::path(data_root()) / suite;
    if (!fs::is_directory(root)) return out;
    for (const fs::directory_entry &e : fs::directory_iterator(root)) {
        const fs::path model = e.path() / "model.onnx";
        if (!fs::exists(model)) continue;
        const auto m = parse_file<onnx::ModelProto>(model.string());
        for (const onnx::NodeProto &n : m.graph().node())
            if (std::find(op_types.begin(), op_types.end(), n.op_type()) != op_types.end()) {
                out.push_back(e.path().filename().string());
                break;
            }
    }
    std::sort(out.begin(), out.end());
    return out;
}

void report_t::print() const {
    std::printf("%s\n", title_.c_str());
    for (const std::string &l : lines_) std::printf("%s\n", l.c_str());
    std::printf("%s: %d run, %d skipped, %d failed\n", title_.c_str(), run_, skipped_, failed_);
    std::fflush(stdout);
}

} // namespace onnx_data
