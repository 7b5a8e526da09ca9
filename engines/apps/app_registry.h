// The graph apps, declared in one table (app_registry.cc): per app its name, the
// positional argument it takes between PATH and MEM_GB, its result file and its run
// call. The app binaries' command lines (app_main.cc) and run-jobs' APP[:ARG] entries
// (parsing, defaults, help and errors: jobs/job_spec.cc) are derived from it.
// engines/CMakeLists.txt builds one binary per name of GRAPHFS_APPS, which must list
// the same names in the same order (checked when app_registry.cc compiles).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/result.h"
#include "engines/apps/apps.h"

namespace graphfs::engine {

enum class AppArgType {
  kNone,
  // A whole number (START, ITERATIONS): any int64 on the app's command line (the app
  // checks its range); run-jobs accepts only >= 0.
  kInteger,
  // A real number (EPSILON): any double on the app's command line (the app checks it);
  // run-jobs accepts only > 0.
  kPositiveNumber,
};

// The positional argument between PATH and MEM_GB.
struct AppArg {
  AppArgType type = AppArgType::kNone;
  const char* name = nullptr;         // "START": in the app's and run-jobs' --help
  const char* help = nullptr;         // its line in the app's --help
  const char* job_default = nullptr;  // run-jobs' value when a --jobs entry gives none
};

// The argument as the app's command line parsed it: `integer` for kInteger, `number`
// for kPositiveNumber.
struct AppArgValue {
  int64_t integer = 0;
  double number = 0;
};

// Whether an app takes --reentry N, and what it does to results.
enum class AppReentry {
  kNone,       // not a relaxation: the app refuses --reentry N > 0 and says why
  kIdentical,  // a relaxation whose fixpoint ignores update order (bfs, sssp, wcc)
  kTolerance,  // pagerank-delta: within its epsilon-defined tolerance (pagerank_delta.cc)
};

struct AppSpec {
  const char* name;  // the binary, and APP in run-jobs' --jobs
  AppArg arg;
  const char* result_file;  // the per-vertex result in the graph directory (apps.h)
  Result<AppResult> (*run)(const AppConfig& config, const AppArgValue& arg);
  AppReentry reentry = AppReentry::kNone;
  int default_reentry = 0;  // the binary's --reentry when none is given (apps.h, kDefaultReentry)
};

// Every app, in the table's order (bfs, wcc, sssp, pagerank, pagerank-delta, spmv, wcc-uf).
std::span<const AppSpec> Apps();
// The app called `name`, or null.
const AppSpec* FindApp(std::string_view name);

}  // namespace graphfs::engine
