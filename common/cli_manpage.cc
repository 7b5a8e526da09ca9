#include "common/cli_manpage.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "common/manpage.h"

namespace graphfs {

namespace {

// The description without a leading "NAME: " (several apps start with their own name).
std::string Description(const CLI::App& app, const std::string& name) {
  std::string d = app.get_description();
  if (d.rfind(name + ":", 0) == 0) d = d.substr(name.size() + 1);
  while (!d.empty() && d.front() == ' ') d.erase(d.begin());
  return d;
}

// NAME's summary: the first clause, parenthesised asides dropped, no final period, and a lower-case
// first letter unless it starts a name (GridGraph).
std::string Summary(std::string d) {
  for (const char* end : {"; ", ". ", " \u2014 "}) d = d.substr(0, d.find(end));
  std::string s;
  int depth = 0;
  for (char c : d) {
    if (c == '(') ++depth;
    if (depth == 0) s += c;
    if (c == ')' && depth > 0) --depth;
  }
  for (size_t at; (at = s.find("  ")) != std::string::npos;) s.erase(at, 1);
  for (size_t at; (at = s.find(" ,")) != std::string::npos;) s.erase(at, 1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '.')) s.pop_back();
  const std::string first_word = s.substr(0, s.find(' '));
  size_t capitals = 0;
  for (char c : first_word) capitals += std::isupper(static_cast<unsigned char>(c)) ? 1 : 0;
  if (!s.empty() && std::isupper(static_cast<unsigned char>(s[0])) && capitals == 1)
    s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// Help text as roff: words that are options (--unit, -o, (--force) keep their hyphens as
// hyphen-minus and are never broken at them; the rest is plain text.
std::string HelpText(const std::string& text) {
  std::string out, word;
  auto flush = [&] {
    const size_t dash = word.find_first_not_of("([\"'");
    const bool option = dash != std::string::npos && word[dash] == '-' && word.size() > dash + 1 &&
                        (word[dash + 1] == '-' || std::isalpha(static_cast<unsigned char>(word[dash + 1])));
    out += option ? man::Literal(word) : man::Escape(word);
    word.clear();
  };
  for (char c : text) {
    if (c == ' ' || c == '\n') {
      flush();
      out += c;
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

bool Visible(const CLI::Option* o) { return !o->get_group().empty(); }

// "-q, --quiet" in bold (in the synopsis only the long name); the value's type in italics, as
// --help shows it.
std::string OptionHead(const CLI::Option* o, bool one_name = false) {
  std::vector<std::string> names;
  for (const auto& s : o->get_snames()) names.push_back("-" + s);
  for (const auto& l : o->get_lnames()) names.push_back("--" + l);
  if (one_name && !names.empty()) names.erase(names.begin(), names.end() - 1);
  std::string head;
  for (const auto& n : names) head += (head.empty() ? "" : ", ") + std::string("\\fB") + man::Literal(n) + "\\fR";
  if (o->get_type_size() != 0 && !o->get_type_name().empty())
    head += " \\fI" + man::Escape(o->get_type_name()) + "\\fR";
  if (o->get_type_size() != 0 && o->get_expected_max() >= CLI::detail::expected_max_vector_size) head += " ...";
  return head;
}

std::string PositionalUsage(const CLI::Option* o) {
  std::string u = "\\fI" + man::Escape(o->get_name(true, false)) + "\\fR";
  if (o->get_expected_max() >= CLI::detail::expected_max_vector_size) u += "...";
  return o->get_required() ? u : "[" + u + "]";
}

std::string Help(const CLI::Option* o) {
  std::string text = o->get_description();
  if (o->get_required()) text += " (required)";
  if (!o->get_default_str().empty()) text += " (default: " + o->get_default_str() + ")";
  return man::Lines(HelpText(text));
}

}  // namespace

std::string CliManPage(const CLI::App& app, const std::string& name, int section) {
  const auto options = app.get_options([](const CLI::Option* o) { return Visible(o) && o->nonpositional(); });
  const auto positionals = app.get_options([](const CLI::Option* o) { return Visible(o) && !o->nonpositional(); });
  const auto commands = app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); });
  std::string description = Description(app, name);
  std::string page = man::TitleLine(name, section);
  page += ".SH NAME\n" + man::Literal(name) + " \\- " + man::Escape(Summary(description)) + "\n";

  page += ".SH SYNOPSIS\n.B " + man::Literal(name) + "\n";
  std::string usage;
  if (!options.empty()) usage += "[\\fIOPTIONS\\fR]";
  for (const CLI::Option* o : options)
    if (o->get_required()) usage += " " + OptionHead(o, true);
  if (!commands.empty()) usage += " \\fICOMMAND\\fR";
  for (const CLI::Option* o : positionals) usage += " " + PositionalUsage(o);
  if (!usage.empty()) page += man::Lines(usage);

  if (!description.empty()) {
    description[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(description[0])));
    if (description.back() != '.') description += '.';
    page += ".SH DESCRIPTION\n" + man::Lines(HelpText(description));
  }
  if (!positionals.empty()) {
    page += ".SH ARGUMENTS\n";
    for (const CLI::Option* o : positionals) {
      std::string head = "\\fI" + man::Escape(o->get_name(true, false)) + "\\fR";
      if (!o->get_type_name().empty()) head += " (\\fI" + man::Escape(o->get_type_name()) + "\\fR)";
      page += ".TP\n" + man::Lines(head) + Help(o);
    }
  }
  if (!options.empty()) {
    page += ".SH OPTIONS\n";
    for (const CLI::Option* o : options) page += ".TP\n" + man::Lines(OptionHead(o)) + Help(o);
  }
  if (!commands.empty()) {
    page += ".SH COMMANDS\n";
    for (const CLI::App* sub : commands)
      page += ".TP\n\\fB" + man::Literal(sub->get_name()) + "\\fR\n" + man::Lines(HelpText(sub->get_description()));
  }
  if (std::string footer = app.get_footer(); !footer.empty()) {
    for (size_t at = 0; (at = footer.find('\n', at)) != std::string::npos; at += 2) footer.insert(at, "\n");
    page += ".SH NOTES\n" + man::Lines(HelpText(footer));  // each line of the footer a paragraph
  }
  if (name != "graphfs") page += ".SH SEE ALSO\n\\fBgraphfs\\fR(1)\n";
  return page;
}

void AddManPageFlag(CLI::App& app, int section) {
  CLI::App* a = &app;
  app.add_flag_callback(
         "--help-man",
         [a, section] {
           // By now the app is named after argv[0] (CLI11 does that when it has no name).
           std::string name = a->get_name();
           if (size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
           std::fputs(CliManPage(*a, name, section).c_str(), stdout);
           throw CLI::Success();
         },
         "print this program's manual page (roff) and exit")
      ->group("")  // hidden: not in --help, nor in the page itself
      ->trigger_on_parse();
}

}  // namespace graphfs
