// The programs' command-line parser: whole numbers, ranges, choices, flags,
// positionals, --help, and error messages that name the option.
#include <brasa/util/cli.h>
#include <brasa/util/error.h>
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "../test_util.h"

namespace brasa {
namespace {

struct Settings {
  int64_t epochs = 6;
  int threads = 0;
  double lr = 0.1;
  std::string model = "cnn", data;
  bool resume = false;
};

cli::Parser make(Settings& s) {
  cli::Parser p("prog", "A test program.");
  p.option("--epochs", &s.epochs, 1, 1000, "epochs")
      .option("--threads", &s.threads, 0, 64, "threads")
      .option("--lr", &s.lr, 1e-6, 10, "learning rate")
      .option("--model", &s.model, "the model", {"cnn", "mlp"})
      .option("--data", &s.data, "data directory")
      .metavar("DIR")
      .flag("--resume", &s.resume, "resume");
  return p;
}

// The UsageError's message when `p` parses `args`, or "" when they parse.
std::string error_of(cli::Parser& p, std::vector<std::string> args) {
  std::ostringstream help;
  try {
    p.parse(args, help);
  } catch (const cli::UsageError& e) {
    return e.what();
  }
  return "";
}

// The UsageError's message for `args` on make()'s parser.
std::string error_of(std::vector<std::string> args) {
  Settings s;
  cli::Parser p = make(s);
  return error_of(p, std::move(args));
}

TEST(Cli, ParsesValuesInBothSpellingsAndKeepsDefaults) {
  Settings s;
  cli::Parser p = make(s);
  std::ostringstream help;
  EXPECT_TRUE(p.parse({"--epochs", "12", "--lr=0.005", "--model", "mlp", "--resume"}, help));
  EXPECT_EQ(s.epochs, 12);
  EXPECT_DOUBLE_EQ(s.lr, 0.005);
  EXPECT_EQ(s.model, "mlp");
  EXPECT_TRUE(s.resume);
  EXPECT_EQ(s.threads, 0);  // the default stays
  EXPECT_TRUE(p.given("--epochs"));
  EXPECT_TRUE(p.given("--lr"));
  EXPECT_FALSE(p.given("--threads"));
  EXPECT_TRUE(help.str().empty());
}

TEST(Cli, NumbersMustBeWholeAndInRange) {
  EXPECT_EQ(error_of({"--epochs", "2x"}),
            "--epochs expects a whole number from 1 to 1000, got '2x'");
  EXPECT_EQ(error_of({"--epochs", "99999999999999999999"}),
            "--epochs is out of range: expected a whole number from 1 to 1000, got "
            "99999999999999999999");
  EXPECT_EQ(error_of({"--epochs", "0"}),
            "--epochs is out of range: expected a whole number from 1 to 1000, got 0");
  EXPECT_EQ(error_of({"--epochs", ""}), "--epochs expects a whole number from 1 to 1000, got ''");
  EXPECT_EQ(error_of({"--epochs", " 3"}),
            "--epochs expects a whole number from 1 to 1000, got ' 3'");
  EXPECT_EQ(error_of({"--epochs", "2.5"}),
            "--epochs expects a whole number from 1 to 1000, got '2.5'");
  EXPECT_EQ(error_of({"--threads=-1"}),
            "--threads is out of range: expected a whole number from 0 to 64, got -1");
  EXPECT_EQ(error_of({"--lr", "nan"}), "--lr expects a number from 1e-06 to 10, got 'nan'");
  EXPECT_EQ(error_of({"--lr", "1e999"}),
            "--lr is out of range: expected a number from 1e-06 to 10, got 1e999");
  EXPECT_EQ(error_of({"--lr", "0.1s"}), "--lr expects a number from 1e-06 to 10, got '0.1s'");
  EXPECT_EQ(error_of({"--lr", "inf"}),
            "--lr is out of range: expected a number from 1e-06 to 10, got inf");
}

TEST(Cli, ChoicesFlagsAndUnknownOptions) {
  EXPECT_EQ(error_of({"--model", "rnn"}), "--model must be one of cnn, mlp, got 'rnn'");
  EXPECT_EQ(error_of({"--data", ""}), "--data must not be empty");
  EXPECT_EQ(error_of({"--resume=yes"}), "--resume takes no value");
  EXPECT_EQ(error_of({"--epochs"}), "--epochs needs a value");
  EXPECT_EQ(error_of({"--epoch", "3"}), "unknown option '--epoch'");
  EXPECT_EQ(error_of({"stray"}), "unexpected argument 'stray'");
  EXPECT_EQ(error_of({"--model", "mlp", "--lr", "0.01"}), "");
}

TEST(Cli, HelpListsEveryOptionAndReturnsFalse) {
  Settings s;
  cli::Parser p = make(s);
  std::ostringstream help;
  EXPECT_FALSE(p.parse({"--epochs", "3", "--help", "--bogus"}, help));
  const std::string text = help.str();
  EXPECT_EQ(text.rfind("A test program.\n\nusage: prog [--epochs N]", 0), 0u) << text;
  for (const char* needle : {"--threads N", "--lr X", "--model cnn|mlp", "--data DIR", "--resume",
                             "learning rate", "[--help]"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " missing from\n" << text;
  for (const auto& line : [&] {
         std::vector<std::string> lines;
         std::istringstream in(text);
         for (std::string l; std::getline(in, l);) lines.push_back(l);
         return lines;
       }())
    EXPECT_LE(line.size(), 80u) << line;
}

TEST(Cli, PositionalsInOrderWithRequiredOnes) {
  std::string mode, backend;
  double mb = 25;
  cli::Parser p("bench", "A bench.");
  p.positional("MODE", &mode, "mode", {"single", "ddp"})
      .positional("BACKEND", &backend, "backend", {"gloo", "mpi"})
      .positional("MB", &mb, 0.001, 100, "bucket size")
      .positionals_required(1);
  std::ostringstream help;
  EXPECT_TRUE(p.parse({"ddp", "gloo", "0.25"}, help));
  EXPECT_EQ(mode, "ddp");
  EXPECT_EQ(backend, "gloo");
  EXPECT_DOUBLE_EQ(mb, 0.25);
  EXPECT_NE(p.help().find("usage: bench single|ddp [gloo|mpi [MB]]"), std::string::npos)
      << p.help();
  cli::Parser q("bench", "A bench.");
  q.positional("MODE", &mode, "mode", {"single", "ddp"}).positionals_required(1);
  EXPECT_EQ(error_of(q, {}), "missing MODE");
  EXPECT_EQ(error_of(q, {"single", "extra"}), "unexpected argument 'extra'");
  EXPECT_EQ(error_of(p, {"ddp", "gloo", "-5"}),
            "MB is out of range: expected a number from 0.001 to 100, got -5");
  // After --, everything is positional.
  std::string word;
  cli::Parser r("prog", "");
  r.positional("WORD", &word, "a word");
  EXPECT_TRUE(r.parse({"--", "--not-an-option"}, help));
  EXPECT_EQ(word, "--not-an-option");
}

TEST(Cli, ParserMisuseIsAnError) {
  int64_t x = 0;
  cli::Parser p("prog", "");
  p.option("--x", &x, 0, 1, "x");
  EXPECT_ERROR("cli::Parser: --x is defined twice", p.option("--x", &x, 0, 1, "x"));
  EXPECT_ERROR("cli::Parser::given: no option --y", p.given("--y"));
  cli::Parser empty("prog", "");
  EXPECT_ERROR("cli::Parser::metavar: no option added yet", empty.metavar("FILE"));
}

TEST(Cli, UserMessageHidesTheCheckAndSourceUnlessVerbose) {
  try {
    BRASA_CHECK(1 + 1 == 3, "arithmetic: expected 2");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_EQ(cli::user_message(e, false), "arithmetic: expected 2");
    // what() (what an uncaught error prints) is the message and a relative location only.
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("arithmetic: expected 2\n  at tests/core/util/cli_test.cpp:", 0), 0u)
        << what;
    EXPECT_EQ(what.find("check failed"), std::string::npos) << what;
    const std::string verbose = cli::user_message(e, true);
    EXPECT_NE(verbose.find("check failed: 1 + 1 == 3"), std::string::npos) << verbose;
    // Source locations are relative to the source tree.
    EXPECT_NE(verbose.find("at tests/core/util/cli_test.cpp:"), std::string::npos) << verbose;
  }
  std::runtime_error plain("plain error");
  EXPECT_EQ(cli::user_message(plain, false), "plain error");
}

}  // namespace
}  // namespace brasa
