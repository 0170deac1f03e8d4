#include "documents/xml_depth.h"

#include "dragoman.h"

namespace dragoman::documents {
namespace {

// pugixml walks the tree with a loop of its own, whatever the depth.
class DepthWalker : public pugi::xml_tree_walker {
public:
    bool for_each(pugi::xml_node&) override {
        tooDeep = static_cast<std::size_t>(depth()) >= kMostXmlDepth;
        return !tooDeep;
    }
    bool tooDeep = false;
};

}  // namespace

void refuseDeepXml(const pugi::xml_document& document, const std::string& what) {
    DepthWalker walker;
    pugi::xml_node root = document;  // a handle: traverse() is not const
    root.traverse(walker);
    if (walker.tooDeep) throw Error("input", what + " nests its elements more than " + std::to_string(kMostXmlDepth) + " levels deep");
}

}  // namespace dragoman::documents
