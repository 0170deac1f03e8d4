#pragma once
// The application's style, with a highlight-coloured border drawn around a text pane's frame while it has the
// keyboard's focus (Fusion draws the pane's frame the same either way, so a person could not see where keys go).
// Colours come from the palette in force, so a dark desktop theme still reaches the panes.
#include <QProxyStyle>

namespace dragoman {

class FocusFrameStyle : public QProxyStyle {
    Q_OBJECT
public:
    using QProxyStyle::QProxyStyle;
    void drawControl(ControlElement element, const QStyleOption* option, QPainter* painter, const QWidget* widget = nullptr) const override;
};

}  // namespace dragoman
