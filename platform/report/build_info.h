// The build a figure came from: the version and the source tree's commit
// (git describe --always --dirty at build time, cmake/nvmesim_commit.cmake;
// "unknown" outside a git checkout).
#pragma once

namespace nvmesim::platform {

const char* build_commit();  // defined in the generated build/generated/build_commit.cpp

}  // namespace nvmesim::platform
