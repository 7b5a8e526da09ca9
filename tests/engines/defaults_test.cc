// engines/README.md's defaults table is the code's: every row is made here from the constant the
// programs start from (a default is written once, in the code; the README shows it), and the
// README's table must be exactly these rows. The programs' --help (and so their man pages, which
// print the same table) must show each value, and the README's usage lines may give an option a
// number only where it is that option's default. Likewise the constants its text states: their
// table is made from the code, and where the text gives a value with a constant's name, "24 MiB
// (`kMaxIoBytes`)", the value must be the constant's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/random_seed.h"
#include "common/size_parse.h"
#include "engines/apps/app_registry.h"
#include "engines/apps/apps.h"
#include "engines/core/edge_import.h"
#include "engines/core/edge_stream.h"
#include "engines/core/lattice.h"
#include "engines/core/preprocess.h"
#include "engines/core/reorder.h"
#include "engines/core/rmat.h"
#include "engines/graphfs_client.hpp"
#include "engines/jobs/job_runner.h"
#include "engines/jobs/job_spec.h"
#include "grid/edge.h"
#include "run_binary.h"

namespace graphfs::engine {
namespace {

struct DefaultRow {
  std::vector<std::string> programs;  // whose --help shows it; empty: not a program's (a library call)
  std::string argument;               // as the command line writes it
  std::string value;                  // as --help shows it
  std::string written_in;             // the constant and its file (relative to engines/ where inside it)
};

// A number as CLI11's --help shows a default (16, 0, 0.01).
std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string Joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// The rows the README's table must hold, in its order, from the constants.
std::vector<DefaultRow> ExpectedRows() {
  std::vector<DefaultRow> rows;
  rows.push_back({{"gen-rmat", "gen-grid", "reorder", "gen-update", "run-jobs"}, "`--seed`", Number(kDefaultSeed),
                  "`kDefaultSeed`, `common/random_seed.h`"});
  rows.push_back({{"gen-rmat"}, "`--edge-factor`", Number(RmatOptions().edge_factor),
                  "`RmatOptions::edge_factor`, `core/rmat.h`"});
  rows.push_back({{"gen-grid"}, "`--drop`", Number(LatticeOptions().drop), "`LatticeOptions::drop`, `core/lattice.h`"});
  rows.push_back({{"gen-grid"}, "`--long-edges`", Number(static_cast<double>(LatticeOptions().long_edges)),
                  "`LatticeOptions::long_edges`, `core/lattice.h`"});
  rows.push_back({{"import-edges"},
                  "`--format`",
                  ImportOptions().format == ImportFormat::kMatrixMarket ? "mtx" : "snap",
                  "`ImportOptions::format`, `core/edge_import.h`"});
  rows.push_back({{"import-edges"}, "`--default-weight`", Number(ImportOptions().default_weight),
                  "`ImportOptions::default_weight`, `core/edge_import.h`"});
  rows.push_back({{"preprocess"}, "`-t`", Number(PreprocessOptions().edge_type),
                  "`PreprocessOptions::edge_type`, `core/preprocess.h`"});
  std::vector<std::string> apps;
  for (const AppSpec& app : Apps()) apps.push_back(app.name);
  rows.push_back({apps, "`MEM_GB`", MemGbText(AppConfig().mem_gb), "`kDefaultMemGb`, `apps/apps.h`"});
  // --reentry: the apps that take it, grouped by the default the registry gives them.
  std::map<int, std::vector<std::string>> by_reentry;
  for (const AppSpec& app : Apps()) {
    if (app.reentry != AppReentry::kNone) by_reentry[app.default_reentry].push_back(app.name);
  }
  for (auto it = by_reentry.rbegin(); it != by_reentry.rend(); ++it) {
    const char* constant = it->first == kDefaultReentry ? "`kDefaultReentry`" : "`kDefaultPageRankDeltaReentry`";
    rows.push_back({it->second, "`--reentry`", Number(it->first),
                    std::string(constant) + ", `apps/apps.h` (the registry's `default_reentry`)"});
  }
  rows.push_back({{}, "`AppConfig::reentry` (library calls)", Number(AppConfig().reentry), "`AppConfig`, `apps/apps.h`"});
  rows.push_back({apps, "`--graphfs-partition`", SizeText(AppConfig().partition_bytes),
                  "`Job::kDefaultPartitionBytes`, `graphfs_client.hpp` (`common/jobs_protocol.h`)"});
  // run-jobs' --jobs entries without ARG: the registry's job_default, one row per argument name
  // (bfs and sssp share START), naming the apps that take it.
  std::vector<std::pair<const AppArg*, std::vector<std::string>>> by_argument;
  for (const AppSpec& app : Apps()) {
    if (app.arg.type == AppArgType::kNone) continue;
    auto same = std::find_if(by_argument.begin(), by_argument.end(),
                             [&](const auto& entry) { return std::string(entry.first->name) == app.arg.name; });
    if (same == by_argument.end()) {
      by_argument.push_back({&app.arg, {app.name}});
    } else {
      same->second.push_back(app.name);
    }
  }
  for (const auto& [arg, takers] : by_argument) {
    rows.push_back({{"run-jobs"}, std::string("`--jobs` APP:") + arg->name + " (" + Joined(takers) + ")",
                    arg->job_default, "`AppArg::job_default`, `apps/app_registry.cc`"});
  }
  return rows;
}

std::string TableLine(const DefaultRow& row) {
  const std::string programs = row.programs.empty() ? "-" : Joined(row.programs);
  return "| " + programs + " | " + row.argument + " | " + row.value + " | " + row.written_in + " |";
}

std::vector<std::string> ExpectedTable() {
  std::vector<std::string> lines = {"| program | argument | default | written in |", "|---|---|---|---|"};
  for (const DefaultRow& row : ExpectedRows()) lines.push_back(TableLine(row));
  return lines;
}

std::string ReadReadme() {
  std::ifstream in(std::string(GRAPHFS_SOURCE_DIR) + "/engines/README.md");
  EXPECT_TRUE(in) << "engines/README.md not found";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The table under the README's heading `heading` ("## Defaults"): its lines starting with '|'.
std::vector<std::string> ReadmeTable(const std::string& heading) {
  std::vector<std::string> table;
  bool in_section = false;
  for (const std::string& line : Lines(ReadReadme())) {
    if (line.rfind("## ", 0) == 0) {
      if (in_section) break;
      in_section = line == heading;
      continue;
    }
    if (in_section && line.rfind("|", 0) == 0) table.push_back(line);
  }
  return table;
}

// The README's table under `heading` against the one made from the code: each line that differs,
// then the whole table as it should be (to paste).
void ExpectReadmeTable(const std::string& heading, const std::vector<std::string>& expected) {
  const std::vector<std::string> readme = ReadmeTable(heading);
  bool same = readme.size() == expected.size();
  for (size_t i = 0; i < std::max(readme.size(), expected.size()); ++i) {
    const std::string said = i < readme.size() ? readme[i] : "(no line)";
    const std::string made = i < expected.size() ? expected[i] : "(no line)";
    if (said != made) {
      same = false;
      ADD_FAILURE() << "engines/README.md, \"" << heading << "\", table line " << i + 1 << ":\n  README: " << said
                    << "\n  code:   " << made;
    }
  }
  if (!same) {
    std::string text;
    for (const std::string& line : expected) text += line + "\n";
    ADD_FAILURE() << "the table under \"" << heading << "\" should be:\n" << text;
  }
}

TEST(EngineDefaults, TheReadmeTableIsTheCodes) { ExpectReadmeTable("## Defaults", ExpectedTable()); }

struct ConstantRow {
  std::string name;        // as the text cites it, in backticks
  std::string value;       // as the text writes it
  std::string meaning;
  std::string written_in;  // its file (relative to engines/ where inside it)
};

std::string Mib(uint64_t bytes) {
  EXPECT_EQ(bytes % (1u << 20), 0u);
  return std::to_string(bytes >> 20) + " MiB";
}

std::vector<ConstantRow> ExpectedConstants() {
  return {
      {"kMaxIoBytes", Mib(grid::kMaxIoBytes), "the largest read of a stream (GridGraph's IOSIZE), and of a piece of an LP",
       "`grid/edge.h`"},
      {"IoPage",
       std::to_string(grid::IoPage(grid::EdgeType::kUnweighted)) + " B, " +
           std::to_string(grid::IoPage(grid::EdgeType::kWeighted)) + " B weighted",
       "what reads are rounded to: whole pages of whole records", "`grid/edge.h`"},
      {"kSourceWindowShare", Number(kSourceWindowShare),
       "the share of MEM vertex state may take before the sources are processed in windows", "`core/edge_stream.h`"},
      {"kInPlaceBytes", std::to_string(kInPlaceBytes >> 10) + " KiB",
       "an LP's spans of whole records at least this large are processed where they lie, smaller ones gathered first",
       "`core/edge_stream.h`"},
      {"kPrefetchDistance", std::to_string(kPrefetchDistance),
       "how many records ahead of the one an app's function gets the stream prefetches a target's state",
       "`core/edge_stream.h`"},
      {"kReentryWholeChunksAfter", std::to_string(kReentryWholeChunksAfter),
       "iterations after which an integrated job with reentry asks for whole chunks", "`apps/apps.h`"},
      {"PreprocessOptions::block_buffer_bytes", Mib(PreprocessOptions().block_buffer_bytes),
       "preprocess's block write buffers, all of them together", "`core/preprocess.h`"},
      {"kJobPollInterval", std::to_string(kJobPollInterval.count()) + " ms",
       "how often run-jobs looks for jobs due to start and jobs that ended", "`jobs/job_runner.h`"},
  };
}

TEST(EngineDefaults, TheConstantsTableIsTheCodes) {
  std::vector<std::string> expected = {"| constant | value | what | written in |", "|---|---|---|---|"};
  for (const ConstantRow& row : ExpectedConstants()) {
    expected.push_back("| `" + row.name + "` | " + row.value + " | " + row.meaning + " | " + row.written_in + " |");
  }
  ExpectReadmeTable("## Constants the text states", expected);
}

// "24 MiB (`kMaxIoBytes`)": wherever the text cites a constant after a value, the value is the
// constant's. Every constant of the table is cited so at least once.
TEST(EngineDefaults, TheTextStatesEachConstantsValue) {
  const std::string readme = ReadReadme();
  for (const ConstantRow& row : ExpectedConstants()) {
    const std::string cited = " (`" + row.name + "`)";
    int citations = 0;
    for (size_t at = readme.find(cited); at != std::string::npos; at = readme.find(cited, at + 1)) {
      ++citations;
      const size_t line_start = readme.rfind('\n', at) + 1;
      const std::string before = readme.substr(line_start, at - line_start);
      const bool says_value = before.size() >= row.value.size() &&
                              before.compare(before.size() - row.value.size(), row.value.size(), row.value) == 0;
      EXPECT_TRUE(says_value) << "engines/README.md: \"" << before << cited << "\" should give " << row.name
                              << "'s value, " << row.value;
    }
    EXPECT_GT(citations, 0) << "engines/README.md cites " << row.name << " nowhere as \"" << row.value << cited << "\"";
  }
}

// The entry of `option` in a CLI11 --help: its line and the lines continuing it (indented deeper
// than an option's own line).
std::string HelpEntry(const std::string& help, const std::string& option) {
  const std::regex starts("^  (-[^ ]*,)?" + option + "[ =]");
  std::string entry;
  bool in_entry = false;
  for (const std::string& line : Lines(help + "\n")) {
    if (in_entry && line.rfind("   ", 0) != 0) break;
    if (in_entry || std::regex_search(line + " ", starts)) {
      in_entry = true;
      entry += line + "\n";
    }
  }
  return entry;
}

TEST(EngineDefaults, EveryProgramsHelpShowsIt) {
  for (const DefaultRow& row : ExpectedRows()) {
    // The option as --help names it: `--seed` -> --seed; run-jobs' --jobs rows are its --jobs help's.
    std::string option = row.argument.substr(1, row.argument.find('`', 1) - 1);
    for (const std::string& program : row.programs) {
      const auto run = graphfs::testing::RunBinary({std::string(GRAPHFS_ENGINE_BIN_DIR) + "/" + program, "--help"});
      ASSERT_TRUE(run.exited && run.exit_code == 0) << program << " --help: " << run.How() << "\n" << run.output;
      const std::string entry = HelpEntry(run.output, option);
      ASSERT_FALSE(entry.empty()) << program << " --help has no " << option << ":\n" << run.output;
      std::string shown = "=" + row.value;  // CLI11's default after the type
      if (option == "--jobs") {
        const size_t colon = row.argument.find(':') + 1;
        shown = row.argument.substr(colon, row.argument.find(' ', colon) - colon) + " " + row.value;
      } else if (entry.find(shown) == std::string::npos) {
        shown = "default " + row.value;  // a default the help text says in words
      }
      EXPECT_NE(entry.find(shown), std::string::npos)
          << program << " --help should show " << row.argument << "'s default " << row.value << ":\n" << entry;
    }
  }
}

// A usage line (a line of a code block that runs a program of the table, with the lines it
// continues onto) that gives an optional argument a number, `[--seed 1]`, says that number is
// its default: it must be the table's. Placeholders (`[--seed S]`) say nothing.
TEST(EngineDefaults, UsageLinesGiveNoOtherDefault) {
  std::map<std::pair<std::string, std::string>, std::string> defaults;
  for (const DefaultRow& row : ExpectedRows()) {
    const std::string option = row.argument.substr(1, row.argument.find('`', 1) - 1);
    for (const std::string& program : row.programs) defaults[{program, option}] = row.value;
  }
  const std::regex bracketed(R"(\[(--?[a-z][a-z-]*) ([0-9][^\] |]*)\])");
  bool in_code = false;
  std::string program;
  int checked = 0;
  for (const std::string& line : Lines(ReadReadme())) {
    if (line.rfind("```", 0) == 0) {
      in_code = !in_code;
      program.clear();
      continue;
    }
    if (!in_code) continue;
    // A new command unless the previous line continued onto this one.
    if (program.empty() || line.empty() || line[0] != ' ') program = line.substr(0, line.find(' '));
    for (auto it = std::sregex_iterator(line.begin(), line.end(), bracketed); it != std::sregex_iterator(); ++it) {
      const auto known = defaults.find({program, (*it)[1].str()});
      ++checked;
      ASSERT_NE(known, defaults.end()) << "engines/README.md: \"" << line << "\" gives " << (*it)[1]
                                       << " of " << program << " a value; its default is not in the defaults table";
      EXPECT_EQ((*it)[2].str(), known->second) << "engines/README.md: \"" << line << "\"";
    }
    if (line.empty() || line.back() != '\\') program.clear();
  }
  RecordProperty("usage_values_checked", checked);
}

}  // namespace
}  // namespace graphfs::engine
