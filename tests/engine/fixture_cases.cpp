#include "fixture_cases.h"

#include <fstream>

namespace dragoman::test {

std::string fixturesDir() {
    return DRAGOMAN_TEST_FIXTURES;
}

std::vector<SafetensorsCase> safetensorsCases() {
    std::ifstream in(fixturesDir() + "/safetensors-bad/cases.json");
    const auto json = nlohmann::json::parse(in);
    std::vector<SafetensorsCase> cases;
    for (const auto& c : json.at("cases")) {
        SafetensorsCase out;
        out.file = c.at("file");
        out.expect = c.at("expect");
        out.category = c.value("category", "");
        out.note = c.value("note", "");
        for (const auto& t : c.value("tensors", nlohmann::json::array())) {
            ExpectedTensor e;
            e.name = t.at("name");
            e.dtype = t.at("dtype");
            e.shape = t.at("shape").get<std::vector<std::int64_t>>();
            e.begin = t.at("data_offsets").at(0);
            e.end = t.at("data_offsets").at(1);
            e.sha256 = t.at("sha256");
            e.rawHex = t.value("raw_hex", "");
            e.values = t.at("values");
            out.tensors.push_back(std::move(e));
        }
        cases.push_back(std::move(out));
    }
    return cases;
}

}  // namespace dragoman::test
