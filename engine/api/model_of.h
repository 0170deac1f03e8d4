#pragma once
// For the developer commands and the engine's tests, which build a RunnableModel themselves (a cache of their
// own, an adapter's merged twin): the public Model around it, so they translate exactly as the product does.
#include "dragoman.h"
#include "runtime/runnable_model.h"

#include <memory>

namespace dragoman {

std::shared_ptr<const Model> modelOf(std::shared_ptr<const RunnableModel> model);

}  // namespace dragoman
