#pragma once
// Reading the program's input tables: a CSV file with a header row. The whole file is read
// once into memory and split in place; numbers are read with std::from_chars (no locale, exact
// rounding), so a million-row pool reads in a fraction of a second.
//
//   CsvFile csv = CsvFile::read("pool.csv");
//   const std::size_t length = csv.column("length");              // BadInput if absent
//   const std::optional<std::size_t> cost = csv.find_column("cost");
//   for (CsvRecord row; csv.next(row);)
//     std::int64_t x = integer_field(csv, row, length, "length"); // BadInput "pool.csv:17: ..."
//
// Format (RFC 4180 with the usual leniencies): fields separated by ',', records by LF or
// CRLF; a field may be quoted ("a, b" and "say ""hi"""), and a quoted field may hold commas,
// quotes and line breaks; spaces and tabs around an unquoted field are dropped; blank lines
// are skipped; a UTF-8 byte-order mark before the header is dropped. Every record must have
// as many fields as the header. A record's line is the line it starts on (the header is
// line 1, unless blank lines come first).
//
// Every failure a user can fix throws BadInput whose message starts with `file:line: `, or
// `file: ` for a problem with the whole file.

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "bad_input.hpp"
#include "format.hpp"

namespace ltt::certification {

// The contents of a file, read in one piece; BadInput naming the file when it cannot be read,
// or when it holds more than at_most bytes (checked before reading a regular file, and while
// reading a pipe, so a hostile input never fills memory).
inline std::string read_whole_file(const std::filesystem::path& path,
                                   std::size_t at_most = std::string().max_size()) {
  const std::string shown = in_quotes(path.string());
  const auto too_large = [&] {
    return BadInput(cat("cannot read ", shown, ": more than ", std::to_string(at_most),
                        " bytes, the most this input may have"));
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw BadInput(cat("cannot read ", shown, ": it is a directory"));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw BadInput(
        cat("cannot read ", shown, errno != 0 ? ": " : "", errno != 0 ? std::strerror(errno) : ""));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  std::string text;
  if (size > 0) {
    if (static_cast<std::uintmax_t>(size) > at_most) throw too_large();
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), size);
  } else {
    // Not seekable (a pipe such as /dev/stdin): read to the end, or one byte past at_most.
    in.clear();
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      text.append(buffer, static_cast<std::size_t>(in.gcount()));
      if (text.size() > at_most) throw too_large();
    }
  }
  if (in.bad()) throw BadInput(cat("cannot read ", shown, ": read failed"));
  return text;
}

struct CsvRecord {
  std::vector<std::string_view> fields;  // point into the CsvFile's text
  std::int64_t line = 0;                 // the line the record starts on
};

class CsvFile {
 public:
  // name is how messages refer to the file (the path as the user typed it).
  CsvFile(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {
    if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
    CsvRecord header;
    if (!next(header)) fail_file("the file is empty: expected a header row");
    header_line_ = header.line;
    for (std::size_t c = 0; c < header.fields.size(); ++c) {
      const std::string_view name_c = header.fields[c];
      for (std::size_t d = 0; d < c; ++d)
        if (columns_[d] == name_c)
          fail(header_line_, cat("column ", in_quotes(name_c), " appears twice in the header"));
      columns_.emplace_back(name_c);
    }
  }

  static CsvFile read(const std::filesystem::path& path) {
    return CsvFile(path.string(), read_whole_file(path));
  }

  const std::string& name() const { return name_; }
  std::int64_t header_line() const { return header_line_; }
  std::span<const std::string> columns() const { return columns_; }

  std::optional<std::size_t> find_column(std::string_view column_name) const {
    for (std::size_t c = 0; c < columns_.size(); ++c)
      if (columns_[c] == column_name) return c;
    return std::nullopt;
  }
  // The column's index, or BadInput naming the header line and listing the columns there are.
  std::size_t column(std::string_view column_name, std::string_view why = {}) const {
    if (const auto c = find_column(column_name)) return *c;
    std::string listed;
    for (const std::string& c : columns_) listed += cat(listed.empty() ? "" : ",", c);
    fail(header_line_, cat("the header has no ", in_quotes(column_name), " column", why,
                           " (columns: ", listed, ")"));
  }

  // The next record, false at the end of the file. Each record must have as many fields as
  // the header.
  bool next(CsvRecord& record) {
    record.fields.clear();
    const std::size_t size = text_.size();
    // Blank lines (nothing, or only a carriage return) are skipped.
    while (pos_ < size) {
      if (text_[pos_] == '\n') {
        ++pos_, ++line_;
      } else if (text_[pos_] == '\r' && (pos_ + 1 == size || text_[pos_ + 1] == '\n')) {
        ++pos_;
      } else {
        break;
      }
    }
    if (pos_ >= size) return false;
    record.line = line_;
    for (;;) {
      record.fields.push_back(pos_ < size && text_[pos_] == '"' ? quoted_field(record.line)
                                                                : plain_field());
      if (pos_ < size && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < size && text_[pos_] == '\r') ++pos_;
      if (pos_ < size && text_[pos_] == '\n') ++pos_, ++line_;
      break;
    }
    if (!columns_.empty() && record.fields.size() != columns_.size())
      fail(record.line,
           cat(std::to_string(record.fields.size()), " field", record.fields.size() == 1 ? "" : "s",
               " where the header has ", std::to_string(columns_.size())));
    return true;
  }

  // BadInput "file:line: message".
  [[noreturn]] void fail(std::int64_t line, std::string_view message) const {
    throw BadInput(cat(name_, ":", std::to_string(line), ": ", message));
  }
  // BadInput "file: message", for a problem with the file as a whole.
  [[noreturn]] void fail_file(std::string_view message) const {
    throw BadInput(cat(name_, ": ", message));
  }

 private:
  static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

  std::string_view plain_field() {
    const std::size_t size = text_.size();
    std::size_t start = pos_;
    while (pos_ < size && text_[pos_] != ',' && text_[pos_] != '\n') ++pos_;
    std::size_t end = pos_;
    while (start < end && blank(text_[start])) ++start;
    while (end > start && blank(text_[end - 1])) --end;
    return std::string_view(text_.data() + start, end - start);
  }

  // A field in double quotes, "" standing for one quote; unescaped in place (the result is
  // never longer than the source), so the view stays inside text_.
  std::string_view quoted_field(std::int64_t record_line) {
    const std::size_t size = text_.size();
    const std::size_t start = ++pos_;
    std::size_t out = start;
    for (;;) {
      if (pos_ >= size) fail(record_line, "a quoted field is not closed");
      const char c = text_[pos_];
      if (c == '"') {
        if (pos_ + 1 < size && text_[pos_ + 1] == '"') {
          text_[out++] = '"';
          pos_ += 2;
          continue;
        }
        ++pos_;
        break;
      }
      if (c == '\n') ++line_;
      text_[out++] = c;
      ++pos_;
    }
    while (pos_ < size && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    if (pos_ < size && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '\r')
      fail(line_, "unexpected text after a closing quote");
    return std::string_view(text_.data() + start, out - start);
  }

  std::string name_;
  std::string text_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 1;
  std::int64_t header_line_ = 1;
  std::vector<std::string> columns_;
};

// Field readers: each names the file, the record's line, the column and the text it refused.

// A finite double. "nan", "inf" and out-of-range values are refused as not finite.
inline double finite_field(const CsvFile& csv, const CsvRecord& row, std::size_t column,
                           std::string_view what) {
  std::string_view text = row.fields[column];
  if (text.empty()) csv.fail(row.line, cat(what, " is missing"));
  std::string_view body = text;
  if (body.size() > 1 && body.front() == '+' && body[1] != '-') body.remove_prefix(1);
  double x = 0.0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), x);
  if (end != body.data() + body.size() ||
      (ec != std::errc{} && ec != std::errc::result_out_of_range))
    csv.fail(row.line, cat(what, " ", in_quotes(text), " is not a number"));
  if (ec == std::errc::result_out_of_range || !std::isfinite(x))
    csv.fail(row.line, cat(what, " ", in_quotes(text), " is not a finite number"));
  return x;
}

// A field as a CSV writer must spell it for this reader to give `text` back: quoted (inner
// quotes doubled) when it holds a separator, a quote or a line break, or starts or ends with a
// space or tab (which an unquoted field loses); as is otherwise.
inline std::string csv_field(std::string_view text) {
  const bool quote = text.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!text.empty() && (text.front() == ' ' || text.front() == '\t' ||
                                        text.back() == ' ' || text.back() == '\t'));
  if (!quote) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// `text` as a signed 64-bit integer (data/text.hpp: "17", "+17", "-3", "007").
using data::parse_integer;

// A signed 64-bit integer field (a length, an episode index); "42.0" or "4.2e1" are refused.
inline std::int64_t integer_field(const CsvFile& csv, const CsvRecord& row, std::size_t column,
                                  std::string_view what) {
  const std::string_view text = row.fields[column];
  if (text.empty()) csv.fail(row.line, cat(what, " is missing"));
  bool out_of_range = false;
  const std::optional<std::int64_t> x = parse_integer(text, &out_of_range);
  if (out_of_range)
    csv.fail(row.line, cat(what, " ", in_quotes(text), " does not fit a 64-bit integer"));
  if (!x) csv.fail(row.line, cat(what, " ", in_quotes(text), " is not an integer"));
  return *x;
}

}  // namespace ltt::certification
