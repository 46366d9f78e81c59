#include "generate_dialog.h"

#include "chart_tools.h"
#include "trace_formats.h"
#include "workload/generators.h"
#include "workload/readers.h"
#include "workload/robot_generator.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace kairos::app {

GenerateDialog::GenerateDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Generate a workload"));
    auto* form = new QFormLayout(this);
    kind_ = new QComboBox;
    kind_->addItems({tr("Chat, lengths from distributions"), tr("Chat, lengths from a trace file"),
                     tr("Robots: WID1 (drones, ≤ 8 tasks per event)"),
                     tr("Robots: WID2 (drones, ≤ 16 tasks per event)"),
                     tr("Robots: WID3 (robot arm)")});
    count_ = new QSpinBox;
    count_->setRange(1, 1000000);
    count_->setValue(2000);
    rate_ = new QDoubleSpinBox;
    rate_->setRange(0.001, 100000);
    rate_->setDecimals(3);
    rate_->setValue(2.0);
    rate_->setSuffix(tr(" req/s"));
    burstiness_ = new QDoubleSpinBox;
    burstiness_->setRange(0.01, 100);
    burstiness_->setValue(1.0);
    burstiness_->setToolTip(
        tr("Gamma shape of inter-arrival times: 1 is Poisson, below 1 burstier"));
    seed_ = new QSpinBox;
    seed_->setRange(0, 1 << 30);
    seed_->setValue(1);
    prompt_ = new QLineEdit(QStringLiteral("lognormal:512,0.8,max=4096"));
    output_ = new QLineEdit(QStringLiteral("lognormal:128,0.9,max=2048"));
    for (QLineEdit* e : {prompt_, output_})
        e->setToolTip(tr("const:N, uniform:LO,HI or lognormal:MEDIAN,SIGMA, with ,max=M"));
    lengths_ = new QLineEdit;
    auto* browse = new QPushButton(tr("…"));
    auto* lrow = new QHBoxLayout;
    lrow->addWidget(lengths_);
    lrow->addWidget(browse);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(
            this, tr("Lengths from"), views::dialogPath(QStringLiteral("workload")),
            traceFileFilter());
        views::rememberDialogChoice(QStringLiteral("workload"), f);
        if (!f.isEmpty()) lengths_->setText(f);
    });
    kind_->setToolTip(tr("Chat requests with generated lengths or a trace's lengths, or "
                         "TimelyLLM's robot workloads (plans in segments with time-utility "
                         "functions)"));
    count_->setToolTip(tr("How many requests (chat) to generate"));
    rate_->setToolTip(tr("Mean arrival rate"));
    seed_->setToolTip(tr("Random seed: the same seed gives the same workload"));
    lengths_->setToolTip(tr("A trace whose (prompt, output) lengths are drawn from"));
    browse->setToolTip(tr("Choose the trace file"));
    count_->setObjectName(QStringLiteral("count"));
    prompt_->setObjectName(QStringLiteral("prompt"));
    output_->setObjectName(QStringLiteral("output"));
    lengths_->setObjectName(QStringLiteral("lengths"));
    error_ = new QLabel;
    error_->setObjectName(QStringLiteral("error"));
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #d03030"));
    form->addRow(tr("&Kind"), kind_);
    form->addRow(tr("&Requests"), count_);
    form->addRow(tr("Arrival &rate"), rate_);
    form->addRow(tr("&Burstiness"), burstiness_);
    form->addRow(tr("&Seed"), seed_);
    form->addRow(tr("&Prompt lengths"), prompt_);
    form->addRow(tr("&Output lengths"), output_);
    // The field is a row (the path and its Browse button): the label's mnemonic needs the
    // path as its buddy, else it shows a literal '&'.
    auto* lengths_label = new QLabel(tr("&Lengths file"));
    lengths_label->setBuddy(lengths_);
    form->addRow(lengths_label, lrow);
    form->addRow(error_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
    connect(kind_, &QComboBox::currentIndexChanged, this, &GenerateDialog::updateEnabled);
    updateEnabled();
}

void GenerateDialog::updateEnabled() {
    const int k = kind_->currentIndex();
    const bool chat = k <= 1;
    for (QWidget* w : {static_cast<QWidget*>(count_), static_cast<QWidget*>(rate_),
                       static_cast<QWidget*>(burstiness_)})
        w->setEnabled(chat);
    prompt_->setEnabled(k == 0);
    output_->setEnabled(k == 0);
    lengths_->setEnabled(k == 1);
}

Workload GenerateDialog::generate() const {
    const int k = kind_->currentIndex();
    if (k >= 2) {
        static const char* presets[] = {"wid1", "wid2", "wid3"};
        RobotWorkloadSpec spec = RobotWorkloadSpec::preset_(presets[k - 2]);
        spec.seed = static_cast<std::uint64_t>(seed_->value());
        const std::vector<RobotTrace> traces =
            k == 4 ? std::vector<RobotTrace>{}
                   : readRobotTraces(std::string(KAIROS_SHARED_DATA) +
                                     "/timelyllm/timelyllm_drone_trace_set_extracted.json");
        Workload w = generateRobotWorkload(spec, traces);
        w.name = std::string(presets[k - 2]) + "-like (seed " + std::to_string(spec.seed) + ")";
        return w;
    }
    GenerateSpec g;
    g.count = static_cast<std::size_t>(count_->value());
    g.arrivals.rate = rate_->value();
    g.arrivals.burstiness = burstiness_->value();
    g.arrivals.seed = static_cast<std::uint64_t>(seed_->value());
    g.arrivals.validate();
    g.length_seed = static_cast<std::uint64_t>(seed_->value()) + 1;
    if (k == 1) {
        if (lengths_->text().isEmpty()) throw std::invalid_argument("choose a lengths file");
        const Workload src = readWorkload(lengths_->text().toStdString());
        for (const auto& r : src.requests)
            g.length_pairs.emplace_back(r.prompt_tokens, r.output_tokens);
    } else {
        g.prompt = LengthDist::parse(prompt_->text().toStdString());
        g.output = LengthDist::parse(output_->text().toStdString());
    }
    g.name = "generated (" + std::to_string(g.count) + " at " + rate_->text().toStdString() + ")";
    return generateWorkload(g);
}

void GenerateDialog::accept() {
    try {
        result_ = generate();
    } catch (const std::exception& e) {
        error_->setText(QString::fromStdString(e.what()));
        return;
    }
    QDialog::accept();
}

} // namespace kairos::app
