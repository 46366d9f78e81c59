#pragma once
// A panel in a frameless scroll area that sizes it to its viewport: what a dock holds when its
// panel may need more room than the dock gives (the Policy panel, the right column's tab
// group, the Inspector's request part).
#include <QFrame>
#include <QScrollArea>

namespace kairos::app {

inline QScrollArea* scrolling(QWidget* panel) {
    auto* scroll = new QScrollArea;
    scroll->setWidget(panel);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
}

} // namespace kairos::app
