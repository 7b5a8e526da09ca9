// The daemon's log: one timestamped line per event (errors, fault injection, layout
// changes), to stderr or to the file of -o log=FILE. Used by the daemon's layers (fusefs/,
// volume/); libraries below them return errors as values instead of logging.
#pragma once

#include <cstdio>
#include <string>

namespace graphfs {

// Where log lines go from now on (stderr by default); the caller keeps `f` open.
void SetLogFile(FILE* f);
void LogError(const std::string& message);

}  // namespace graphfs
