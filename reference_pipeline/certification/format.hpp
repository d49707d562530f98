#pragma once
// The program's text: the reference pipeline's shared formats and JSON writer (data/text.hpp,
// data/json_writer.hpp, data/json_fields.hpp), named in ltt::certification.
//
//   shortest(x)  every number in JSON and CSV output, and inputs as the user typed them
//   brief(x)     6 significant digits, for human summaries
//   cat(a, b, ...), in_quotes(text)   message text
//   JsonWriter, JsonFields            JSON output, a result struct's field list as JSON

#include <data/json_fields.hpp>
#include <data/json_writer.hpp>
#include <data/text.hpp>

namespace ltt::certification {

using data::brief;
using data::cat;
using data::in_quotes;
using data::JsonFields;
using data::JsonWriter;
using data::shortest;

}  // namespace ltt::certification
