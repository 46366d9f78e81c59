#pragma once
// The Models panel's box for a configuration an ALA model never measured (another chip,
// vendor or device count): the configuration's four fields, and the user's own measured
// rows of it (input, output, batch, tokens/s), typed in or read from a CSV of
// LLM-Inference-Bench's columns. The panel predicts the configuration with its range and
// fits the estimate to these rows (ala::RangePredictor); this widget only holds the input
// and says when it changed.
#include "fit/bench.h"

#include <QGroupBox>
#include <QString>
#include <vector>

class QComboBox;
class QLabel;
class QTableWidget;

namespace kairos::app {

class NewHardwareBox : public QGroupBox {
    Q_OBJECT
public:
    explicit NewHardwareBox(QWidget* parent = nullptr);
    // The choices offered in the four fields (each stays editable): the model's own values
    // and, for hardware, every chip of the spec-sheet tables.
    void setChoices(const std::vector<std::string>& frameworks,
                    const std::vector<std::string>& models,
                    const std::vector<std::string>& hardware,
                    const std::vector<std::string>& precisions);
    // The configuration's fields (ii, oo, bb and thpt zero).
    ala::BenchRow configuration() const;
    void setConfiguration(const ala::BenchRow& r);
    // The complete rows of the table, with the configuration's fields; `problems` (when
    // given) gets a line per row left out, naming the row and the cell.
    std::vector<ala::BenchRow> measurements(QStringList* problems = nullptr) const;
    void addMeasurement(int ii, int oo, int bb, double thpt); // a row at the end
    // Reads a CSV of LLM-Inference-Bench's columns (throughput required): the first row's
    // configuration and every row of it; false with the reason (file, line, field) in
    // `error`, the box unchanged.
    bool importCsv(const QString& path, QString* error);
    QTableWidget* table() const { return table_; }
    void setStatus(const QString& text); // under the table: what the rows did

Q_SIGNALS:
    void changed(); // a field, a row or a cell changed

private:
    QComboBox* fields_[4] = {};
    QTableWidget* table_ = nullptr;
    QLabel* status_ = nullptr;
};

} // namespace kairos::app
