// Command lines of the app binaries, in GridGraph's shape:
//   bfs PATH START [MEM_GB]          wcc PATH [MEM_GB]
//   sssp PATH START [MEM_GB]         pagerank PATH ITERATIONS [MEM_GB]
//   pagerank-delta PATH EPSILON [MEM_GB]   spmv PATH [MEM_GB]
// MEM_GB defaults to 8 like GridGraph's and may be fractional. Every app
// also takes --threads N, --verbose, and --graphfs [--graphfs-partition SIZE]
// (integrated mode, see apps.h). Prints the result line on stdout; errors on
// stderr with exit status 1 (2 for usage). The positional argument of each app
// (START, ITERATIONS, EPSILON or none) comes from the app registry (app_registry.h).
#pragma once

namespace graphfs::engine {

// main() of the binary of `app`, a name of the registry (app_binary_main.cc).
int AppMain(const char* app, int argc, char** argv);

}  // namespace graphfs::engine
