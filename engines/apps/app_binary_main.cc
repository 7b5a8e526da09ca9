// main() of every app binary: engines/CMakeLists.txt compiles this file once per name of
// GRAPHFS_APPS, with GRAPHFS_APP defined to that name.
#include "engines/apps/app_main.h"

int main(int argc, char** argv) { return graphfs::engine::AppMain(GRAPHFS_APP, argc, argv); }
