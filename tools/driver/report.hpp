// SPDX-License-Identifier: Apache-2.0
// What blockdnn-bench prints and writes: one table per op with a geometric mean per ISA (and
// the streams mode's table), the correctness summary with the reasons problems were skipped,
// the CSV file and the plot.
#pragma once

#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "driver/runner.hpp"

namespace bdrv {

/// Counts of row statuses.
struct tally_t {
    int passed = 0, failed = 0, skipped = 0, invalid = 0, ran = 0;
};
tally_t tally(const std::vector<row_t> &rows);

/// Per op: a table of the problems (rows) by ISA (columns: impl, ms, rate, % peak, check)
/// and a geometric-mean line per ISA, and in the streams mode a table of copies/s, rates and
/// gains per problem and ISA with the geometric-mean gain; then failures, skip reasons (grouped, with counts) and
/// the totals line "correctness: N passed, N failed, N skipped, N invalid".
void print_report(std::FILE *out, const std::vector<row_t> &rows, const machine_t &m, bool verbose);

/// The geometric mean of the positive values (0 if none).
double geomean(const std::vector<double> &v);

/// The CSV header and one line per row (RFC 4180 quoting), to `out`, or to the file at
/// `path` ("-": standard output).
void write_csv(std::ostream &out, const std::vector<row_t> &rows);
void write_csv(const std::string &path, const std::vector<row_t> &rows);
/// Reads a CSV written by write_csv: one string list per line, the header first.
std::vector<std::vector<std::string>> read_csv(const std::string &path);

/// Draws per-problem rates per ISA against the machine's peaks (and the baseline's rates)
/// with gnuplot, one panel per op, into FILE.svg or FILE.png; the data and script are left
/// beside it (FILE.dat, FILE.gp). Returns "" or why nothing was drawn (no gnuplot, ...).
std::string plot(const std::string &path, const std::vector<row_t> &rows, const machine_t &m);

/// Why an output file named by `flag` (--csv, --plot) could not be written, checked before the
/// run: a --plot name not ending in .svg or .png or holding a ' or a control character (it is
/// quoted into a gnuplot script and a shell command), a path naming a directory, a directory
/// that does not exist or is not writable, an existing file that is not writable. "" if none,
/// and always for --csv=- (standard output).
std::string output_path_problem(const std::string &flag, const std::string &path);

/// Why --csv and --plot would overwrite each other: the CSV path is the plot or one of the
/// files written beside it (FILE.dat, FILE.gp, FILE.log). "" if they do not clash (--csv=-,
/// standard output, never does).
std::string output_paths_clash(const std::string &csv, const std::string &plot);

} // namespace bdrv
