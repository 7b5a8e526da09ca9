#include "engines/apps/app_registry.h"

namespace graphfs::engine {

namespace {

// Adding an app: its Run function (apps.h, a .cc in graphfs_engine), one entry here, and
// its name in GRAPHFS_APPS (engines/CMakeLists.txt), at the same position.
constexpr AppSpec kApps[] = {
    {"bfs", {AppArgType::kInteger, "START", "start vertex id", "0"}, "bfs.level",
     [](const AppConfig& config, const AppArgValue& arg) { return RunBfs(config, arg.integer); }, AppReentry::kIdentical, kDefaultReentry},
    {"wcc", {}, "wcc.label", [](const AppConfig& config, const AppArgValue&) { return RunWcc(config); }, AppReentry::kIdentical, kDefaultReentry},
    {"sssp", {AppArgType::kInteger, "START", "start vertex id", "0"}, "sssp.distance",
     [](const AppConfig& config, const AppArgValue& arg) { return RunSssp(config, arg.integer); }, AppReentry::kIdentical, kDefaultReentry},
    {"pagerank", {AppArgType::kInteger, "ITERATIONS", "number of iterations", "10"}, "pagerank.rank",
     [](const AppConfig& config, const AppArgValue& arg) { return RunPageRank(config, arg.integer); }},
    {"pagerank-delta",
     {AppArgType::kPositiveNumber, "EPSILON", "a vertex stays active while its residual exceeds this", "0.01"},
     "pagerank-delta.rank",
     [](const AppConfig& config, const AppArgValue& arg) { return RunPageRankDelta(config, arg.number); }, AppReentry::kTolerance, kDefaultPageRankDeltaReentry},
    {"spmv", {}, "spmv.output", [](const AppConfig& config, const AppArgValue&) { return RunSpmv(config); }},
    {"wcc-uf", {}, "wcc-uf.label", [](const AppConfig& config, const AppArgValue&) { return RunWccUnionFind(config); }},
};

// True if `list` (names separated by one blank) names kApps' apps in kApps' order.
constexpr bool SameNames(const char* list) {
  for (const AppSpec& app : kApps) {
    for (const char* c = app.name; *c != '\0'; ++c, ++list) {
      if (*list != *c) return false;
    }
    if (*list == ' ') {
      ++list;
    } else if (*list != '\0') {
      return false;
    }
  }
  return *list == '\0';
}

// engines/CMakeLists.txt passes its GRAPHFS_APPS (one binary each) as GRAPHFS_APP_NAMES.
#ifndef GRAPHFS_APP_NAMES
#error "GRAPHFS_APP_NAMES must list the app binaries (engines/CMakeLists.txt defines it)"
#endif
static_assert(SameNames(GRAPHFS_APP_NAMES), "GRAPHFS_APPS in engines/CMakeLists.txt must name kApps' apps, in order");

}  // namespace

std::span<const AppSpec> Apps() { return kApps; }

const AppSpec* FindApp(std::string_view name) {
  for (const AppSpec& app : kApps) {
    if (name == app.name) return &app;
  }
  return nullptr;
}

}  // namespace graphfs::engine
