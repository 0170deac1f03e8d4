#include "model_library.h"

#include "store/model_store.h"
#include "util/error.h"

namespace dragoman {

QString defaultModelId() {
    try {
        return QString::fromStdString(ModelStore().defaultModel().id);
    } catch (const Error&) {
        return {};
    }
}

}  // namespace dragoman
