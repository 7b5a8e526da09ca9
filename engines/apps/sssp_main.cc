#include "engines/apps/app_main.h"

int main(int argc, char** argv) { return graphfs::engine::AppMain(graphfs::engine::AppKind::kSssp, argc, argv); }
