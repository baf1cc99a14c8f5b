#include <brasa/util/cli.h>
#include <brasa/util/error.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace brasa::cli {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

int64_t parse_int(const std::string& what, const std::string& text, int64_t lo, int64_t hi) {
  const std::string expected =
      "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  const bool whole = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0])) &&
                     end == text.c_str() + text.size();
  if (!whole) throw UsageError(what + " expects " + expected + ", got " + quoted(text));
  if (errno == ERANGE || v < lo || v > hi)
    throw UsageError(what + " is out of range: expected " + expected + ", got " + text);
  return v;
}

double parse_double(const std::string& what, const std::string& text, double lo, double hi) {
  const std::string expected = "a number from " + number_text(lo) + " to " + number_text(hi);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const bool whole = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0])) &&
                     end == text.c_str() + text.size();
  if (!whole || std::isnan(v))
    throw UsageError(what + " expects " + expected + ", got " + quoted(text));
  if (errno == ERANGE || !(v >= lo && v <= hi))
    throw UsageError(what + " is out of range: expected " + expected + ", got " + text);
  return v;
}

Parser::Parser(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {}

Parser& Parser::add(Spec spec) {
  BRASA_CHECK(find(spec.name) == nullptr, "cli::Parser: ", spec.name, " is defined twice");
  specs_.push_back(std::move(spec));
  return *this;
}

Parser::Spec* Parser::find(const std::string& name) {
  for (auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

Parser& Parser::option(const std::string& name, int64_t* out, int64_t lo, int64_t hi,
                       const std::string& help) {
  return add({name, "N", help, true, false, false,
              [=](const std::string& v) { *out = parse_int(name, v, lo, hi); }});
}

Parser& Parser::option(const std::string& name, int* out, int lo, int hi, const std::string& help) {
  return add({name, "N", help, true, false, false,
              [=](const std::string& v) { *out = static_cast<int>(parse_int(name, v, lo, hi)); }});
}

Parser& Parser::option(const std::string& name, double* out, double lo, double hi,
                       const std::string& help) {
  return add({name, "X", help, true, false, false,
              [=](const std::string& v) { *out = parse_double(name, v, lo, hi); }});
}

// Accepts `v` when `choices` is empty or holds it.
static std::function<void(const std::string&)> set_text(const std::string& name, std::string* out,
                                                        std::vector<std::string> choices) {
  return [=](const std::string& v) {
    if (!choices.empty() && std::find(choices.begin(), choices.end(), v) == choices.end())
      throw UsageError(name + " must be one of " + join(choices, ", ") + ", got " + quoted(v));
    if (choices.empty() && v.empty()) throw UsageError(name + " must not be empty");
    *out = v;
  };
}

Parser& Parser::option(const std::string& name, std::string* out, const std::string& help,
                       std::vector<std::string> choices) {
  const std::string metavar = choices.empty() ? "TEXT" : join(choices, "|");
  return add({name, metavar, help, true, false, false, set_text(name, out, std::move(choices))});
}

Parser& Parser::flag(const std::string& name, bool* out, const std::string& help) {
  return add({name, "", help, false, false, false, [=](const std::string&) { *out = true; }});
}

Parser& Parser::positional(const std::string& name, std::string* out, const std::string& help,
                           std::vector<std::string> choices) {
  const std::string metavar = choices.empty() ? name : join(choices, "|");
  return add({name, metavar, help, true, true, false, set_text(name, out, std::move(choices))});
}

Parser& Parser::positional(const std::string& name, double* out, double lo, double hi,
                           const std::string& help) {
  return add({name, name, help, true, true, false,
              [=](const std::string& v) { *out = parse_double(name, v, lo, hi); }});
}

Parser& Parser::positional(const std::string& name, int* out, int lo, int hi,
                           const std::string& help) {
  return add({name, name, help, true, true, false,
              [=](const std::string& v) { *out = static_cast<int>(parse_int(name, v, lo, hi)); }});
}

Parser& Parser::positionals_required(size_t n) {
  required_positionals_ = n;
  return *this;
}

Parser& Parser::metavar(const std::string& text) {
  BRASA_CHECK(!specs_.empty(), "cli::Parser::metavar: no option added yet");
  specs_.back().metavar = text;
  return *this;
}

bool Parser::given(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return s.seen;
  BRASA_ERROR("cli::Parser::given: no option ", name);
}

std::string Parser::help() const {
  // The usage line's words, wrapped at 80 columns under the program's name.
  std::vector<std::string> words;
  size_t pos_index = 0;
  int open_brackets = 0;
  for (const auto& s : specs_) {
    if (s.positional) {
      const bool optional = pos_index++ >= required_positionals_;
      words.push_back(optional ? "[" + s.metavar : s.metavar);
      open_brackets += optional;
    }
  }
  if (open_brackets > 0) words.back() += std::string(open_brackets, ']');
  for (const auto& s : specs_)
    if (!s.positional) words.push_back("[" + s.name + (s.takes_value ? " " + s.metavar : "") + "]");
  words.push_back("[--help]");
  std::string usage = "usage: " + program_;
  const size_t indent = usage.size() + 1;
  size_t column = usage.size();
  for (const auto& w : words) {
    if (column + 1 + w.size() > 80) {
      usage += '\n';
      usage.append(indent - 1, ' ');
      column = indent - 1;
    }
    usage += " " + w;
    column += 1 + w.size();
  }
  std::string lines;
  for (const auto& s : specs_) {
    std::string left =
        "  " + (s.positional ? s.name : s.name + (s.takes_value ? " " + s.metavar : ""));
    if (left.size() < 26)
      left.resize(26, ' ');
    else
      left += "\n" + std::string(26, ' ');
    // The help text, wrapped at 80 columns.
    std::istringstream help_words(s.help);
    size_t col = 26;
    for (std::string w; help_words >> w;) {
      if (col > 26 && col + 1 + w.size() > 80) {
        left += "\n" + std::string(26, ' ');
        col = 26;
      }
      left += (col > 26 ? " " : "") + w;
      col += (col > 26 ? 1 : 0) + w.size();
    }
    lines += left + "\n";
  }
  return description_ + "\n\n" + usage + "\n\n" + lines;
}

bool Parser::parse(const std::vector<std::string>& args, std::ostream& help_out) {
  std::vector<Spec*> positionals;
  for (auto& s : specs_)
    if (s.positional) positionals.push_back(&s);
  size_t next_positional = 0;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!options_done && (arg == "--help" || arg == "-h")) {
      help_out << help();
      return false;
    }
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    if (options_done || arg.size() < 2 || arg[0] != '-' ||
        (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.')) {
      if (next_positional == positionals.size())
        throw UsageError("unexpected argument " + quoted(arg));
      Spec* s = positionals[next_positional++];
      s->set(arg);
      s->seen = true;
      continue;
    }
    std::string name = arg, value;
    const size_t eq = arg.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) name = arg.substr(0, eq), value = arg.substr(eq + 1);
    Spec* s = find(name);
    if (s == nullptr || s->positional) throw UsageError("unknown option " + quoted(name));
    if (!s->takes_value) {
      if (inline_value) throw UsageError(name + " takes no value");
    } else if (!inline_value) {
      if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
      value = args[++i];
    }
    s->set(value);
    s->seen = true;
  }
  if (next_positional < required_positionals_)
    throw UsageError("missing " + positionals[next_positional]->name);
  return true;
}

void Parser::parse_or_exit(int argc, char** argv) {
  try {
    if (!parse(std::vector<std::string>(argv + 1, argv + argc), std::cout)) std::exit(0);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s\n(see %s --help)\n", program_.c_str(), e.what(), program_.c_str());
    std::exit(2);
  }
}

std::string user_message(const std::exception& e, bool verbose) {
  const auto* error = dynamic_cast<const Error*>(&e);
  if (!error) return e.what();
  if (!verbose) return error->message();
  std::string out = e.what();
  if (!error->condition().empty()) out += "\n  check failed: " + error->condition();
  return out;
}

}  // namespace brasa::cli
