#include "model_tasks.h"

#include "dragoman.h"
#include "language_choices.h"
#include "model_library.h"
#include "remote/server_engines.h"

#include <QDateTime>
#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QThread>

#include <algorithm>

namespace dragoman {
namespace {

QString megabytes(std::uint64_t bytes) {
    return QString::number(bytes / 1e6, 'f', 1) + QStringLiteral(" MB");
}

// A folder's languages, read once per process (and again when its config or tokenizer files change): the manager
// lists every model each time it opens, and a Marian folder's tokenizer takes tens of milliseconds to read. What
// could not be read, or offers nothing yet (a download whose tokenizer has not arrived), is read again next time.
void readLanguages(const ModelListing& listing, StoredModel& model) {
    struct Known {
        QDateTime stamp;
        StoredModel languages;
    };
    static QMutex mutex;
    static QHash<QString, Known> known;
    QDateTime stamp;
    for (const auto* name : {"config.json", "tokenizer.json", "tokenizer_config.json", "vocab.json", "source.spm"})
        stamp = std::max(stamp, QFileInfo(model.folder + QLatin1Char('/') + QLatin1String(name)).lastModified());
    const QMutexLocker lock(&mutex);
    if (const auto it = known.constFind(model.folder); it != known.constEnd() && it->stamp == stamp) {
        model.targets = it->languages.targets;
        model.fixedFrom = it->languages.fixedFrom;
        model.fixedTo = it->languages.fixedTo;
        model.languagesProblem = it->languages.languagesProblem;
        return;
    }
    try {
        const auto offered = modelLanguages(listing);
        for (const auto& code : offered.targets)
            model.targets << QString::fromStdString(code);
        model.fixedFrom = QString::fromStdString(offered.fixedFrom);
        model.fixedTo = QString::fromStdString(offered.fixedTo);
    } catch (const std::exception& e) {
        model.languagesProblem = QString::fromUtf8(e.what());
    }
    if (model.languagesProblem.isEmpty() && (!model.targets.isEmpty() || !model.fixedFrom.isEmpty()))
        known.insert(model.folder, {stamp, model});
}

}  // namespace

// No translation catalog is loaded for English, so plurals are spelled out rather than left to %n.
QString languageCount(qsizetype count) {
    return count == 1 ? ModelTasks::tr("1 language") : ModelTasks::tr("%1 languages").arg(count);
}

QString languagesSummary(const StoredModel& model) {
    if (model.adapter) return ModelTasks::tr("Its base model's");
    if (model.server) return ModelTasks::tr("Asked when connected");
    if (!model.languagesProblem.isEmpty()) return ModelTasks::tr("Unreadable: %1").arg(model.languagesProblem);
    const auto name = [](const QString& code) {
        return code == QLatin1String("mul") ? ModelTasks::tr("many languages") : languageName(code);
    };
    if (!model.targets.isEmpty()) {
        const auto count = languageCount(model.targets.size());
        return model.fixedFrom.isEmpty() || model.fixedFrom == QLatin1String("mul")
                   ? count
                   : ModelTasks::tr("%1 → %2").arg(name(model.fixedFrom), count);
    }
    if (!model.fixedFrom.isEmpty()) return ModelTasks::tr("%1 → %2").arg(name(model.fixedFrom), name(model.fixedTo));
    return ModelTasks::tr("Translates nothing: no tokenizer files");
}

QList<StoredModel> storedModels() {
    QList<StoredModel> models;
    try {
        auto listed = listModels();
        std::stable_sort(listed.begin(), listed.end(), [](const ModelListing& a, const ModelListing& b) {
            return (a.modelType != "peft_lora") > (b.modelType != "peft_lora");
        });
        for (const auto& m : listed) {
            StoredModel model;
            model.id = QString::fromStdString(m.id);
            model.source = QString::fromStdString(m.source);
            model.architecture = QString::fromStdString(m.architecture);
            model.modelType = QString::fromStdString(m.modelType);
            model.folder = QString::fromStdString(m.dir.string());
            model.base = QString::fromStdString(m.base);
            model.revision = QString::fromStdString(m.revision);
            model.weightBytes = m.weightBytes;
            model.adapter = m.modelType == "peft_lora";
            model.forgettable = m.source == "imported";
            model.quantization = QString::fromStdString(m.quantization);
            if (!model.adapter) readLanguages(m, model);
            models.push_back(model);
        }
        // What each model has: the adapters naming it as their base (by the last part of the name).

        for (auto& model : models)
            for (const auto& other : models)
                if (!model.adapter && other.adapter && !other.base.isEmpty() && isBaseOf(other.base, model.id)) ++model.adapters;
    } catch (const Error&) {
        // An unreadable store lists nothing; the manager says how to add a model.
    }
    // Servers after the local models, before the adapters.
    auto at = std::find_if(models.begin(), models.end(), [](const StoredModel& m) { return m.adapter; }) - models.begin();
    for (const auto& saved : savedServerEngines()) {
        StoredModel server;
        server.id = saved.id();
        server.source = QStringLiteral("server");
        server.architecture = saved.model.isEmpty() ? ModelTasks::tr("the server's first model") : saved.model;
        server.folder = saved.url;
        server.server = true;
        server.forgettable = true;
        models.insert(at++, server);
    }
    return models;
}

ModelTasks::ModelTasks(QObject* parent) : QObject(parent) {}

ModelTasks::~ModelTasks() {
    cancel();
    if (thread_) {
        thread_->wait();
        delete thread_;  // its queued end, and deleteLater, go with this object
    }
}

bool ModelTasks::run(std::function<QString(const std::function<bool(const QString&, double)>&)> task) {
    if (thread_) return false;
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    const auto cancelled = cancelled_;
    thread_ = QThread::create([this, task = std::move(task), cancelled] {
        const auto report = [this, cancelled](const QString& phase, double fraction) {
            Q_EMIT progress(phase, fraction);  // queued to the GUI thread
            return !cancelled->load();
        };
        QString message, error;
        try {
            message = task(report);
        } catch (const Cancelled&) {
            error = tr("Cancelled; nothing was recorded.");
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        QMetaObject::invokeMethod(
            this,
            [this, message, error] {
                thread_->wait();
                thread_->deleteLater();
                thread_ = nullptr;
                if (error.isEmpty())
                    Q_EMIT finished(message);
                else
                    Q_EMIT failed(error);
            },
            Qt::QueuedConnection);
    });
    thread_->start();
    return true;
}

bool ModelTasks::importFolder(const QString& folder, const QString& id) {
    return run([folder, id](const auto& report) {
        const auto listing = importModel(QFile::encodeName(folder).toStdString(), id.toStdString(), [&](const ProgressReport& r) {
            return report(QString::fromUtf8(r.phase.data(), static_cast<qsizetype>(r.phase.size())), r.overall);
        });
        return tr("Imported %1 (%2, %3); its files are hashed once, now.")
            .arg(QString::fromStdString(listing.id), QString::fromStdString(listing.architecture), megabytes(listing.weightBytes));
    });
}

bool ModelTasks::verify(const QString& id, bool full) {
    if (isServerEngineId(id)) {
        const auto saved = savedServerEngine(id);  // the settings are read here, on the GUI thread
        return run([saved, id](const auto& report) {
            if (!saved) throw Error("model_not_found", "no server named '" + id.mid(7).toStdString() + "' is saved");
            report(tr("Connecting to %1").arg(saved->url), 0.1);
            const RemoteEngine engine(remoteSettingsOf(*saved));
            report(tr("Asking for its languages"), 0.6);
            const auto languages = engine.targetLanguages();
            return tr("%1 answers: it translates with %2 into %3.").arg(saved->url, engine.model(), languageCount(languages.size()));
        });
    }
    return run([id, full](const auto& report) {
        const auto result = verifyModel(id.toStdString(), full, [&](const ProgressReport& r) {
            return report(QString::fromUtf8(r.phase.data(), static_cast<qsizetype>(r.phase.size())), r.overall);
        });
        if (!result.problems.empty()) throw Error("integrity", result.describeProblems());
        return tr("%1 is intact: %2 files, %3%4")
            .arg(QString::fromStdString(result.id))
            .arg(result.files)
            .arg(megabytes(result.bytes), full ? tr(", every file re-hashed") : tr(", sizes and times as recorded"));
    });
}

bool ModelTasks::quantize(const QString& id, const QString& type) {
    return run([id, type](const auto& report) {
        QuantizeRequest request;
        request.model = id.toStdString();
        // "w8a8": int8 weights whose activations are quantized per token too.
        request.type = type == QStringLiteral("w8a8") ? "int8" : type.toStdString();
        request.int8Activations = type == QStringLiteral("w8a8");
        const auto result = quantizeModel(request, [&](const ProgressReport& r) {
            return report(QString::fromUtf8(r.phase.data(), static_cast<qsizetype>(r.phase.size())), r.overall);
        });
        return tr("Made %1: %2 weights in %3, %4 instead of %5, in %6.")
            .arg(QString::fromStdString(result.model.id))
            .arg(result.quantizedWeights)
            .arg(type == QStringLiteral("fp8")    ? tr("FP8")
                 : type == QStringLiteral("w8a8") ? tr("int8 with int8 activations (W8A8)")
                                                  : tr("int8"),
                 megabytes(result.bytesAfter), megabytes(result.bytesBefore), QString::fromStdString(result.model.dir.string()));
    });
}

void ModelTasks::forget(const QString& id) {
    if (isServerEngineId(id)) {
        if (!savedServerEngine(id)) {
            Q_EMIT failed(tr("No server named %1 is saved.").arg(id.mid(7)));
            return;
        }
        removeServerEngine(id.mid(7));
        Q_EMIT finished(tr("Removed the server %1 from the list; nothing on it changed.").arg(id.mid(7)));
        return;
    }
    try {
        const auto listing = forgetModel(id.toStdString());
        Q_EMIT finished(tr("Forgot %1; its folder %2 is left as it was.").arg(id, QString::fromStdString(listing.dir.string())));
    } catch (const std::exception& e) {
        Q_EMIT failed(QString::fromUtf8(e.what()));
    }
}

void ModelTasks::cancel() {
    if (cancelled_) cancelled_->store(true);
}

}  // namespace dragoman
