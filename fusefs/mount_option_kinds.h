// The pieces of graphfs's mount-option table (mount_options.cc), and the table itself for the
// texts made from it (mount_options_text.cc). Each kind of option — a whole number, a flag, a
// size, a choice, free text, a budget — is a parser that stores into the field its consumer
// reads and, where the default is a value, a way to show that field: the table's default is the
// field's value in a MountOptions as constructed, so no default is written twice.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/size_parse.h"
#include "fusefs/mount_options.h"

namespace graphfs::mount_option {

using volume::VolumeOptions;

// Where a parser stores: a field of the volume's options or of the daemon's.
template <class T>
using Field = std::function<T&(MountOptions&)>;

template <class T>
Field<T> Vol(T VolumeOptions::*member) {
  return [member](MountOptions& o) -> T& { return o.volume.*member; };
}
template <class T>
Field<T> Own(T MountOptions::*member) {
  return [member](MountOptions& o) -> T& { return o.*member; };
}

using Apply = std::function<Status(MountOptions&, const std::string& key, const std::string& value)>;
// An option's value in `o` as the table shows it (markdown). Its default is what it shows for a
// MountOptions as constructed: a default is written once, where its field is declared (named
// constants: volume/volume_options.h, mount_options.h), and --help, graphfs(1) and README.md's
// table read it from there.
using Show = std::function<std::string(MountOptions& o)>;

// How an option is read (its parser) and shown (its value; null where the default is a rule,
// which the table says in words instead).
struct Handling {
  Apply apply;
  Show show;
};

inline std::string Literal(const std::string& text) { return "`" + text + "`"; }

inline Error Expected(const std::string& key, const std::string& value, const std::string& what) {
  return Error(EINVAL, "option " + key + "=" + value + ": expected " + what);
}

template <class Int>
Result<Int> ParseWhole(const std::string& key, const std::string& value, Int lo, Int hi) {
  Int v{};
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || v < lo || v > hi)
    return Expected(key, value, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return v;
}

template <class Int>
Handling Whole(Field<Int> field, Int lo, Int hi) {
  return {[=](MountOptions& o, const std::string& key, const std::string& value) -> Status {
            auto v = ParseWhole<Int>(key, value, lo, hi);
            if (!v.ok()) return v.error();
            field(o) = *v;
            return Status::Ok();
          },
          [=](MountOptions& o) { return Literal(std::to_string(field(o))); }};
}

inline Handling Flag(Field<bool> field) {
  return {[=](MountOptions& o, const std::string& key, const std::string& value) -> Status {
            if (value == "1" || value == "yes" || value == "true" || value == "on") field(o) = true;
            else if (value == "0" || value == "no" || value == "false" || value == "off") field(o) = false;
            else return Expected(key, value, "0 or 1");
            return Status::Ok();
          },
          [=](MountOptions& o) { return Literal(field(o) ? "1" : "0"); }};
}

// A size from `min` to `max`; outside, "option KEY=VALUE: `why`".
inline Handling Size(Field<uint64_t> field, uint64_t min, uint64_t max, const std::string& why) {
  return {[=](MountOptions& o, const std::string& key, const std::string& value) -> Status {
            auto v = ParseSize(value);
            if (!v.ok()) return v.error().Wrap("option " + key);
            if (*v < min || *v > max) return Error(EINVAL, "option " + key + "=" + value + ": " + why);
            field(o) = *v;
            return Status::Ok();
          },
          [=](MountOptions& o) { return Literal(SizeText(field(o))); }};
}
inline Handling Size(Field<uint64_t> field) { return Size(std::move(field), 0, UINT64_MAX, ""); }

// Free text; unset (empty) by default, which the table says in words.
inline Handling Text(Field<std::string> field) {
  return {[=](MountOptions& o, const std::string&, const std::string& value) -> Status {
            field(o) = value;
            return Status::Ok();
          },
          nullptr};
}

// One of the names, stored as what it names.
template <class T>
struct Choice {
  std::string name;
  T value;
};

template <class T>
Handling OneOf(Field<T> field, std::vector<Choice<T>> choices) {
  return {[=](MountOptions& o, const std::string& key, const std::string& value) -> Status {
            std::string expected;
            for (size_t i = 0; i < choices.size(); ++i) {
              if (value == choices[i].name) {
                field(o) = choices[i].value;
                return Status::Ok();
              }
              expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + key + "=" + choices[i].name;
            }
            return Expected(key, value, expected);
          },
          [=](MountOptions& o) {
            for (const auto& c : choices)
              if (field(o) == c.value) return Literal(c.name);
            return std::string("none of its choices");  // never: every field starts as one of them
          }};
}

template <class T>
std::string Names(const std::vector<Choice<T>>& choices) {
  std::string s;
  for (const auto& c : choices) s += (s.empty() ? "" : "|") + c.name;
  return s;
}

// memory= and cache_size=: unset until given (ResolveMountOptions applies kDefaultMemory), so
// their defaults are said in words.
inline Handling Budget(bool memory) {
  return {[memory](MountOptions& o, const std::string& key, const std::string& value) -> Status {
            auto v = ParseSizeOrPercentSpec(value);
            if (!v.ok()) return v.error().Wrap("option " + key);
            if (memory) {
              if (v->value == 0)
                return Error(EINVAL, "option memory=" + value + ": a budget of nothing (leave memory= out for none)");
              o.memory = *v;
            } else {
              o.cache_size = *v;
              o.cache_size_given = true;
            }
            return Status::Ok();
          },
          nullptr};
}

// An option whose parser is its own, shown by `show` (or not: a rule).
inline Handling Custom(Apply apply, Show show = nullptr) { return {std::move(apply), std::move(show)}; }

// A row of the table.
struct OptionSpec {
  std::string key;
  std::string value;         // what the value looks like: SIZE, N, or the choices a|b
  std::string default_rule;  // markdown; "": the default is the field's own value (Handling::show)
  std::string help;          // markdown, one paragraph
  Handling handling;
};

// The table, in the order --help and README.md show it.
const std::vector<OptionSpec>& Table();
// What the table shows as `spec`'s default: its rule, else its field's value in a MountOptions
// as constructed.
std::string DefaultOf(const OptionSpec& spec);

}  // namespace graphfs::mount_option
