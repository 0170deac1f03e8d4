#pragma once
// A real `dragoman-cli serve` process on loopback for the tests that talk to it (tst_serve, tst_remote).
#include <QProcess>
#include <QStringList>

#include <signal.h>
#include <sys/types.h>
#include <csignal>

// A running `serve`, stopped (SIGTERM) when it goes out of scope.
class Server {
public:
    explicit Server(QStringList args) {
        process_.setProcessChannelMode(QProcess::SeparateChannels);
        process_.start(qEnvironmentVariable("DRAGOMAN_CLI"), QStringList{"serve", "--port", "0"} + args);
        if (!process_.waitForStarted(10000)) return;
        while (process_.state() == QProcess::Running && !process_.canReadLine())
            process_.waitForReadyRead(100);
        const auto line = QString::fromUtf8(process_.readLine()).trimmed();
        if (line.startsWith("listening on ")) url_ = line.mid(13);
    }
    ~Server() {
        if (process_.state() == QProcess::Running) {
            ::kill(static_cast<pid_t>(process_.processId()), SIGTERM);
            process_.waitForFinished(30000);
        }
    }
    QString url() const { return url_; }
    QProcess& process() { return process_; }

private:
    QProcess process_;
    QString url_;
};
