// Reading a file whole: the one reader of suite/ (a clear error names the file).
#pragma once

#include <filesystem>
#include <string>

namespace copbench {

// The whole file; throws std::runtime_error("cannot read PATH: reason") when it cannot.
std::string read_file(const std::filesystem::path& path);

}  // namespace copbench
