#include "model_tasks.h"

#include "dragoman.h"
#include "model_library.h"

#include <QFileInfo>
#include <QThread>

#include <algorithm>

namespace dragoman {
namespace {

QString megabytes(std::uint64_t bytes) {
    return QString::number(bytes / 1e6, 'f', 1) + QStringLiteral(" MB");
}

}  // namespace

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
            models.push_back(model);
        }
        // What each model has: the adapters naming it as their base (by the last part of the name).

        for (auto& model : models)
            for (const auto& other : models)
                if (!model.adapter && other.adapter && !other.base.isEmpty() && isBaseOf(other.base, model.id)) ++model.adapters;
    } catch (const Error&) {
        // An unreadable store lists nothing; the manager says how to add a model.
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
        request.type = type.toStdString();
        const auto result = quantizeModel(request, [&](const ProgressReport& r) {
            return report(QString::fromUtf8(r.phase.data(), static_cast<qsizetype>(r.phase.size())), r.overall);
        });
        return tr("Made %1: %2 weights in %3, %4 instead of %5, in %6.")
            .arg(QString::fromStdString(result.model.id))
            .arg(result.quantizedWeights)
            .arg(type == QStringLiteral("fp8") ? tr("FP8") : tr("int8"), megabytes(result.bytesAfter), megabytes(result.bytesBefore),
                 QString::fromStdString(result.model.dir.string()));
    });
}

void ModelTasks::forget(const QString& id) {
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
