// SPDX-License-Identifier: Apache-2.0
// The benchdnn batch reader of blockdnn-bench: persistent options, --reset, comma lists,
// comments, --batch nesting relative to the including file, driver from the directory, and
// the error messages for bad input.
#include <map>

#include <gtest/gtest.h>

#include "testing/batch.hpp"
#include "common/test_util.hpp"

using bdrv::batch_reader_t;
using bdrv::problem_t;

namespace {

// A reader over an in-memory file system.
struct fs_t {
    std::map<std::string, std::string> files;
    batch_reader_t reader() {
        return batch_reader_t([this](const std::string &p) -> std::optional<std::string> {
            auto it = files.find(p);
            if (it == files.end()) return std::nullopt;
            return it->second;
        });
    }
};

std::vector<std::string> descs(const batch_reader_t &r) {
    std::vector<std::string> v;
    for (const problem_t &p : r.problems()) v.push_back(p.desc);
    return v;
}

} // namespace

TEST(DriverBatch, OptionsPersistUntilSetAgainOrReset) {
    batch_reader_t r;
    r.read_args({"--conv", "--dir=FWD_D", "--mb=4", "mb2ic3ih5oc4oh5kh3", "--dir=FWD_B", "ic3ih5oc4oh5kh3", "--reset",
            "ic3ih5oc4oh5kh1"});
    ASSERT_EQ(r.problems().size(), 3u);
    EXPECT_EQ(r.problems()[0].opt("dir"), "FWD_D");
    EXPECT_EQ(r.problems()[0].opt("mb"), "4");
    EXPECT_EQ(r.problems()[1].opt("dir"), "FWD_B");
    EXPECT_EQ(r.problems()[1].opt("mb"), "4");
    EXPECT_EQ(r.problems()[2].opt("dir", "default"), "default");
    EXPECT_EQ(r.problems()[2].opt("mb", "none"), "none");
    EXPECT_EQ(r.problems()[0].driver, "conv");
    EXPECT_EQ(r.problems()[0].where, "command line");
}

// On the command line, option values after the last descriptor would reach no problem (and no
// check): an error naming them, also where the last batch file read sets them. Options before
// a later descriptor or --batch are fine.
TEST(DriverBatch, CommandLineOptionsAfterTheLastDescriptorAreAnError) {
    batch_reader_t r;
    expect_error(blockdnn::status::invalid_arguments,
            {"--dir=FWD_Q --stag=bogus after the last descriptor", "no problem"}, [&] {
                r.read_args({"--conv", "mb1ic3ih5oc4oh5kh3", "--dir=FWD_Q", "--stag=bogus"});
            });
    batch_reader_t ok;
    ok.read_args({"--conv", "mb1ic3ih5oc4oh5kh3", "--dir=FWD_I", "mb1ic3ih5oc4oh5kh1", "--reset", "--bnorm"});
    ASSERT_EQ(ok.problems().size(), 2u);
    EXPECT_EQ(ok.problems()[1].opt("dir"), "FWD_I");
    batch_reader_t file(
            [](const std::string &) { return std::optional<std::string>("--conv mb1ic3ih5oc4oh5kh3 --dir=FWD_I\n"); });
    // A batch file read last from the command line: its options after its last descriptor
    // would reach no problem either.
    expect_error(blockdnn::status::invalid_arguments,
            {"list:1: --dir=FWD_I after the last descriptor", "applies to no problem"},
            [&] { file.read_args({"--batch=list"}); });
    // Inside a file, or from the command line before more descriptors, they persist for them.
    fs_t fs;
    fs.files["x/tail"] = "--conv ic3ih5oc4oh5kh3 --dir=FWD_I\n";
    fs.files["x/outer"] = "--batch=tail\nic3ih5oc4oh5kh1\n";
    batch_reader_t outer = fs.reader();
    outer.read_args({"--batch=x/outer"});
    ASSERT_EQ(outer.problems().size(), 2u);
    EXPECT_EQ(outer.problems()[1].opt("dir"), "FWD_I");
    // Options from several places: each after the first names its own.
    expect_error(blockdnn::status::invalid_arguments,
            {"x/tail:1: --dir=FWD_I --mb=2 (command line) after the last descriptor", "applies to no problem"}, [&] {
                fs.reader().read_args({"--batch=x/tail", "--mb=2"});
            });
    batch_reader_t then = fs.reader();
    then.read_args({"--batch=x/tail", "ic3ih5oc4oh5kh1"});
    ASSERT_EQ(then.problems().size(), 2u);
    EXPECT_EQ(then.problems()[1].opt("dir"), "FWD_I");
    // Options before an include that was not found were for it (oneDNN's lists name files
    // that were not copied): the note names the file, and the options are not an error.
    fs.files["x/missing"] = "--conv ic3ih5oc4oh5kh3\n--dir=FWD_I --batch=not_here\n";
    batch_reader_t missing = fs.reader();
    missing.read_args({"--batch=x/missing"});
    EXPECT_EQ(missing.problems().size(), 1u);
    ASSERT_EQ(missing.notes().size(), 1u);
    EXPECT_NE(missing.notes()[0].find("not_here"), std::string::npos) << missing.notes()[0];
}

TEST(DriverBatch, OptionsBeforeADriverFlagWithNoDescriptorBetweenAreAnError) {
    using blockdnn::status;
    const char *rule = "applies to no problem: options follow the driver they apply to";
    expect_error(status::invalid_arguments, {"command line: --dir=FWD_D comes before --conv", rule}, [] {
        batch_reader_t().read_args({"--dir=FWD_D", "--conv", "mb1ic16ih7oc16oh7kh3ph1"});
    });
    expect_error(status::invalid_arguments, {"--stag=axb --match=x comes before --driver=conv", rule}, [] {
        batch_reader_t().read_args({"--stag=axb", "--match=x", "--driver=conv", "ic3ih5oc4oh5kh3"});
    });
    // A driver switch after options that did reach a problem, or after --reset, is fine.
    batch_reader_t ok;
    ok.read_args({"--conv", "--dir=FWD_I", "ic3ih5oc4oh5kh3", "--bnorm", "mb2ic16ih4", "--dir=FWD_D", "--reset",
            "--conv", "ic3ih5oc4oh5kh1"});
    ASSERT_EQ(ok.problems().size(), 3u);
    EXPECT_EQ(ok.problems()[1].opts.count("dir"), 0u);
    // Batch files go through the same reader; options at a file's end persist after it.
    fs_t fs;
    fs.files["x/bad"] = "--mb=2\n--conv ic3ih5oc4oh5kh3\n";
    fs.files["x/tail"] = "--conv ic3ih5oc4oh5kh3 --dir=FWD_I\n";
    expect_error(status::invalid_arguments, {"x/bad:2: --mb=2 comes before --conv", rule},
            [&] { fs.reader().read_file("x/bad"); });
    batch_reader_t tail = fs.reader();
    tail.read_args({"--batch=x/tail", "--batch=x/tail", "ic3ih5oc4oh5kh1"});
    EXPECT_EQ(tail.problems().size(), 3u);
}

TEST(DriverBatch, CommaListsMultiplyProblemsAndEmptyMeansDefault) {
    batch_reader_t r;
    r.read_args({"--bnorm", "--dir=FWD_D,BWD_DW", "--flags=,CH", "mb2ic16ih4"});
    ASSERT_EQ(r.problems().size(), 4u);
    // Options in key order, the last key varying fastest.
    EXPECT_EQ(r.problems()[0].opt("dir"), "FWD_D");
    EXPECT_EQ(r.problems()[0].opt("flags"), "");
    EXPECT_EQ(r.problems()[1].opt("flags"), "CH");
    EXPECT_EQ(r.problems()[2].opt("dir"), "BWD_DW");
    r.read_args({"--flags=", "mb2ic16ih4"});
    ASSERT_EQ(r.problems().size(), 6u);
    EXPECT_EQ(r.problems()[4].opts.count("flags"), 0u);
}

// benchdnn's softmax lists (inputs/softmax/): the driver from the directory, --axis per problem.
TEST(DriverBatch, SoftmaxListsTakeTheDriverFromTheDirectoryAndTheAxis) {
    fs_t fs;
    fs.files["in/softmax/test_softmax"] = "--reset\n--inplace=true,false\n--axis=0,1\n--batch=shapes\n";
    fs.files["in/softmax/shapes"] = "# basic shapes\n16x16\n2x19x17x13\n";
    batch_reader_t r = fs.reader();
    r.read_file("in/softmax/test_softmax");
    EXPECT_EQ(r.driver(), "softmax");
    ASSERT_EQ(r.problems().size(), 8u);
    EXPECT_EQ(r.problems()[0].driver, "softmax");
    EXPECT_EQ(r.problems()[0].desc, "16x16");
    EXPECT_EQ(r.problems()[0].opt("axis"), "0");
    EXPECT_EQ(r.problems()[1].opt("axis"), "0");
    EXPECT_EQ(r.problems()[1].opt("inplace"), "false");
    EXPECT_EQ(r.problems()[2].opt("axis"), "1");
    EXPECT_EQ(r.problems()[7].desc, "2x19x17x13");
}

TEST(DriverBatch, ResetKeepsSkipImplAndDriverSwitchClears) {
    batch_reader_t r;
    r.read_args({"--conv", "--skip-impl=ref", "--dir=FWD_D", "--reset", "ic3ih5oc4oh5kh3", "--rnn", "l1t2sic8"});
    ASSERT_EQ(r.problems().size(), 2u);
    EXPECT_EQ(r.problems()[0].opt("skip-impl"), "ref");
    EXPECT_EQ(r.problems()[0].opts.count("dir"), 0u);
    EXPECT_EQ(r.problems()[1].driver, "rnn");
    EXPECT_EQ(r.problems()[1].opts.count("skip-impl"), 0u);
}

TEST(DriverBatch, FilesCommentsQuotedNamesAndLines) {
    fs_t fs;
    fs.files["in/conv/set"] = "# a set\n--dir=FWD_D  # inline comment\n--batch=shapes\n\nic8ih4oc8oh4kh3ph1 # after\n";
    fs.files["in/conv/shapes"] =
            "mb1ic3ih5oc4oh5kh3n\"net:layer one#1\"\n#mb1ic3ih5oc4oh5kh1\n  ic16ih7oc16oh7kh1 ic4ih7oc4oh7kh1\n";
    batch_reader_t r = fs.reader();
    r.read_file("in/conv/set");
    ASSERT_EQ(r.problems().size(), 4u);
    EXPECT_EQ(r.driver(), "conv"); // from the directory name
    EXPECT_EQ(descs(r),
            (std::vector<std::string> {"mb1ic3ih5oc4oh5kh3n\"net:layer one#1\"", "ic16ih7oc16oh7kh1", "ic4ih7oc4oh7kh1",
                    "ic8ih4oc8oh4kh3ph1"}));
    EXPECT_EQ(r.problems()[0].where, "in/conv/shapes:1");
    EXPECT_EQ(r.problems()[2].where, "in/conv/shapes:3");
    EXPECT_EQ(r.problems()[3].where, "in/conv/set:5");
    for (const problem_t &p : r.problems()) EXPECT_EQ(p.opt("dir"), "FWD_D");
}

TEST(DriverBatch, IncludesAreRelativeToTheIncludingFileAndOptionsPersistAfter) {
    fs_t fs;
    fs.files["a/top"] = "--bnorm --batch=sub/mid\nmb1ic2";
    fs.files["a/sub/mid"] = "--flags=G --batch=leaf";
    fs.files["a/sub/leaf"] = "mb1ic4";
    batch_reader_t r = fs.reader();
    r.read_file("a/top");
    ASSERT_EQ(descs(r), (std::vector<std::string> {"mb1ic4", "mb1ic2"}));
    EXPECT_EQ(r.problems()[1].opt("flags"), "G"); // set inside the include, still in force
}

TEST(DriverBatch, MissingNestedIncludeIsANoteMissingTopLevelIsAnError) {
    fs_t fs;
    fs.files["d/conv/top"] = "--batch=not_copied\nic3ih5oc4oh5kh3";
    batch_reader_t r = fs.reader();
    r.read_file("d/conv/top");
    EXPECT_EQ(r.problems().size(), 1u);
    ASSERT_EQ(r.notes().size(), 1u);
    EXPECT_NE(r.notes()[0].find("d/conv/top:1"), std::string::npos) << r.notes()[0];
    EXPECT_NE(r.notes()[0].find("not_copied"), std::string::npos) << r.notes()[0];
    batch_reader_t r2 = fs.reader();
    expect_error(blockdnn::status::invalid_arguments, {"--batch=nope", "cannot read"},
            [&] { r2.read_args({"--batch=nope"}); });
    expect_error(blockdnn::status::invalid_arguments, {"--batch=gone", "cannot read"}, [&] { r2.read_file("gone"); });
}

TEST(DriverBatch, ErrorsNameThePlaceAndTheToken) {
    using blockdnn::status;
    fs_t fs;
    fs.files["x/loop"] = "--conv --batch=loop";
    fs.files["x/bad"] = "--conv\n\n--frobnicate=3 ic3ih5oc4oh5kh3";
    fs.files["x/quote"] = "--conv ic3ih5oc4oh5kh3n\"open";
    auto read = [&](const std::string &f) {
        batch_reader_t r = fs.reader();
        r.read_file(f);
    };
    expect_error(status::invalid_arguments, {"x/loop:1", "nests deeper than 16"}, [&] { read("x/loop"); });
    expect_error(status::invalid_arguments, {"x/bad:3", "unknown option '--frobnicate'"}, [&] { read("x/bad"); });
    expect_error(status::invalid_arguments, {"x/quote:1", "unclosed"}, [&] { read("x/quote"); });
    // An endless file is an error, not a run out of memory (a new user's --batch=/dev/zero).
    expect_error(status::invalid_arguments, {"--batch=/dev/zero", "more than 64 MiB"},
            [] { batch_reader_t().read_file("/dev/zero"); });
    // A NUL in an include name (found by the fuzzer): the message must not start with it.
    fs.files["x/nul"] = std::string("--conv\n--batch=\0\0self\n", 22);
    expect_error(status::invalid_arguments, {"x/nul:2", "control byte 0x00"}, [&] { read("x/nul"); });
    batch_reader_t r;
    expect_error(status::invalid_arguments, {"descriptor 'ic3ih5oc4oh5kh3' before any driver"},
            [&] { r.read_args({"ic3ih5oc4oh5kh3"}); });
    expect_error(status::invalid_arguments, {"'--dir' needs a value"}, [&] { r.read_args({"--conv", "--dir"}); });
    expect_error(status::invalid_arguments, {"unknown option '--bogus'"}, [&] { r.read_args({"--bogus"}); });
    expect_error(
            status::invalid_arguments, {"--driver=gemm", "is not one of"}, [&] { r.read_args({"--driver=gemm"}); });
    // 13 values of each of four options: 28561 combinations for one descriptor.
    const std::string many = "--dt=a,b,c,d,e,f,g,h,i,j,k,l,m";
    expect_error(status::invalid_arguments, {"more than 4096 option combinations"}, [&] {
        r.read_args({"--conv", many, "--dir=a,b,c,d,e,f,g,h,i,j,k,l,m", "--tag=a,b,c,d,e,f,g,h,i,j,k,l,m",
                "--alg=a,b,c,d,e,f,g,h,i,j,k,l,m", "ic3ih5oc4oh5kh3"});
    });
}
