#pragma once
// A small command-line parser for Brasa's programs (the examples, the
// benchmarks): one set of rules everywhere.
//   - options are `--name VALUE` or `--name=VALUE`; flags take no value;
//   - numbers are parsed whole ("2x" is refused) and range-checked, and every
//     error names the option and what it expected;
//   - `--help` / `-h` prints the usage to stdout and exits 0; a bad command
//     line prints the error and a pointer to --help to stderr and exits 2.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace brasa::cli {

// A bad command line (exit status 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whole-text number parsing with a range; the error names `what` (an
// option's name).
int64_t parse_int(const std::string& what, const std::string& text, int64_t lo, int64_t hi);
double parse_double(const std::string& what, const std::string& text, double lo, double hi);

class Parser {
 public:
  // `description` opens --help; the usage line is made from the options.
  Parser(std::string program, std::string description);

  // Options. `out` keeps its value as the default when the option is absent.
  Parser& option(const std::string& name, int64_t* out, int64_t lo, int64_t hi,
                 const std::string& help);
  Parser& option(const std::string& name, int* out, int lo, int hi, const std::string& help);
  Parser& option(const std::string& name, double* out, double lo, double hi,
                 const std::string& help);
  // A text option; with `choices`, the value must be one of them.
  Parser& option(const std::string& name, std::string* out, const std::string& help,
                 std::vector<std::string> choices = {});
  Parser& flag(const std::string& name, bool* out, const std::string& help);

  // Positional arguments, in the order they are added; the first `required`
  // ones must be given (see positionals_required).
  Parser& positional(const std::string& name, std::string* out, const std::string& help,
                     std::vector<std::string> choices = {});
  Parser& positional(const std::string& name, double* out, double lo, double hi,
                     const std::string& help);
  Parser& positional(const std::string& name, int* out, int lo, int hi, const std::string& help);
  Parser& positionals_required(size_t n);
  // Names the value of the option added last in the help (FILE, DIR, ...).
  Parser& metavar(const std::string& text);

  // Parses `args` (without the program name). Returns false when --help was
  // asked for (the help is written to `help_out`); throws UsageError.
  bool parse(const std::vector<std::string>& args, std::ostream& help_out);
  // For main(): --help goes to stdout and exits 0; errors go to stderr and
  // exit 2.
  void parse_or_exit(int argc, char** argv);

  // Whether the option was given on the command line.
  bool given(const std::string& name) const;
  std::string help() const;
  const std::string& program() const { return program_; }

 private:
  struct Spec {
    std::string name, metavar, help;
    bool takes_value = true, positional = false, seen = false;
    std::function<void(const std::string&)> set;
  };
  Parser& add(Spec spec);
  Spec* find(const std::string& name);

  std::string program_, description_;
  std::vector<Spec> specs_;
  size_t required_positionals_ = 0;
};

// What a program shows a user for a runtime error: the message alone, or with
// the failed check and source location when `verbose`.
std::string user_message(const std::exception& e, bool verbose);

}  // namespace brasa::cli
