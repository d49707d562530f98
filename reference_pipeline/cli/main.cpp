// The `ltt` program: one executable, one subcommand per task (docs/cli.md).
//
//   ltt <subcommand> [flags]    run it; `ltt <subcommand> --help` lists its flags
//   ltt --help | ltt --version (-V): the version, the CPU target, the compiler
//
// Exit codes: 0 success; 2 bad input (one line on stderr naming the flag, file or line);
// 1 anything unexpected (a bug, out of memory, standard output not writable). Standard
// output is buffered and written only when the subcommand succeeds, so a failure never
// leaves half a JSON object or half a CSV behind.

#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

#include "subcommand.hpp"
#include "version.hpp"

namespace {

using ltt::cli::Invocation;

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*run)(const Invocation&);
};

#define LTT_CLI_ENTRY(name, summary) {#name, summary, ltt::cli::run_##name},
constexpr Subcommand subcommands[] = {LTT_CLI_SUBCOMMANDS(LTT_CLI_ENTRY)};
#undef LTT_CLI_ENTRY

std::string program_usage() {
  std::string text =
      "usage: ltt <subcommand> [flags]\n\n"
      "Certified composition of offline RL training sets.\n\nsubcommands:\n";
  for (const Subcommand& s : subcommands) {
    std::string name(s.name);
    name.resize(10, ' ');
    text += ltt::cli::cat("  ", name, s.summary, "\n");
  }
  text +=
      "\n`ltt <subcommand> --help` lists its flags. Every subcommand but `label` prints a\n"
      "summary, or exactly one JSON object with --json. Exit 0 on success, 2 on bad input, 1\n"
      "otherwise.\n"
      "`ltt --version` (or -V) prints the version and the build.\n";
  return text;
}

// Messages are printed as one line whatever they contain.
std::string one_line(std::string_view text) {
  std::string line(text);
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  return line;
}

int fail(std::string_view who, std::string_view message, int code) {
  std::cerr << who << ": " << one_line(message) << std::endl;
  return code;
}

int run(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) return fail("ltt", "missing subcommand (see ltt --help)", 2);
  const std::string_view first = args.front();
  if (first == "--help" || first == "-h" || first == "help") {
    std::cout << program_usage();
    return 0;
  }
  if (first == "--version" || first == "-V") {
    std::cout << ltt::cli::version_text();
    return 0;
  }
  const Subcommand* chosen = nullptr;
  for (const Subcommand& s : subcommands)
    if (s.name == first) chosen = &s;
  if (chosen == nullptr) {
    std::string known;
    for (const Subcommand& s : subcommands)
      known += ltt::cli::cat(known.empty() ? "" : ", ", s.name);
    return fail(
        "ltt",
        ltt::cli::cat("unknown subcommand ", ltt::cli::in_quotes(first), " (known: ", known, ")"),
        2);
  }

  const std::string who = ltt::cli::cat("ltt ", chosen->name);
  std::ostringstream out;
  const Invocation call{chosen->name, std::span(args).subspan(1), out, std::cerr};
  int code = 0;
  try {
    code = chosen->run(call);
  } catch (const ltt::cli::BadInput& e) {
    return fail(who, e.what(), 2);
  } catch (const std::invalid_argument& e) {
    return fail(who, e.what(), 2);
  } catch (const std::bad_alloc&) {
    return fail(who, "out of memory", 1);
  } catch (const std::exception& e) {
    return fail(who, ltt::cli::cat("internal error: ", e.what()), 1);
  } catch (...) {
    return fail(who, "internal error: unknown exception", 1);
  }
  const std::string text = std::move(out).str();
  std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cout.flush();
  if (!std::cout) return fail(who, "cannot write to standard output", 1);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int code = run(argc, argv);
    // The top-level texts (--help, --version) meet a full disk here; a subcommand's output
    // was checked in run(), which reported any failure and returned non-zero.
    std::cout.flush();
    if (!std::cout && code == 0) return fail("ltt", "cannot write to standard output", 1);
    return code;
  } catch (...) {
    std::fputs("ltt: internal error\n", stderr);
    return 1;
  }
}
