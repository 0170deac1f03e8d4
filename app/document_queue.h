#pragma once
// The documents dropped on the window, in the order they came: each one's state (queued, translating, done,
// failed with the reason, cancelled), its progress (segments done of all, time left) and the copy it wrote. A
// table model for the window's document panel; the controller (translation_controller.h) runs the jobs one at a
// time and tells the queue what happened.
#include <QAbstractTableModel>
#include <QDateTime>
#include <QString>

#include <vector>

namespace dragoman {

class DocumentQueue : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class State { Queued, Translating, Done, Failed, Cancelled };
    enum Column { DocumentColumn, StateColumn, OutputColumn, ColumnCount };
    enum Role {
        StateRole = Qt::UserRole + 1,  // State as int
        ProgressRole,                  // 0..100
        InputPathRole,
        OutputPathRole,  // empty until done
    };

    struct Job {
        QString path, from, to;
        State state = State::Queued;
        int done = 0, total = 0;
        QString output, message;
        QDateTime started;
        int keptSource = 0;
        bool cancelRequested = false;
    };

    explicit DocumentQueue(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    const Job& job(int row) const { return jobs_.at(static_cast<std::size_t>(row)); }
    int size() const { return static_cast<int>(jobs_.size()); }
    // The first queued job's row, or -1.
    int nextQueued() const;
    // The row being translated, or -1.
    int running() const;
    bool finished(int row) const;
    bool stopping(int row) const { return job(row).cancelRequested; }

    int add(const QString& path, const QString& from, const QString& to);
    void start(int row);
    void progress(int row, int done, int total);
    void succeed(int row, const QString& output, int keptSource);
    // A job that ended without a copy: cancelled if someone asked for it, else failed with `message`.
    void fail(int row, const QString& message);
    // Marks a queued job cancelled (true), or a running one as asked to stop (false: the engine still has to end it).
    bool cancel(int row);
    // Forgets the jobs that ended (their copies stay on disk).
    void clearFinished();

private:
    void changed(int row);
    QString stateText(const Job& job) const;

    std::vector<Job> jobs_;
};

}  // namespace dragoman
