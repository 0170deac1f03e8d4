#include "document_queue.h"

#include <QFileInfo>

namespace dragoman {

DocumentQueue::DocumentQueue(QObject* parent) : QAbstractTableModel(parent) {}

int DocumentQueue::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : size();
}

int DocumentQueue::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString DocumentQueue::stateText(const Job& job) const {
    switch (job.state) {
        case State::Queued:
            return tr("Queued");
        case State::Translating: {
            if (job.cancelRequested) return tr("Stopping…");
            if (job.total <= 0) return tr("Starting…");
            auto text = tr("%1 of %2 passages").arg(job.done).arg(job.total);
            const auto elapsed = job.started.msecsTo(QDateTime::currentDateTime()) / 1000.0;
            if (job.done > 0 && job.done < job.total) {
                const auto left = static_cast<int>(elapsed / job.done * (job.total - job.done) + 0.5);
                text +=
                    left >= 60 ? tr(", about %n min left", nullptr, (left + 30) / 60) : tr(", about %n s left", nullptr, std::max(1, left));
            }
            return text;
        }
        case State::Done:
            return job.keptSource > 0 ? tr("Done (%n passage(s) kept in the original)", nullptr, job.keptSource) : tr("Done");
        case State::Failed:
            return tr("Failed: %1").arg(job.message);
        case State::Cancelled:
            return tr("Cancelled");
    }
    return {};
}

QVariant DocumentQueue::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= size()) return {};
    const auto& job = jobs_[static_cast<std::size_t>(index.row())];
    switch (role) {
        case Qt::DisplayRole:
            if (index.column() == DocumentColumn) return QFileInfo(job.path).fileName();
            if (index.column() == StateColumn) return stateText(job);
            if (index.column() == OutputColumn) return job.output.isEmpty() ? QString() : QFileInfo(job.output).fileName();
            return {};
        case Qt::ToolTipRole:
            if (index.column() == DocumentColumn) return job.path;
            if (index.column() == OutputColumn) return job.output;
            return stateText(job);
        case Qt::AccessibleTextRole:
            return QFileInfo(job.path).fileName() + ": " + stateText(job);
        case StateRole:
            return static_cast<int>(job.state);
        case ProgressRole:
            return job.state == State::Done ? 100 : job.total > 0 ? job.done * 100 / job.total : 0;
        case InputPathRole:
            return job.path;
        case OutputPathRole:
            return job.output;
        default:
            return {};
    }
}

QVariant DocumentQueue::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == DocumentColumn) return tr("Document");
    if (section == StateColumn) return tr("State");
    if (section == OutputColumn) return tr("Translated copy");
    return {};
}

int DocumentQueue::nextQueued() const {
    for (int row = 0; row < size(); ++row)
        if (jobs_[static_cast<std::size_t>(row)].state == State::Queued) return row;
    return -1;
}

int DocumentQueue::running() const {
    for (int row = 0; row < size(); ++row)
        if (jobs_[static_cast<std::size_t>(row)].state == State::Translating) return row;
    return -1;
}

bool DocumentQueue::finished(int row) const {
    const auto state = job(row).state;
    return state == State::Done || state == State::Failed || state == State::Cancelled;
}

int DocumentQueue::add(const QString& path, const QString& from, const QString& to) {
    const int row = size();
    beginInsertRows({}, row, row);
    Job job;
    job.path = path;
    job.from = from;
    job.to = to;
    jobs_.push_back(std::move(job));
    endInsertRows();
    return row;
}

void DocumentQueue::start(int row) {
    auto& job = jobs_.at(static_cast<std::size_t>(row));
    job.state = State::Translating;
    job.started = QDateTime::currentDateTime();
    changed(row);
}

void DocumentQueue::progress(int row, int done, int total) {
    auto& job = jobs_.at(static_cast<std::size_t>(row));
    job.done = done;
    job.total = total;
    changed(row);
}

void DocumentQueue::succeed(int row, const QString& output, int keptSource) {
    auto& job = jobs_.at(static_cast<std::size_t>(row));
    job.state = State::Done;
    job.output = output;
    job.keptSource = keptSource;
    job.done = job.total;
    changed(row);
}

void DocumentQueue::fail(int row, const QString& message) {
    auto& job = jobs_.at(static_cast<std::size_t>(row));
    job.state = job.cancelRequested ? State::Cancelled : State::Failed;
    job.message = message;
    changed(row);
}

bool DocumentQueue::cancel(int row) {
    auto& job = jobs_.at(static_cast<std::size_t>(row));
    if (job.state == State::Queued) {
        job.state = State::Cancelled;
        changed(row);
        return true;
    }
    if (job.state == State::Translating && !job.cancelRequested) {
        job.cancelRequested = true;
        changed(row);  // "Stopping…" until the engine ends it
    }
    return false;
}

void DocumentQueue::clearFinished() {
    for (int row = size() - 1; row >= 0; --row)
        if (finished(row)) {
            beginRemoveRows({}, row, row);
            jobs_.erase(jobs_.begin() + row);
            endRemoveRows();
        }
}

void DocumentQueue::changed(int row) {
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

}  // namespace dragoman
