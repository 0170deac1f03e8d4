#include "documents/run_format.h"

#include <sstream>

namespace dragoman::documents {
namespace {

// `ignored` names a property ("w:szCs") or one value of it ("baseline=0").
bool named(const std::string& name, const std::string& ignored) {
    return (" " + ignored + " ").find(" " + name + " ") != std::string::npos;
}

void describe(pugi::xml_node node, const std::string& ignored, std::string& key) {
    for (const auto& a : node.attributes())
        if (!named(a.name(), ignored) && !named(std::string(a.name()) + "=" + a.value(), ignored))
            key += std::string(" ") + a.name() + "=" + a.value();
    for (const auto& child : node.children()) {
        if (child.type() != pugi::node_element || named(child.name(), ignored)) continue;
        key += std::string(" <") + child.name();
        describe(child, ignored, key);
        key += ">";
    }
}

}  // namespace

std::string formattingKey(pugi::xml_node properties, const std::string& ignored) {
    std::string key;
    if (properties) describe(properties, ignored, key);
    return key;
}

}  // namespace dragoman::documents
