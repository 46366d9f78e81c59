#pragma once
// Find requests over the timeline: a search field in core's RequestFilter grammar (e.g.
// "killed", "ttft>2000 class=urgent"), its count, previous / next (Shift+F3 / F3) and "only
// matches". It evaluates the search on the shown run (WorkbenchState), marks the matches on
// the timeline, and a step to a match scrolls to it and selects it (its card is shown).
#include "model/request.h"

#include <QWidget>
#include <vector>

class QCheckBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QTimer;

namespace kairos::views {
class TimelineView;
}

namespace kairos::app {

class WorkbenchState;

class FindBar : public QWidget {
    Q_OBJECT
public:
    FindBar(WorkbenchState* state, views::TimelineView* timeline, QWidget* parent = nullptr);
    // Widgets shown before the search field (the view history's Back and Forward).
    void addLeading(QWidget* w);

    QString text() const; // trimmed
    // Sets the search and evaluates it now.
    void setFilter(const QString& text);
    // Re-evaluates the search on the shown run (applied); with `rows`, asks for the rows
    // (rowsWanted) when only the matches are shown.
    void apply(bool rows = true);
    const std::vector<ReqId>& filterMatches() const { return matches_; }
    QString filterError() const { return error_; }
    QString infoText() const; // what the bar says of the search ("3 of 400", ...)
    void nextMatch();
    void previousMatch();
    // The request stepped to (-1: none).
    int currentMatch() const { return pos_ < 0 ? -1 : int(matches_[std::size_t(pos_)]); }
    bool onlyMatches() const;
    void setOnlyMatches(bool on); // without rowsWanted
    // Only the matches' rows are to be shown (only matches on, a valid non-empty search).
    bool showsOnlyMatches() const;
    QCheckBox* onlyMatchesBox() const { return only_; }
    void focusField();

Q_SIGNALS:
    void applied();    // the search was (re-)evaluated
    void rowsWanted(); // the timeline's rows should follow (only matches toggled or re-evaluated)
    void stepped();    // next or previous match selected (as a click on its row would)

private:
    void step(int by);

    WorkbenchState* state_;
    views::TimelineView* timeline_;
    QHBoxLayout* layout_;
    QLineEdit* field_;
    QLabel* info_;
    QCheckBox* only_;
    QTimer* timer_;
    std::vector<ReqId> matches_;
    int pos_ = -1;
    QString error_;
    QString help_; // the field's tooltip (an error is added under it)
};

} // namespace kairos::app
