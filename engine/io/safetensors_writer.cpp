#include "io/safetensors_writer.h"

#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <unistd.h>

namespace dragoman {

void SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::int64_t> shape, Fill fill) {
    std::uint64_t numel = 1;
    for (auto d : shape) numel *= static_cast<std::uint64_t>(d);
    tensors_.push_back({std::move(name), dtype, std::move(shape), numel * dtypeSize(dtype), std::move(fill)});
}

void SafetensorsWriter::addBytes(std::string name, DType dtype, std::vector<std::int64_t> shape, std::vector<std::byte> bytes) {
    auto shared = std::make_shared<std::vector<std::byte>>(std::move(bytes));
    add(std::move(name), dtype, std::move(shape), [shared](std::span<std::byte> buffer, std::uint64_t offset) {
        std::memcpy(buffer.data(), shared->data() + offset, buffer.size());
    });
}

void SafetensorsWriter::write(const std::filesystem::path& path) const {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata_.empty()) header["__metadata__"] = metadata_;
    std::uint64_t offset = 0;
    for (const auto& t : tensors_) {
        header[t.name] = {{"dtype", dtypeName(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.nbytes}}};
        offset += t.nbytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned: every tensor maps zero-copy

    const auto temporary = path.string() + ".part" + std::to_string(::getpid());
    std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(temporary.c_str(), "wb"), &std::fclose);
    if (!out) throw Error("io", temporary + ": cannot create: " + std::strerror(errno));
    auto put = [&](const void* data, std::size_t size) {
        if (std::fwrite(data, 1, size, out.get()) != size) {
            std::remove(temporary.c_str());
            throw Error("io", temporary + ": write failed: " + std::strerror(errno));
        }
    };
    std::byte length[8];
    for (int i = 0; i < 8; ++i) length[i] = std::byte((text.size() >> (8 * i)) & 0xff);
    put(length, 8);
    put(text.data(), text.size());
    std::vector<std::byte> buffer(8 << 20);
    for (const auto& t : tensors_) {
        for (std::uint64_t done = 0; done < t.nbytes;) {
            const auto n = std::min<std::uint64_t>(buffer.size(), t.nbytes - done);
            t.fill(std::span(buffer.data(), n), done);
            put(buffer.data(), n);
            done += n;
        }
    }
    if (std::fflush(out.get()) != 0) throw Error("io", temporary + ": write failed");
    out.reset();
    std::filesystem::rename(temporary, path);
}

}  // namespace dragoman
