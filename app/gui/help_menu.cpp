#include "help_menu.h"

#include "metrics/metric_table.h"
#include "predict/predictor.h"
#include "sched/registry.h"
#include "trace_formats.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

namespace kairos::app {

namespace {

// The metric table (metrics/metric_table.h) as Help shows it: each metric's name (its JSON
// key and what sweeps and experiments take), unit, better direction and meaning.
QString metricTableHtml() {
    QString html = QObject::tr("<p>Every metric (kairos-cli metrics lists the same):</p>"
                               "<table cellspacing=\"0\" cellpadding=\"3\" border=\"1\">"
                               "<tr><th>name</th><th>shown as</th><th>unit</th><th>better</th>"
                               "<th>meaning</th></tr>");
    for (const MetricDef& d : metricTable({50, 90, 99}))
        html += QStringLiteral("<tr><td><code>%1</code>%2</td><td>%3</td><td>%4</td><td>%5</td>"
                               "<td>%6</td></tr>")
                    .arg(QString::fromStdString(d.key).toHtmlEscaped(),
                         d.vllm ? QObject::tr(" (vLLM)") : QString(),
                         QString::fromStdString(d.display).toHtmlEscaped(),
                         QString::fromStdString(d.unit).toHtmlEscaped(),
                         QString::fromUtf8(betterName(d.better)),
                         QString::fromStdString(d.description).toHtmlEscaped());
    return html + QStringLiteral("</table>");
}

} // namespace

void addHelpMenu(QMainWindow* window) {
    auto* help = window->menuBar()->addMenu(QObject::tr("&Help"));
    // A page of help in a dialog that fits the screen and scrolls (a message box grew to
    // the screen's height and cut the formats' examples at its right edge); examples wrap.
    auto show = [window](const QString& title, const QString& html) {
        auto* dlg = new QDialog(window);
        dlg->setObjectName(QStringLiteral("helpDialog"));
        dlg->setWindowTitle(title);
        dlg->setAttribute(Qt::WA_DeleteOnClose);
        auto* text = new QTextBrowser;
        text->setObjectName(QStringLiteral("helpText"));
        text->setOpenExternalLinks(true);
        text->document()->setDefaultStyleSheet(QStringLiteral("pre { white-space: pre-wrap; }"));
        text->setHtml(html);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
        QObject::connect(buttons, &QDialogButtonBox::rejected, dlg, &QDialog::reject);
        auto* v = new QVBoxLayout(dlg);
        v->addWidget(text);
        v->addWidget(buttons);
        const QScreen* screen = window->screen();
        const QRect avail = screen ? screen->availableGeometry() : QRect(0, 0, 1366, 768);
        dlg->resize(std::min(760, avail.width() * 9 / 10), std::min(620, avail.height() * 8 / 10));
        dlg->open();
    };
    help->addAction(QObject::tr("&Keyboard and mouse"), QKeySequence::HelpContents, window,
                    [window, show] {
                        show(QObject::tr("Keyboard and mouse"), shortcutsHelp(window->menuBar()));
                    });
    help->addAction(QObject::tr("&Metrics"), window, [show] {
        show(QObject::tr("What the metrics mean"),
             QObject::tr(
                 "<p>Latencies follow vLLM's benchmark definitions.</p><ul>"
                 "<li><b>TTFT</b>: time to first token, arrival to the first output token "
                 "(queueing and prefill).</li>"
                 "<li><b>TPOT</b>: time per output token after the first, (end − first token) "
                 "/ (output − 1).</li>"
                 "<li><b>E2EL</b>: end-to-end latency, arrival to the last token.</li>"
                 "<li><b>Goodput</b>: requests per second that met every SLO set (TTFT, TPOT); a "
                 "killed request meets none.</li>"
                 "<li><b>Offered rate / throughput</b>: requests arriving / completing per "
                 "second. When served falls behind offered the run is <i>overloaded</i> and its "
                 "latencies grow with its length, not a service level.</li>"
                 "<li><b>Preemptions</b>: KV dropped and recomputed; <b>suspensions</b>: "
                 "paused with KV kept (TimelyLLM segments, as Kairos reads the paper); "
                 "<b>segments re-queued</b>: a segment handed to the robot and the rest queued "
                 "again as a new request (the TimelyLLM authors' code), not a preemption.</li>"
                 "<li><b>KV peak</b>: most KV-cache tokens in use.</li>"
                 "<li><b>Utility W(s0)</b> (TimelyLLM): the time-utility function at the first "
                 "response, as % of the most it can give; negative when late (a task never "
                 "answered is scored at the run's end).</li>"
                 "<li><b>Authors' metric</b> (TimelyLLM): their scripts' figure: response = "
                 "the robot's first start, the first 10 tasks skipped, a task never handed to "
                 "its robot not scored but counted as <i>dropped</i>.</li>"
                 "<li><b>Within budget</b> (TimeBill): finished before the request's time "
                 "budget.</li>"
                 "<li><b>[common]</b>: over the requests both compared runs completed.</li>"
                 "<li><b>n/c</b> in the change column: not compared. The two runs served "
                 "other workloads, or the same requests arriving at other times (another "
                 "rate): latency depends on the arrivals, so no change is judged; the note "
                 "under the table says which.</li></ul>") +
                 metricTableHtml());
    });
    help->addAction(QObject::tr("&Workload formats"), window,
                    [show] { show(QObject::tr("Workload formats"), traceFormatsHtml()); });
    help->addAction(QObject::tr("&Policies and papers"), window, [show] {
        QString html = QObject::tr("<p>The policies (kairos-cli policies --markdown gives "
                                   "their parameters):</p><ul>");
        for (const PolicySpec& ps : policySpecs())
            html += QStringLiteral("<li><b>%1</b>: %2</li>")
                        .arg(QString::fromStdString(ps.name).toHtmlEscaped(),
                             QString::fromStdString(ps.summary).toHtmlEscaped());
        html += QObject::tr(
                    "</ul><p>Papers: <i>TimeBill</i> (time budgets, KV eviction α*, pessimism "
                    "k), <i>TimelyLLM</i> (time-utility functions, PUD, segmented generation), "
                    "<i>Trail</i> (refined length predictions, SPRPT with limited preemption C), "
                    "<i>MC-SF</i> (memory-constrained shortest-first), <i>ALA</i> (throughput "
                    "model c − a·e<sup>−b·batch</sup>). Predictors: %1.</p>")
                    .arg(QString::fromStdString(kPredictorGrammar).toHtmlEscaped());
        show(QObject::tr("Policies and papers"), html);
    });
    help->addSeparator();
    help->addAction(QObject::tr("&About Kairos"), window, [window] {
        QMessageBox::about(window, QObject::tr("About Kairos"),
                           QObject::tr("<b>Kairos %1</b><br>Latency analysis of LLM serving under "
                                       "deadlines.")
                               .arg(QStringLiteral(KAIROS_VERSION)));
    });
}

QString shortcutsHelp(const QMenuBar* bar) {
    // From the menus' own actions (never stale), then what the mouse does.
    QString html = QStringLiteral("<table cellspacing=\"0\" cellpadding=\"3\">");
    std::function<void(const QMenu*, const QString&)> walk = [&](const QMenu* m,
                                                                 const QString& path) {
        for (const QAction* a : m->actions()) {
            if (a->menu()) {
                walk(a->menu(), path + a->menu()->title().remove('&') + " › ");
                continue;
            }
            if (a->shortcut().isEmpty() || a->text().isEmpty()) continue;
            // An action whose text follows the state (Undo's "Undo change C") is named by its
            // fixed help text.
            const QString text = a->property("helpText").isValid()
                                     ? a->property("helpText").toString()
                                     : a->text().remove('&');
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2%3</td></tr>")
                        .arg(a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                             path.toHtmlEscaped(), text.toHtmlEscaped());
        }
    };
    for (const QAction* a : bar->actions())
        if (a->menu()) walk(a->menu(), a->menu()->title().remove('&') + " › ");
    html +=
        QObject::tr("<tr><td><b>F3 / Shift+F3</b></td><td>next / previous found request</td></tr>"
                    "<tr><td><b>Esc</b></td><td>cancel a long run or read while one runs; "
                    "else clear the selected stretch (timeline or KV chart focused)</td></tr>"
                    "<tr><td><b>Wheel</b></td><td>zoom time around the cursor</td></tr>"
                    "<tr><td><b>Shift+wheel</b></td><td>scroll rows</td></tr>"
                    "<tr><td><b>Ctrl+wheel</b></td><td>row height</td></tr>"
                    "<tr><td><b>Wheel over a setting</b></td><td>scrolls its panel; it edits "
                    "a slider, box or list only once clicked or tabbed to</td></tr>"
                    "<tr><td><b>Drag</b></td><td>pan time (timeline and KV chart)</td></tr>"
                    "<tr><td><b>W / S</b></td><td>zoom time in / out (the pointer over the "
                    "timeline or KV chart, or either focused)</td></tr>"
                    "<tr><td><b>A / D</b></td><td>pan time left / right</td></tr>"
                    "<tr><td><b>M (or F)</b></td><td>zoom to the selected stretch, else to "
                    "the selected request's life</td></tr>"
                    "<tr><td><b>Shift+M</b></td><td>back to the view before the zoom</td></tr>"
                    "<tr><td><b>Drag on the ruler, Shift+drag</b></td><td>select a stretch "
                    "of time (Shift+drag on the rows or the KV chart): its counts on a line "
                    "above the timeline, every figure in the Selection tab</td></tr>"
                    "<tr><td><b>Click</b></td><td>a request's card</td></tr>"
                    "<tr><td><b>Double-click</b></td><td>a request: zoom to its life "
                    "(Shift+M back)</td></tr>"
                    "<tr><td><b>Right click</b></td><td>a chart: Export chart; a slider: "
                    "Sweep this parameter</td></tr></table>");
    return html;
}

} // namespace kairos::app
