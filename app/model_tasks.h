#pragma once
// The model store as the window's model manager sees it: every model, server and adapter with what a person wants
// to know (kind, languages, size, where it lives, what uses it), and the long operations (import with hashing,
// quick and full verification, a quantized copy, a server's connection test) run off the GUI thread with progress
// and cancel; forgetting an import or a server is immediate.
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
    QString quantization;      // "int8", "fp8", "w8a8", another method, or empty
    // What it translates, read from its files without loading it (ModelLanguages): targets (empty with a fixed pair
    // or none), a bilingual model's pair; languagesProblem says why they could not be read.
    QStringList targets;
    QString fixedFrom, fixedTo, languagesProblem;
    bool server = false;  // a saved server (File › Connect to a server…): `folder` is its address
};

// Bundled, imported, our cache and the Hugging Face cache, then the saved servers, models before adapters.
QList<StoredModel> storedModels();
// "English → German", "38 languages", "Translates nothing: no tokenizer files", for the manager's column.
QString languagesSummary(const StoredModel& model);
QString languageCount(qsizetype count);  // "1 language", "38 languages"

class ModelTasks : public QObject {
    Q_OBJECT
public:
    explicit ModelTasks(QObject* parent = nullptr);
    ~ModelTasks() override;  // cancels and waits for a running task

    bool busy() const { return thread_ != nullptr; }
    // Each refused while another runs (returns false).
    bool importFolder(const QString& folder, const QString& id = {});
    // A server's: connects and asks for its model and languages.
    bool verify(const QString& id, bool full);
    // A smaller, faster copy of a model: its linear weights in `type` ("int8", "fp8", or "w8a8": int8 weights whose
    // activations are quantized per token too), written into our cache and registered as "<folder>-<type>"
    // (dragoman.h quantizeModel).
    bool quantize(const QString& id, const QString& type);
    // Immediate (a record or a saved server removed; folders and servers untouched): finished or failed is
    // emitted before it returns.
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
