#pragma once
// The model store as the window's model manager sees it: every model and adapter with what a person wants to
// know (kind, size, where it lives, what uses it), and the long store operations (import with hashing, quick
// and full verification, a quantized copy, forgetting an import) run off the GUI thread with progress and cancel.
#include <QList>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

class QThread;

namespace dragoman {

struct StoredModel {
    QString id, source, architecture, modelType, folder, base, revision;
    quint64 weightBytes = 0;
    bool adapter = false;
    int adapters = 0;          // adapters the store knows for this model
    bool forgettable = false;  // imported: its record can go (its folder never does)
    QString quantization;      // "int8", "fp8", another method, or empty
};

// Bundled, imported, our cache and the Hugging Face cache, models before adapters.
QList<StoredModel> storedModels();

class ModelTasks : public QObject {
    Q_OBJECT
public:
    explicit ModelTasks(QObject* parent = nullptr);
    ~ModelTasks() override;  // cancels and waits for a running task

    bool busy() const { return thread_ != nullptr; }
    // Each refused while another runs (returns false).
    bool importFolder(const QString& folder, const QString& id = {});
    bool verify(const QString& id, bool full);
    // A smaller, faster copy of a model: its linear weights in `type` ("int8" or "fp8"), written into our cache
    // and registered as "<folder>-<type>" (dragoman.h quantizeModel).
    bool quantize(const QString& id, const QString& type);
    // Immediate (a file removed): finished or failed is emitted before it returns.
    void forget(const QString& id);
    void cancel();

Q_SIGNALS:
    void progress(const QString& phase, double fraction);
    void finished(const QString& message);
    void failed(const QString& message);

private:
    bool run(std::function<QString(const std::function<bool(const QString&, double)>&)> task);

    QThread* thread_ = nullptr;
    std::shared_ptr<std::atomic<bool>> cancelled_;
};

}  // namespace dragoman
