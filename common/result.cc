#include "common/result.h"

#include <cstring>

namespace graphfs {

Error Error::FromErrno(const std::string& what) { return FromErrno(errno, what); }

Error Error::FromErrno(int code, const std::string& what) {
  return Error(code, what + ": " + std::strerror(code));
}

}  // namespace graphfs
