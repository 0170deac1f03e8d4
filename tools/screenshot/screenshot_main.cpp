// dragoman-screenshot: opens the real Dragoman window, loads a model, translates a text and saves a PNG of the
// window once the translation has finished streaming. Run it on a real X server (tools/screenshot.sh starts
// Xvfb), so the picture is what a user sees, fonts and all.
//   dragoman-screenshot --model M --from en --to de --text T --out shot.png
//   dragoman-screenshot --server http://127.0.0.1:8080 --server-name gpu-box ...: the same, translating on a server
//   (saved in the tool's own settings as the window's File › Connect to a server… would).
#include "engine_worker.h"
#include "main_window.h"
#include "model_manager_dialog.h"
#include "remote/switching_backend.h"
#include "translation_controller.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCommandLineParser>
#include <QPlainTextEdit>
#include <QStatusBar>
#include <QTimer>

#include <cstdio>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dragoman-screenshot"));  // its own settings, never the user's
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Screenshot of a real translation in the Dragoman window."));
    parser.addHelpOption();
    parser.addOptions({{"model", "Model folder or id.", "M"},
                       {"from", "Source language.", "L", "en"},
                       {"to", "Target language.", "L", "de"},
                       {"text", "Text to translate.", "T"},
                       {"out", "PNG file to write.", "FILE", "screenshot.png"},
                       {"server", "Translate on this OpenAI-compatible server instead of --model.", "URL"},
                       {"server-name", "The server's name in the window.", "NAME", "gpu-box"},
                       {"server-model", "The server's model (default: its first).", "NAME"},
                       {"document", "After the text, translate this document too (repeatable; shown in the document list).", "FILE"},
                       {"models", "Take the picture of File › Models… (the model manager) instead of the window."}});
    parser.process(app);
    if ((!parser.isSet("model") && !parser.isSet("server")) || !parser.isSet("text")) {
        std::fprintf(stderr, "error: --model (or --server) and --text are required\n");
        return 2;
    }
    auto model = parser.value("model");
    if (parser.isSet("server")) {
        const dragoman::ServerEngine server{parser.value("server-name"), parser.value("server"), parser.value("server-model"), {}, {}, 60};
        dragoman::saveServerEngine(server);
        model = server.id();
    }
    dragoman::EngineWorker engine(0, std::make_unique<dragoman::SwitchingBackend>());
    dragoman::TranslationController controller(&engine);
    dragoman::MainWindow window(&controller);
    window.resize(1100, 560);
    window.show();
    auto pick = [](QComboBox* box, const QString& code) { box->setCurrentIndex(std::max(0, box->findData(code))); };
    QObject::connect(&controller, &dragoman::TranslationController::modelLoaded, &window, [&] {
        pick(window.fromPicker(), parser.value("from"));
        pick(window.toPicker(), parser.value("to"));
        window.translateAsYouType()->setChecked(false);  // one translation, the one shown
        window.sourcePane()->setPlainText(parser.value("text"));
        window.translateNow();
    });
    QObject::connect(&controller, &dragoman::TranslationController::loadFailed, &app, [](const QString& message) {
        std::fprintf(stderr, "error: %s\n", qPrintable(message));
        QApplication::exit(1);
    });
    const auto shoot = [&] {
        // One more turn of the event loop so the last delta and the status line are painted.
        QWidget* shown = &window;
        if (parser.isSet("models")) shown = window.manageModels();
        QTimer::singleShot(300, &window, [&, shown] {
            const bool ok = shown->grab().save(parser.value("out"));
            std::printf("%s\n", qPrintable(parser.value("out")));
            QApplication::exit(ok ? 0 : 1);
        });
    };
    auto* queue = controller.documentQueue();
    QObject::connect(queue, &QAbstractItemModel::dataChanged, &window, [&, queue] {
        for (int row = 0; row < queue->size(); ++row)
            if (!queue->finished(row)) return;
        shoot();
    });
    QObject::connect(&controller, &dragoman::TranslationController::translationFinished, &window, [&] {
        if (parser.isSet("document"))
            controller.translateDocuments(parser.values("document"));
        else
            shoot();
    });
    window.loadModel(model);
    QTimer::singleShot(120000, &app, [] {
        std::fprintf(stderr, "error: timed out\n");
        QApplication::exit(1);
    });
    return QApplication::exec();
}
