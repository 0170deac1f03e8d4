#include "io/safetensors_writer.h"

#include "util/error.h"
#include "util/partial_files.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

namespace dragoman {

void SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::int64_t> shape, Fill fill) {
    std::uint64_t numel = 1;
    for (auto d : shape)
        numel *= static_cast<std::uint64_t>(d);
    // Sub-byte types (F4, F6) pack elements into whole bytes, as the format requires.
    if (numel * dtypeBits(dtype) % 8 != 0)
        throw Error("input",
                    name + ": " + std::to_string(numel) + " " + std::string(dtypeName(dtype)) + " elements do not fill whole bytes");
    tensors_.push_back({std::move(name), dtype, std::move(shape), numel * dtypeBits(dtype) / 8, std::move(fill)});
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
    // The data starts on a 64-byte line (the format's 8-byte alignment, and more): every tensor maps zero-copy,
    // and the kernels' weight reads start on line boundaries (bf16_dot_gemm.cpp's leadingLanes).
    text.append((64 - (8 + text.size()) % 64) % 64, ' ');

    const auto temporary = path.string() + ".part" + std::to_string(::getpid());
    const PartialFile registered(temporary);  // removed if the process is interrupted meanwhile
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("io", temporary + ": cannot create: " + std::strerror(errno));
    // Whatever stops the write (a failed write(), a fill() that throws) closes the file and removes it.
    struct Partial {
        int fd;
        const std::string& path;
        bool done = false;
        ~Partial() {
            if (done) return;
            ::close(fd);
            std::remove(path.c_str());
        }
    } partial{fd, temporary};
    auto fail = [&](const char* what) { throw Error("io", temporary + ": " + what + ": " + std::strerror(errno)); };
    // Everything goes out in whole staging buffers, so each write() covers an 8 MiB-aligned range of the
    // file: the page cache then holds the new file in 2 MiB folios, which a reader maps with one TLB entry
    // each (unaligned writes left about half of it in 4 KiB pages, and decoding that ran ~20% slower).
    std::vector<std::byte> staging(8 << 20);
    std::size_t used = 0;
    auto flush = [&] {
        for (std::size_t done = 0; done < used;) {
            const ssize_t n = ::write(fd, staging.data() + done, used - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) fail("write failed");
            done += static_cast<std::size_t>(n);
        }
        used = 0;
    };
    // fill() is called on whole elements only (its contract); an element that straddles the end of the
    // staging buffer goes through a small bounce buffer.
    auto put = [&](std::uint64_t size, std::size_t width, const Fill& fill) {
        for (std::uint64_t done = 0; done < size;) {
            const auto space = staging.size() - used;
            auto n = std::min<std::uint64_t>(space, size - done);
            n -= n % width;
            if (n == 0) {
                std::byte element[16];
                fill(std::span(element, width), done);
                std::memcpy(staging.data() + used, element, space);
                used = staging.size();
                flush();
                std::memcpy(staging.data(), element + space, width - space);
                used = width - space;
                done += width;
                continue;
            }
            fill(std::span(staging.data() + used, n), done);
            used += n;
            done += n;
            if (used == staging.size()) flush();
        }
    };
    auto putBytes = [&](const void* data, std::size_t size) {
        put(size, 1, [&](std::span<std::byte> out, std::uint64_t offset) {
            std::memcpy(out.data(), static_cast<const std::byte*>(data) + offset, out.size());
        });
    };
    std::byte length[8];
    for (int i = 0; i < 8; ++i)
        length[i] = std::byte((text.size() >> (8 * i)) & 0xff);
    putBytes(length, 8);
    putBytes(text.data(), text.size());
    for (const auto& t : tensors_)
        put(t.nbytes, dtypeSize(t.dtype), t.fill);
    flush();
    // On disk before the name appears: a crash leaves either no file or the whole one.
    if (::fsync(fd) != 0) fail("fsync failed");
    partial.done = true;
    if (::close(fd) != 0) {
        std::remove(temporary.c_str());
        throw Error("io", temporary + ": write failed: " + std::strerror(errno));
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::remove(temporary.c_str());
        throw Error("io", path.string() + ": cannot put the written file in place: " + ec.message());
    }
}

}  // namespace dragoman
