#include "main_window.h"
#include "util/log.h"

#include <QApplication>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dragoman"));
    QApplication::setApplicationDisplayName(QStringLiteral("Dragoman"));
    QApplication::setOrganizationName(QStringLiteral("dragoman"));
    QApplication::setApplicationVersion(QStringLiteral(DRAGOMAN_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("dragoman"));
    dragoman::log::init();
    dragoman::log::logger().info("Dragoman {} starting", DRAGOMAN_VERSION);

    dragoman::MainWindow window;
    window.show();
    return QApplication::exec();
}
