#pragma once
// Files being written under a temporary name (a checkpoint's .part file, a document's hidden partial copy) are
// removed when the process is interrupted (SIGINT, SIGTERM, SIGHUP), not left behind: make-synthetic stopped by
// Ctrl-C left hundreds of megabytes under a name nothing would clean up.
#include <filesystem>

namespace dragoman {

// Registers `path` for as long as it lives; the file itself is the writer's to create, rename or remove.
class PartialFile {
public:
    explicit PartialFile(const std::filesystem::path& path);
    ~PartialFile();
    PartialFile(const PartialFile&) = delete;
    PartialFile& operator=(const PartialFile&) = delete;

private:
    int slot_ = -1;  // -1: every slot taken (the file is then only not cleaned up)
};

// Installs the handlers (once): they remove the registered files, then end the process as the signal would have.
void removePartialFilesWhenInterrupted();

}  // namespace dragoman
