#pragma once
// The models the application can offer, for the Qt side (ui never includes engine headers).
#include <QString>

namespace dragoman {

// The id of the default (bundled) model, or an empty string when none is installed.
QString defaultModelId();

}  // namespace dragoman
