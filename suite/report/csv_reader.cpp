// read_csv (copbench/csv.h) on libcsv: the file is fed line by line, so every record and
// every error knows its line; comments are dropped here, before libcsv sees them.
#include "copbench/csv.h"

#include <csv.h>

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace copbench {
namespace {

// What libcsv's callbacks fill: the record being read and the records read.
struct CsvSink {
  std::vector<CsvRecord> records;
  CsvRecord current;
  int feeding_line = 0;    // the line libcsv is reading now
  bool in_record = false;  // a record started and has not ended (e.g. a quoted field spans lines)
};

void on_field(void* text, std::size_t size, void* data) {
  auto* sink = static_cast<CsvSink*>(data);
  sink->current.fields.emplace_back(text ? static_cast<const char*>(text) : "", text ? size : 0);
}

void on_record_end(int, void* data) {
  auto* sink = static_cast<CsvSink*>(data);
  sink->records.push_back(std::move(sink->current));
  sink->current = CsvRecord{};
  sink->current.line = sink->feeding_line;  // a record that starts later on this line
  sink->in_record = false;
}

// No character is a space to trim: a field is what the file holds between its commas.
int no_space(unsigned char) { return 0; }

// One parser for one file, freed however the read ends.
class Parser {
 public:
  Parser() {
    if (csv_init(&parser_, CSV_STRICT | CSV_STRICT_FINI) != 0) throw std::runtime_error("libcsv: csv_init failed");
    csv_set_space_func(&parser_, no_space);
  }
  ~Parser() { csv_free(&parser_); }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
  csv_parser* get() { return &parser_; }

 private:
  csv_parser parser_{};
};

// A record spans lines only inside a quoted field: an error on a later line than the
// record's first most likely comes from a quote left open there.
std::string parse_error(csv_parser* p, const std::filesystem::path& file, int record_line, int line) {
  if (csv_error(p) != CSV_EPARSE) return fmt::format("{}:{}: {}", file.string(), line, csv_strerror(csv_error(p)));
  if (record_line < line)
    return fmt::format("{}:{}: malformed CSV: a quoted field opened on this line is still open on line {}",
                       file.string(), record_line, line);
  return fmt::format("{}:{}: malformed CSV (a quote inside an unquoted field, or text after a closing quote)",
                     file.string(), line);
}

}  // namespace

CsvFile read_csv(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {} {}", what, file.string()));
  Parser parser;
  CsvSink sink;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const bool blank = line.empty() || line == "\r";
    if (!sink.in_record && (blank || line[0] == '#')) continue;
    if (!sink.in_record) sink.current.line = lineno, sink.in_record = true;
    sink.feeding_line = lineno;
    line += '\n';
    if (csv_parse(parser.get(), line.data(), line.size(), on_field, on_record_end, &sink) != line.size())
      throw std::runtime_error(parse_error(parser.get(), file, sink.current.line, lineno));
  }
  const int open_line = sink.current.line;
  if (csv_fini(parser.get(), on_field, on_record_end, &sink) != 0 || csv_error(parser.get()) != CSV_SUCCESS)
    throw std::runtime_error(fmt::format("{}:{}: unterminated quoted field", file.string(), open_line));
  if (sink.records.empty()) throw std::runtime_error(fmt::format("{}: no header line", file.string()));
  CsvFile out;
  out.header = std::move(sink.records.front().fields);
  for (std::size_t i = 1; i < sink.records.size(); ++i) {
    CsvRecord& r = sink.records[i];
    if (r.fields.size() != out.header.size())
      throw std::runtime_error(
          fmt::format("{}:{}: {} fields, the header has {}", file.string(), r.line, r.fields.size(), out.header.size()));
    out.records.push_back(std::move(r));
  }
  return out;
}

}  // namespace copbench
