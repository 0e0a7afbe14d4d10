// The one error type of the core: a message that names what failed, where, and which value.
#pragma once
#include <stdexcept>
#include <string>

namespace sctpm {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

} // namespace sctpm
