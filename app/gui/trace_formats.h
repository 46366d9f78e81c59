#pragma once
// The workbench's view of the trace-format table (core/workload/formats.h): the open
// dialogs' filter and Help's page, both read from it.
#include "workload/formats.h"

#include <QString>
#include <QStringList>

namespace kairos::app {

// "Traces (*.jsonl *.csv *.json);;All files (*)": every format's patterns, once each.
inline QString traceFileFilter() {
    QStringList patterns;
    for (const TraceFormat& f : traceFormats())
        for (const QString& p :
             QString::fromUtf8(f.extensions.data(), qsizetype(f.extensions.size()))
                 .split(QLatin1Char(' '), Qt::SkipEmptyParts))
            if (!patterns.contains(p)) patterns << p;
    return QStringLiteral("Traces (%1);;All files (*)").arg(patterns.join(QLatin1Char(' ')));
}

// Help › Workload formats: each format, what its reader reads, and an example.
inline QString traceFormatsHtml() {
    auto q = [](std::string_view s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); };
    QString html = QStringLiteral("<p>Detected from the file's first line (or named with "
                                  "<tt>--format</tt>):</p><ul>");
    for (const TraceFormat& f : traceFormats())
        html += QStringLiteral("<li><b>%1</b> (<tt>%2</tt>, %3): %4.<pre>%5</pre></li>")
                    .arg(q(f.title).toHtmlEscaped(), q(f.name).toHtmlEscaped(),
                         q(f.extensions).toHtmlEscaped(), q(f.fields).toHtmlEscaped(),
                         q(f.sample).trimmed().toHtmlEscaped());
    return html + QStringLiteral("</ul><p>A bad file is refused whole, with its line and field "
                                 "named. <tt>kairos-cli formats --sample NAME</tt> prints an "
                                 "example.</p>");
}

} // namespace kairos::app
