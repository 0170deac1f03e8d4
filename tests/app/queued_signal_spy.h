#pragma once
// A QSignalSpy for signals emitted on another thread (the engine worker's). QSignalSpy connects directly, so
// it records on the emitting thread while the test reads the list on its own: a data race (ThreadSanitizer
// reports it, and a list that grows while it is read can crash). This spy's connection is queued: it records
// on the test's thread, from the event loop that QTRY_COMPARE and wait() run, as the window's slots do.
#include <QList>
#include <QMetaMethod>
#include <QObject>
#include <QTest>
#include <QVariant>

class QueuedSignalSpy : public QObject, public QList<QList<QVariant>> {
public:
    template <typename Signal>
    QueuedSignalSpy(const typename QtPrivate::FunctionPointer<Signal>::Object* sender, Signal signal) {
        const QMetaMethod method = QMetaMethod::fromSignal(signal);
        for (int i = 0; i < method.parameterCount(); ++i)
            types_ << method.parameterMetaType(i);
        // The one method past QObject's own: qt_metacall below answers it.
        valid_ = QMetaObject::connect(sender, method.methodIndex(), this, QObject::staticMetaObject.methodCount(), Qt::QueuedConnection);
    }

    bool isValid() const { return valid_; }
    // Whether another emission arrives within `ms`.
    bool wait(int ms = 5000) {
        const auto before = size();
        return QTest::qWaitFor([&] { return size() > before; }, ms);
    }

    int qt_metacall(QMetaObject::Call call, int id, void** args) override {
        id = QObject::qt_metacall(call, id, args);
        if (id < 0) return id;
        if (call == QMetaObject::InvokeMetaMethod) {
            if (id == 0) record(args);
            --id;
        }
        return id;
    }

private:
    void record(void** args) {
        QList<QVariant> values;
        for (qsizetype i = 0; i < types_.size(); ++i)
            values << QVariant(types_[i], args[i + 1]);
        append(values);
    }

    QList<QMetaType> types_;
    bool valid_ = false;
};
