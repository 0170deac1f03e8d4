#include "dragoman.h"
#include "engine_worker.h"
#include "main_window.h"
#include "model_library.h"

#include <QApplication>
#include <QComboBox>
#include <QSettings>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dragoman"));
    QApplication::setApplicationDisplayName(QStringLiteral("Dragoman"));
    QApplication::setOrganizationName(QStringLiteral("dragoman"));
    QApplication::setApplicationVersion(QStringLiteral(DRAGOMAN_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("dragoman"));
    dragoman::initLogging();
    dragoman::logMessage(dragoman::LogLevel::Info, "Dragoman " DRAGOMAN_VERSION " starting");

    // dragoman [MODEL]: a model folder or id; otherwise the default model, if one is installed.
    // The compute threads chosen in Settings (0: one per core); libtorch's pools are sized once per process.
    dragoman::EngineWorker engine(QSettings().value(QStringLiteral("engine/threads"), 0).toInt());
    dragoman::MainWindow window(&engine);
    window.show();
    const auto args = QApplication::arguments();
    if (args.size() > 1) {
        window.loadModel(args.at(1));
    } else if (const auto last = window.modelPicker()->currentData().toString(); !last.isEmpty()) {
        window.loadModel(last);  // the model of the last session (restored by the window), else the first listed
    } else if (const auto id = dragoman::defaultModelId(); !id.isEmpty()) {
        window.loadModel(id);  // with no model installed, the window says so and how to add one
    }
    return QApplication::exec();
}
