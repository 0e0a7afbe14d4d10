// SPDX-License-Identifier: BSD-3-Clause
// The unit tests' way to read an sctpm::Error: its message, for tests of what an error says.
#pragma once
#include <string>

#include "error.hpp"

// The message of the sctpm::Error that f throws, or "<no error>" when it throws none.
template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const sctpm::Error& e) {
        return e.what();
    }
    return "<no error>";
}
