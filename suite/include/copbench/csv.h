// Reading CSV files (the seeds' tables in results/reference/*.csv and their copies in a
// campaign directory) with Debian's libcsv, strict: a malformed file is an error naming
// the file and the line, never a half-read table.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace copbench {

struct CsvRecord {
  int line = 0;  // where the record starts in the file (1 = the first line)
  std::vector<std::string> fields;
};

struct CsvFile {
  std::vector<std::string> header;  // the first record
  std::vector<CsvRecord> records;   // every later record, each with header.size() fields
};

// Reads `file`: comma-separated, fields quoted with " ("" inside a quoted field is one "),
// no space trimmed; empty lines and lines starting with '#' (outside a quoted field) are
// skipped. Throws std::runtime_error "FILE:LINE: reason" on an unterminated quoted field,
// a quote inside an unquoted field, text after a closing quote (LINE: where the record
// starts when a quoted field opened there runs into a later line), or a record whose
// field count differs from the header's; "cannot read WHAT FILE" when it cannot be opened,
// "FILE: no header line" when it holds no record.
CsvFile read_csv(const std::filesystem::path& file, const std::string& what = "CSV file");

}  // namespace copbench
