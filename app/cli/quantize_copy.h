#pragma once
// What `quantize` and `models import --quantize` share (cmd_quantize.cpp).
#include "dragoman.h"

#include <QString>

#include <string>

namespace dragoman::cli {

// quantizeModel() with a progress line on stderr when it is a terminal.
QuantizeResult quantizeWithProgress(const QuantizeRequest& request);
// The summary line both commands print.
std::string describeQuantized(const QuantizeResult& result, const std::string& type, bool int8Activations = false);
// "int8" or "fp8"; throws UsageError for anything else.
std::string quantizeType(const QString& value);

}  // namespace dragoman::cli
