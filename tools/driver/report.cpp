// SPDX-License-Identifier: Apache-2.0
// Tables, summary, CSV and plot of blockdnn-bench (see report.hpp).
#include "driver/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <sys/stat.h>
#include <unistd.h>

#include "core/utils.hpp"

namespace bdrv {

using blockdnn::impl::cat;
using blockdnn::impl::fail;

namespace {

bool timed(const row_t &r) { return r.ms > 0; }

bool streamed(const row_t &r) { return r.streams_ms > 0; }

// Sequential time over streams time: > 1 means the streams got more done per second.
double gain(const row_t &r) { return r.seq_ms / r.streams_ms; }

// The first row the streams mode ran on (null if none): its streams, budgets and copies are
// every such row's.
const row_t *first_streamed(const std::vector<row_t> &rows) {
    const auto it = std::find_if(rows.begin(), rows.end(), streamed);
    return it == rows.end() ? nullptr : &*it;
}

std::string label(const row_t &r) { return r.name.empty() ? r.prb : r.name; }

// The ISA columns in first-seen order, and the problems (label + prb) of one op in order.
std::vector<std::string> isas_of(const std::vector<row_t> &rows) {
    std::vector<std::string> v;
    for (const row_t &r : rows)
        if (r.isa != "-" && std::find(v.begin(), v.end(), r.isa) == v.end()) v.push_back(r.isa);
    return v;
}

// Display labels of one op's problems, keyed by prb|where: the name, with the options in
// front when problems that differ in options share a name.
std::map<std::string, std::string> display_labels(const std::vector<const row_t *> &op) {
    std::map<std::string, std::string> labels;
    std::map<std::string, const row_t *> first;
    std::map<std::string, int> uses;
    for (const row_t *r : op) {
        const std::string key = r->prb + "|" + r->where;
        if (!labels.count(key)) labels[key] = label(*r), first[key] = r, ++uses[label(*r)];
    }
    for (auto &[key, l] : labels)
        if (uses[l] > 1 && !first[key]->name.empty()) {
            const std::string &prb = first[key]->prb;
            const std::size_t sp = prb.rfind(' ');
            l = (sp == std::string::npos ? prb : prb.substr(0, sp)) + " " + l;
        }
    return labels;
}

std::string csv_field(const std::string &s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string num(double v, int prec = 4) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*g", prec, v);
    return b;
}

// Copies per second: whole numbers from 100 up (no exponents), else 4 digits.
std::string per_second(double v) { return v >= 100 ? cat(static_cast<long long>(std::llround(v))) : num(v, 4); }

// The streams mode's table of one op: per problem and ISA, copies per second and rate of the
// copies one after another and on the streams, the gain, and whether the outputs matched.
void print_streams(std::FILE *out, const std::vector<const row_t *> &op, std::map<std::string, std::string> &labels,
        int wi, const char *unit, const machine_t &m) {
    const auto any = std::find_if(
            op.begin(), op.end(), [](const row_t *r) { return r->streams > 0 || !r->streams_note.empty(); });
    if (any == op.end()) return;
    const auto first = std::find_if(op.begin(), op.end(), [](const row_t *r) { return streamed(*r); });
    if (first != op.end()) {
        const row_t &f = **first;
        std::fprintf(out,
                "-- on streams: %d cop%s of each problem on %d stream%s (threads %s) against the same copies\n",
                f.copies, f.copies == 1 ? "y" : "ies", f.streams, f.streams == 1 ? "" : "s", f.budgets.c_str());
        std::fprintf(out,
                "   one after another on the default stream (%d thread%s), timed alternately;\n"
                "   gain = sequential time / streams time\n",
                m.threads, m.threads == 1 ? "" : "s");
    } else {
        std::fprintf(out, "-- on streams\n");
    }
    const std::string seq_rate = cat("seq ", unit), str_rate = cat("streams ", unit);
    std::fprintf(out, "%-*s | %-6s %10s %10s %15s %15s %7s  %s\n", wi, "problem", "isa", "seq /s", "streams /s",
            seq_rate.c_str(), str_rate.c_str(), "gain", "outputs");
    std::map<std::string, std::vector<double>> gains; // per ISA, in first-seen order below
    std::vector<std::string> isas;
    for (const row_t *r : op) {
        if (r->streams == 0 && r->streams_note.empty()) continue;
        std::string l = labels[r->prb + "|" + r->where];
        if (static_cast<int>(l.size()) > wi) l = "..." + l.substr(l.size() - static_cast<std::size_t>(wi - 3));
        if (!streamed(*r)) {
            std::fprintf(out, "%-*s | %-6s %10s %10s %15s %15s %7s  not run: %s\n", wi, l.c_str(), r->isa.c_str(), "-",
                    "-", "-", "-", "-", r->streams_note.c_str());
            continue;
        }
        // Every copy does the work of one execution (r->rate over r->ms).
        const double per_copy = r->rate * r->ms * 1e-3;
        const double seq_per_s = r->copies / (r->seq_ms * 1e-3), str_per_s = r->copies / (r->streams_ms * 1e-3);
        const bool differ = r->status == "FAILED" && r->reason.rfind("streams:", 0) == 0;
        std::fprintf(out, "%-*s | %-6s %10s %10s %15.1f %15.1f %6.2fx  %s\n", wi, l.c_str(), r->isa.c_str(),
                per_second(seq_per_s).c_str(), per_second(str_per_s).c_str(), per_copy * seq_per_s,
                per_copy * str_per_s, gain(*r), differ ? "DIFFER (see below)" : "bitwise equal");
        if (!gains.count(r->isa)) isas.push_back(r->isa);
        gains[r->isa].push_back(gain(*r));
    }
    if (isas.empty()) return;
    std::fprintf(out, "%-*s |", wi, "geomean gain");
    for (const std::string &i : isas) std::fprintf(out, " %s %.2fx", i.c_str(), geomean(gains[i]));
    std::fprintf(out, "\n");
}

} // namespace

tally_t tally(const std::vector<row_t> &rows) {
    tally_t t;
    for (const row_t &r : rows) {
        if (r.status == "passed") ++t.passed;
        else if (r.status == "FAILED") ++t.failed;
        else if (r.status == "skipped") ++t.skipped;
        else if (r.status == "invalid") ++t.invalid;
        else ++t.ran;
    }
    return t;
}

double geomean(const std::vector<double> &v) {
    double s = 0;
    int n = 0;
    for (double x : v)
        if (x > 0) s += std::log(x), ++n;
    return n ? std::exp(s / n) : 0;
}

void print_report(std::FILE *out, const std::vector<row_t> &rows, const machine_t &m, bool verbose) {
    const std::vector<std::string> isas = isas_of(rows);
    for (const std::string &drv : driver_names()) {
        std::vector<const row_t *> op;
        for (const row_t &r : rows)
            if (r.driver == drv && (timed(r) || r.err >= 0)) op.push_back(&r);
        if (op.empty()) continue;
        // The unit comes from the timed rows (a correctness-only run has none).
        const auto timed_row = std::find_if(op.begin(), op.end(), [](const row_t *r) { return timed(*r); });
        const bool any_timed = timed_row != op.end();
        const bool flops = any_timed && (*timed_row)->flops;
        const char *unit = !any_timed ? "rate" : flops ? "GFLOP/s" : "GB/s"; // untimed: no unit to name
        if (any_timed)
            std::fprintf(out, "\n== %s (%s; %% of %s; check = max error / tolerance)\n", drv.c_str(), unit,
                    flops ? "the FMA peak of the ISA x threads" : "memcpy of as many bytes");
        else std::fprintf(out, "\n== %s (check = max error / tolerance)\n", drv.c_str());
        // Problems in first-seen order, each with its row per ISA.
        std::vector<std::string> prbs;
        std::map<std::string, std::map<std::string, const row_t *>> cell;
        std::map<std::string, std::string> labels;
        for (const row_t *r : op) {
            const std::string key = r->prb + "|" + r->where;
            if (!cell.count(key)) prbs.push_back(key);
            cell[key][r->isa] = r;
        }
        labels = display_labels(op);
        std::size_t w = 34;
        for (const auto &[key, l] : labels) w = std::max(w, std::min<std::size_t>(l.size(), 60));
        const int wi = static_cast<int>(w);
        std::fprintf(out, "%-*s", wi, "problem");
        for (const std::string &i : isas)
            std::fprintf(out, " | %-18s %9s %8s %5s %6s", (i + " impl").c_str(), "ms", unit, "%peak", "check");
        std::fprintf(out, "\n");
        for (const std::string &key : prbs) {
            std::string l = labels[key];
            // Cut from the front: the end holds the descriptor, where problems differ.
            if (l.size() > w) l = "..." + l.substr(l.size() - (w - 3));
            std::fprintf(out, "%-*s", wi, l.c_str());
            for (const std::string &i : isas) {
                auto it = cell[key].find(i);
                if (it == cell[key].end()) {
                    std::fprintf(out, " | %-18s %9s %8s %5s %6s", "-", "-", "-", "-", "-");
                    continue;
                }
                const row_t &r = *it->second;
                const std::string check = r.err < 0 ? "-"
                        : r.status == "passed"      ? num(r.tol > 0 ? r.err / r.tol : 0, 2)
                                                    : "FAIL";
                std::string base;
                if (r.base_ms > 0) base = cat(" x", num(r.base_ms / r.ms, 3));
                if (r.ms > 0)
                    std::fprintf(out, " | %-18s %9.4g %8.1f %5.1f %6s%s", r.impl.substr(0, 18).c_str(), r.ms, r.rate,
                            r.pct, check.c_str(), base.c_str());
                else
                    std::fprintf(out, " | %-18s %9s %8s %5s %6s", r.impl.substr(0, 18).c_str(), "-", "-", "-",
                            check.c_str());
            }
            std::fprintf(out, "\n");
        }
        if (!any_timed) continue;
        std::fprintf(out, "%-*s", wi, "geomean");
        for (const std::string &i : isas) {
            std::vector<double> rate, pct, ratio;
            for (const row_t *r : op)
                if (r->isa == i && timed(*r)) {
                    rate.push_back(r->rate), pct.push_back(r->pct);
                    if (r->base_ms > 0) ratio.push_back(r->base_ms / r->ms);
                }
            std::fprintf(out, " | %-18s %9s %8.1f %5.1f %6s", "", "", geomean(rate), geomean(pct), "");
            if (!ratio.empty()) std::fprintf(out, " oneDNN time / ours x%.3f", geomean(ratio));
        }
        std::fprintf(out, "\n");
        print_streams(out, op, labels, wi, unit, m);
    }
    if (std::any_of(rows.begin(), rows.end(), [](const row_t &r) { return r.base_ms > 0; }))
        std::fprintf(out,
                "\n(xN after a row: oneDNN's time / blockdnn's, measured in the same run; > 1 means blockdnn is faster)\n");

    // Failures first, then skip reasons grouped.
    for (const row_t &r : rows)
        if (r.status == "FAILED" || r.status == "invalid")
            std::fprintf(out, "%s: %s %s %s (%s): %s\n", r.status.c_str(), r.driver.c_str(), r.isa.c_str(),
                    r.prb.c_str(), r.where.c_str(),
                    r.reason.empty() ? cat("error ", r.err, " > tolerance ", r.tol).c_str() : r.reason.c_str());
    std::map<std::string, std::pair<int, std::string>> reasons;
    for (const row_t &r : rows)
        if (r.status == "skipped") {
            auto &e = reasons[r.driver + ": " + r.reason];
            if (e.first++ == 0) e.second = r.prb + " (" + r.where + ")";
        }
    if (!reasons.empty()) std::fprintf(out, "\nskipped (count, reason, first problem):\n");
    for (const auto &[why, e] : reasons)
        std::fprintf(out, "  %5d  %s\n         e.g. %s\n", e.first, why.c_str(), e.second.c_str());
    if (verbose)
        for (const row_t &r : rows)
            std::fprintf(out, "  %-7s %-6s %-8s %s %s\n", r.driver.c_str(), r.isa.c_str(), r.status.c_str(),
                    r.prb.c_str(), r.where.c_str());
    // The short report: per op and ISA, the geometric means.
    std::fprintf(out, "\nsummary (geometric means over each op's problems):\n");
    for (const std::string &drv : driver_names())
        for (const std::string &i : isas) {
            std::vector<double> rate, pct, ratio, gains;
            bool flops = true;
            for (const row_t &r : rows)
                if (r.driver == drv && r.isa == i && timed(r)) {
                    rate.push_back(r.rate), pct.push_back(r.pct), flops = r.flops;
                    if (r.base_ms > 0) ratio.push_back(r.base_ms / r.ms);
                    if (streamed(r)) gains.push_back(gain(r));
                }
            if (rate.empty()) continue;
            std::fprintf(out, "  %-8s %-7s %4zu problems %8.1f %-7s %6.1f %% of %s", drv.c_str(), i.c_str(),
                    rate.size(), geomean(rate), flops ? "GFLOP/s" : "GB/s", geomean(pct),
                    flops ? "FMA peak" : "memcpy");
            if (!ratio.empty()) std::fprintf(out, "   oneDNN time / blockdnn's %.2f", geomean(ratio));
            if (!gains.empty()) std::fprintf(out, "   streams gain %.2fx", geomean(gains));
            std::fprintf(out, "\n");
        }
    const tally_t t = tally(rows);
    // Without timed rows the peaks were not measured (blockdnn-bench --mode=C).
    const row_t *s = first_streamed(rows);
    const std::string streams = s ? cat("; streams ", s->streams, " (threads ", s->budgets, "), ", s->copies,
                                        s->copies == 1 ? " copy" : " copies", " per problem")
                                  : std::string();
    if (std::any_of(rows.begin(), rows.end(), [](const row_t &r) { return timed(r); }))
        std::fprintf(out, "\nmachine: %d thread%s; FMA peak per core %s; memcpy (64 MiB) %.1f GB/s%s\n", m.threads,
                m.threads == 1 ? "" : "s", m.fma_peaks_text().c_str(), m.copy_gbps, streams.c_str());
    else std::fprintf(out, "\nmachine: %d thread%s\n", m.threads, m.threads == 1 ? "" : "s");
    std::fprintf(out, "correctness: %d passed, %d failed, %d skipped, %d invalid%s\n", t.passed, t.failed, t.skipped,
            t.invalid, t.ran ? cat(" (", t.ran, " runs without a check)").c_str() : "");
}

void write_csv(const std::string &path, const std::vector<row_t> &rows) {
    if (path == "-") {
        write_csv(std::cout, rows);
        std::cout.flush();
        if (!std::cout) fail(blockdnn::status::runtime_error, "--csv=-: writing standard output failed");
        return;
    }
    std::ofstream f(path);
    if (!f) fail(blockdnn::status::invalid_arguments, "--csv=", path, ": cannot write the file");
    write_csv(f, rows);
    f.close(); // the buffered tail is written here: a full disk shows only now
    if (f.fail()) fail(blockdnn::status::runtime_error, "--csv=", path, ": write failed");
}

void write_csv(std::ostream &f, const std::vector<row_t> &rows) {
    f << "driver,name,problem,where,isa,impl,status,reason,max_err,tolerance,ms,rate,rate_unit,pct_peak,onednn_ms,onednn_impl,"
         "streams,stream_threads,copies,seq_ms,streams_ms,streams_gain\n";
    for (const row_t &r : rows)
        f << csv_field(r.driver) << ',' << csv_field(r.name) << ',' << csv_field(r.prb) << ',' << csv_field(r.where)
          << ',' << csv_field(r.isa) << ',' << csv_field(r.impl) << ',' << csv_field(r.status) << ','
          << csv_field(r.reason) << ',' << (r.err >= 0 ? num(r.err, 6) : "") << ',' << (r.err >= 0 ? num(r.tol, 6) : "")
          << ',' << (r.ms > 0 ? num(r.ms, 6) : "") << ',' << (r.ms > 0 ? num(r.rate, 6) : "") << ','
          << (r.ms > 0 ? (r.flops ? "GFLOP/s" : "GB/s") : "") << ',' << (r.ms > 0 ? num(r.pct, 4) : "") << ','
          << (r.base_ms > 0 ? num(r.base_ms, 6) : "") << ',' << csv_field(r.base_impl) << ','
          << (streamed(r) ? cat(r.streams) : "") << ',' << csv_field(r.budgets) << ','
          << (streamed(r) ? cat(r.copies) : "") << ',' << (streamed(r) ? num(r.seq_ms, 6) : "") << ','
          << (streamed(r) ? num(r.streams_ms, 6) : "") << ',' << (streamed(r) ? num(gain(r), 4) : "") << '\n';
}

std::vector<std::vector<std::string>> read_csv(const std::string &path) {
    std::ifstream f(path);
    if (!f) fail(blockdnn::status::invalid_arguments, "read_csv: cannot read ", path);
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> rec;
    std::string field;
    bool quoted = false, any = false;
    char c;
    while (f.get(c)) {
        any = true;
        if (quoted) {
            if (c == '"') {
                if (f.peek() == '"') field += '"', f.get();
                else quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rec.push_back(field), field.clear();
        } else if (c == '\n') {
            rec.push_back(field), field.clear();
            out.push_back(rec), rec.clear();
            any = false;
        } else {
            field += c;
        }
    }
    if (any) rec.push_back(field), out.push_back(rec);
    return out;
}

namespace {

std::string plot_ext_problem(const std::string &path) {
    const std::string ext = path.size() > 4 ? path.substr(path.size() - 4) : "";
    if (ext != ".svg" && ext != ".png") return cat("--plot=", path, ": the file name must end in .svg or .png");
    // The name goes into a gnuplot script and a shell command between single quotes.
    for (const char ch : path)
        if (ch == '\'' || static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
            return cat("--plot=", path, ": the file name may not hold a ' or a control character");
    return "";
}

} // namespace

std::string output_path_problem(const std::string &flag, const std::string &path) {
    if (flag == "--csv" && path == "-") return ""; // standard output
    if (flag == "--plot") {
        const std::string why = plot_ext_problem(path);
        if (!why.empty()) return why;
    }
    const std::size_t slash = path.rfind('/');
    if (slash + 1 == path.size()) return cat(flag, "=", path, ": names a directory, not a file");
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    if (access(dir.c_str(), W_OK) != 0)
        return cat(flag, "=", path, ": directory ", dir, " does not exist or is not writable");
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return cat(flag, "=", path, ": names a directory, not a file");
        if (access(path.c_str(), W_OK) != 0) return cat(flag, "=", path, ": the file exists and is not writable");
    }
    return "";
}

std::string output_paths_clash(const std::string &csv, const std::string &plot) {
    if (csv.empty() || csv == "-" || plot.empty() || plot.size() <= 4) return "";
    // Compared as absolute, normalized paths ("./r.dat" and "r.dat" are one file; a symlinked
    // directory is resolved where it exists).
    const auto norm = [](const std::string &p) {
        std::error_code ec;
        const std::filesystem::path n = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
        return ec ? p : n.string();
    };
    const std::string stem = plot.substr(0, plot.size() - 4), c = norm(csv);
    for (const std::string &p : {plot, stem + ".dat", stem + ".gp", stem + ".log"})
        if (c == norm(p)) return cat("--csv=", csv, " is a file --plot=", plot, " writes");
    return "";
}

std::string plot(const std::string &path, const std::vector<row_t> &rows, const machine_t &m) {
    const std::string ext = path.size() > 4 ? path.substr(path.size() - 4) : "";
    if (const std::string why = plot_ext_problem(path); !why.empty()) return why;
    if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
        return "gnuplot is not installed (apt-get install gnuplot-nox); no plot drawn";
    const std::string stem = path.substr(0, path.size() - 4);
    const std::vector<std::string> isas = isas_of(rows);
    std::vector<std::string> ops;
    for (const std::string &d : driver_names())
        if (std::any_of(rows.begin(), rows.end(), [&](const row_t &r) { return r.driver == d && timed(r); }))
            ops.push_back(d);
    if (ops.empty()) return "no timed problems to plot";
    const bool with_base = std::any_of(rows.begin(), rows.end(), [](const row_t &r) { return r.base_ms > 0; });
    // One data block per op: x, label, then per ISA its rate and the baseline's rate.
    std::ofstream dat(stem + ".dat");
    for (const std::string &op : ops) {
        std::vector<std::string> keys;
        std::map<std::string, std::map<std::string, const row_t *>> cell;
        std::vector<const row_t *> op_rows;
        for (const row_t &r : rows)
            if (r.driver == op && timed(r)) {
                const std::string key = r.prb + "|" + r.where;
                if (!cell.count(key)) keys.push_back(key);
                cell[key][r.isa] = &r;
                op_rows.push_back(&r);
            }
        const std::map<std::string, std::string> labels = display_labels(op_rows);
        dat << "# " << op << "\n";
        for (std::size_t k = 0; k < keys.size(); ++k) {
            const row_t &any = *cell[keys[k]].begin()->second;
            std::string l = labels.at(keys[k]);
            std::replace(l.begin(), l.end(), '"', '\'');
            std::replace(l.begin(), l.end(), ' ', '_');
            if (l.size() > 40) l = l.substr(0, 40);
            dat << k << " \"" << l << "\"";
            for (const std::string &i : isas) {
                auto it = cell[keys[k]].find(i);
                const row_t *r = it == cell[keys[k]].end() ? nullptr : it->second;
                dat << ' ' << (r ? num(r->rate, 6) : "NaN") << ' '
                    << (r && r->base_ms > 0 ? num(r->rate * r->ms / r->base_ms, 6) : "NaN");
            }
            // The reference rate of a memory-bound row: memcpy of as many bytes.
            dat << ' ' << (!any.flops && any.pct > 0 ? num(any.rate / any.pct * 100, 6) : "NaN");
            dat << "\n";
        }
        dat << "\n\n";
    }
    dat.close();
    if (!dat) return cat("cannot write ", stem, ".dat; no plot drawn");
    std::ofstream gp(stem + ".gp");
    gp << (ext == ".svg" ? "set terminal svg size 1400," : "set terminal pngcairo size 1400,") << 520 * ops.size()
       << " font 'sans,10'\nset output '" << path << "'\nset multiplot layout " << ops.size() << ",1\n"
       << "set grid ytics\nset key outside right top\nset xtics rotate by -60 font ',8' noenhanced\nset style data linespoints\n";
    for (std::size_t o = 0; o < ops.size(); ++o) {
        const bool flops = std::find_if(rows.begin(), rows.end(), [&](const row_t &r) {
            return r.driver == ops[o] && timed(r);
        })->flops;
        gp << "set title '" << ops[o] << " (" << m.threads << " threads)' noenhanced\nset ylabel '"
           << (flops ? "GFLOP/s" : "GB/s") << "'\nset yrange [0:*]\nplot ";
        for (std::size_t i = 0; i < isas.size(); ++i) {
            gp << (i ? ", " : "") << "'" << stem << ".dat' index " << o << " using 1:" << 3 + 2 * i
               << ":xtic(2) title '" << isas[i] << "' pt 7";
            if (with_base)
                gp << ", '' index " << o << " using 1:" << 4 + 2 * i << " title 'oneDNN " << isas[i] << "' pt 6 dt 2";
            const blockdnn::isa l = isas[i] == "avx512" ? blockdnn::isa::avx512_core
                    : isas[i] == "avx2"                 ? blockdnn::isa::avx2
                                                        : blockdnn::isa::scalar;
            if (flops && m.peak(l) > 0)
                gp << ", " << num(m.peak(l), 6) << " with lines dt 3 lw 2 title '" << isas[i] << " FMA peak'";
        }
        if (!flops)
            gp << ", '' index " << o << " using 1:" << 3 + 2 * isas.size()
               << " title 'memcpy of as many bytes' pt 2 lc rgb 'gray'";
        gp << "\n";
    }
    gp << "unset multiplot\n";
    gp.close();
    if (!gp) return cat("cannot write ", stem, ".gp; no plot drawn");
    // An old plot must not pass for this run's: the check below looks for a new file.
    std::remove(path.c_str());
    if (std::system(cat("gnuplot '", stem, ".gp' 2>'", stem, ".log'").c_str()) != 0)
        return cat("gnuplot failed; see ", stem, ".log");
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || st.st_size == 0) return cat("gnuplot wrote no ", path, "; see ", stem, ".log");
    return "";
}

} // namespace bdrv
