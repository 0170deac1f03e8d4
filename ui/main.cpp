#include "dragoman.h"
#include "engine_worker.h"
#include "main_window.h"
#include "remote/switching_backend.h"
#include "translation_controller.h"

#include <QApplication>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dragoman"));
    QApplication::setApplicationDisplayName(QStringLiteral("Dragoman"));
    QApplication::setOrganizationName(QStringLiteral("dragoman"));
    QApplication::setApplicationVersion(QStringLiteral(DRAGOMAN_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("dragoman"));
    dragoman::initLogging();
    dragoman::logMessage(dragoman::LogLevel::Info, "Dragoman " DRAGOMAN_VERSION " starting");

    // The compute threads chosen in Settings (0: one per core); libtorch's pools are sized once per process.
    // A local model or a server saved in the settings, whichever the model picker loads.
    dragoman::EngineWorker engine(dragoman::TranslationController::configuredThreads(), std::make_unique<dragoman::SwitchingBackend>());
    dragoman::TranslationController controller(&engine);
    dragoman::MainWindow window(&controller);
    window.show();
    // dragoman [MODEL]: a model folder or id; otherwise the last session's model or the bundled default. With
    // no model installed, the window says so and how to add one.
    const auto args = QApplication::arguments();
    controller.loadStartupModel(args.size() > 1 ? args.at(1) : QString());
    return QApplication::exec();
}
