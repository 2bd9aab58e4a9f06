"""A lazy table of one row's values and their stored bits (index, value, hex, sign, exponent…)."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.core.rows.bits import BIT_LAYOUTS, BitFields, QuantBlocks, quant_blocks
from explorer.core.rows.read import RowData
from explorer.ui.rows import quant_columns as qc
from explorer.ui.rows.style import (
    exact_decimal,
    float_repr,
    is_dark,
    mono_font,
    row_name,
    series_color,
)
from explorer.ui.widgets.painted_table import Column, Ink, PaintedTable, Row

INDEX, VALUE, HEX, SIGN, EXPONENT, MANTISSA, BITS = range(7)
_HEADERS = ("index", "value", "hex", "sign", "exponent", "mantissa", "bits")
_ModelIndex = QModelIndex | QPersistentModelIndex
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_FONT = int(Qt.ItemDataRole.FontRole.value)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_USER = int(Qt.ItemDataRole.UserRole.value)
_RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)
_LEFT = int((Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter).value)
_CENTER = int(Qt.AlignmentFlag.AlignCenter.value)
_ALIGNMENT = {
    INDEX: _RIGHT,
    VALUE: _RIGHT,
    HEX: _CENTER,
    SIGN: _CENTER,
    EXPONENT: _RIGHT,
    MANTISSA: _RIGHT,
    BITS: _LEFT,
}
_FIELD_HUE = {SIGN: 3, EXPONENT: 0, MANTISSA: 2}  # series_color indices: red, blue, green


def field_colors(dark: bool) -> dict[int, QColor]:
    return {col: series_color(n, dark) for col, n in _FIELD_HUE.items()}


def _header_tips(dtype: str | None) -> tuple[str, ...]:
    if dtype in BIT_LAYOUTS:
        e, m = BIT_LAYOUTS[dtype]
        bias = (1 << (e - 1)) - 1
        width = 1 + e + m
    else:
        e, m, bias, width = 0, 0, 0, 0
    return (
        "Position of the value in the embedding row (0 … d_model − 1)",
        "The value decoded exactly to float32: the shortest decimal that reads back as the same "
        "number (hover a cell for its exact decimal expansion)",
        f"The {width} stored bits of the {dtype} value, in hexadecimal",
        "Sign bit: 0 = positive, 1 = negative",
        f"Exponent field ({e} bits, biased by {bias}): the value is scaled by "
        f"2^(exponent − {bias}); 0 means zero or subnormal, all ones means infinity or NaN",
        f"Mantissa field ({m} bits): the fraction after the leading 1, "
        f"value = 1 + mantissa / 2^{m}",
        "All bits as sign · exponent · mantissa",
    )


class ValuesModel(QAbstractTableModel):
    """Rows are computed only when Qt asks for them, so 4096 (or 16384) entries scroll smoothly."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._row: RowData | None = None
        self._bits: BitFields | None = None
        self._quant: QuantBlocks | None = None  # a quantised GGUF row's blocks
        self._tips = _header_tips(None)
        self._mono = mono_font()
        self._bold = QFont(self._mono)
        self._bold.setBold(True)
        self.colors = field_colors(False)

    def set_dark(self, dark: bool) -> None:
        self.colors = field_colors(dark)
        if self.rowCount():
            self.dataChanged.emit(self.index(0, SIGN), self.index(self.rowCount() - 1, MANTISSA))

    # -- content ----------------------------------------------------------------------------
    def set_row(self, row: RowData | None) -> None:
        self.beginResetModel()
        self._mono = mono_font()  # its size follows presentation mode
        self._bold = QFont(self._mono)
        self._bold.setBold(True)
        self._row = row
        self._bits = (
            BitFields(row.raw, row.dtype) if row is not None and row.dtype in BIT_LAYOUTS else None
        )
        self._quant = quant_blocks(row.raw) if row is not None and self._bits is None else None
        quant = self._quant
        self._tips = qc.header_tips(quant) if quant else _header_tips(row.dtype if row else None)
        self.endResetModel()

    @property
    def row(self) -> RowData | None:
        return self._row

    @property
    def row_dtype(self) -> str | None:
        return None if self._row is None else self._row.dtype

    @property
    def has_bits(self) -> bool:
        return self._bits is not None

    @property
    def quant(self) -> QuantBlocks | None:
        """The blocks of a quantised row shown (scale, minimum, integer quants), else None."""
        return self._quant

    @property
    def bits(self) -> BitFields | None:
        """The bit fields of the row shown (None for a dtype without them)."""
        return self._bits

    @property
    def bold_font(self) -> QFont:
        """The font of the row's largest |value|, the widest text in the table."""
        return self._bold

    # -- Qt model API -------------------------------------------------------------------------
    def rowCount(self, parent: _ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self._row is None else int(self._row.values.shape[0])

    def columnCount(self, parent: _ModelIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            return 0
        if self._quant is not None:
            return len(qc.headers(self._quant))
        return len(_HEADERS) if self._bits is not None else 2

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ):
        names = qc.headers(self._quant) if self._quant is not None else _HEADERS
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(names):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return names[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tips[section]
        return None

    def text(self, i: int, col: int) -> str | None:
        """The text of a cell, as shown: the value's shortest decimal, a quantised row's parts,
        the hex word, and every other stored field written out as its exact value."""
        row = self._row
        if row is None:
            return None
        if col == VALUE:
            return float_repr(row.values[i])
        if self._quant is not None and col != INDEX:
            return qc.display(self._quant, i, col)
        if col == HEX and self._bits is not None:
            return self._bits.hex(i)
        exact = self._exact(row, i, col)
        return None if exact is None else str(exact)

    def font_at(self, i: int) -> QFont:
        """Bold for the largest |value|, else the monospaced font."""
        row = self._row
        return self._bold if row is not None and i == row.stats.argmax_abs else self._mono

    def alignment(self, col: int) -> int:
        return _ALIGNMENT[col] if self._quant is None else _RIGHT

    def color(self, col: int) -> QColor | None:
        """The colour of a bit-field column (None: the palette's text colour)."""
        return self.colors.get(col) if self._bits is not None else None

    def data(self, index: _ModelIndex, role: int = _DISPLAY):
        # ValuesView paints from text() directly; data() serves tooltips, tests, copying and
        # accessibility.
        row = self._row
        if row is None:
            return None
        role = int(role)
        if role == _DISPLAY:
            return self.text(index.row(), index.column())
        if role == _FONT:
            return self.font_at(index.row())
        if role == _ALIGN:
            return self.alignment(index.column())
        if role == _FOREGROUND:
            return self.color(index.column())
        if role == _TOOLTIP:
            return self._tooltip(row, index.row(), index.column())
        if role == _USER:  # exact machine values, for code and tests
            return self._exact(row, index.row(), index.column())
        return None

    def _tooltip(self, row: RowData, i: int, col: int) -> str | None:
        bits = self._bits
        if self._quant is not None and col != INDEX:
            exactly = f"exactly {exact_decimal(float(row.values[i]))}\n= " if col == VALUE else ""
            return exactly + qc.meaning(self._quant, i)
        if col == VALUE:
            tip = f"exactly {exact_decimal(float(row.values[i]))}"
            return tip + (f"\n= {bits.meaning(i)}" if bits is not None else "")
        if bits is not None and col != INDEX:
            return bits.meaning(i)
        return None

    def _exact(self, row: RowData, i: int, col: int) -> object:
        if col == INDEX:
            return i
        if col == VALUE:
            return float(row.values[i])
        if self._quant is not None:
            return qc.exact(self._quant, i, col)
        bits = self._bits
        if bits is None:
            return None
        if col == HEX:
            return int(bits.words[i])
        if col == SIGN:
            return int(bits.sign[i])
        if col == EXPONENT:
            return int(bits.exponent[i])
        if col == MANTISSA:
            return int(bits.mantissa[i])
        return bits.binary(i) if col == BITS else None


class ValuesView(PaintedTable):
    """The values, painted straight from the model's text (see PaintedTable). The bits column
    draws 's eeeeeeee mmmmmmm' with each field in the colour of its own column."""

    MARGIN = 4

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._fonts: dict[int, tuple[QFont, QFontMetrics, int, int]] = {}  # by id, per paint

    def begin_paint(self) -> None:
        self._fonts.clear()

    def paint_row(self, painter: QPainter, row: Row, columns: list[Column], ink: Ink) -> None:
        model = self.model()
        assert isinstance(model, ValuesModel)
        i, selected = row.number, row.selected
        font = model.font_at(i)
        if id(font) not in self._fonts:  # (the dict holds the font: its id stays its own)
            metrics = QFontMetrics(font)
            width = (metrics.horizontalAdvance(" "), metrics.maxWidth())
            self._fonts[id(font)] = (font, metrics, *width)
        _, metrics, space, widest = self._fonts[id(font)]
        painter.setFont(font)
        bits = model.has_bits
        for column in columns:
            col = column.number
            text = model.text(i, col)
            if not text:
                continue
            if col == BITS and bits:
                left, room = column.text_x, column.room
                for field, part in zip((SIGN, EXPONENT, MANTISSA), text.split(" "), strict=True):
                    painter.setPen(ink.pen(selected, model.colors[field]))
                    advance = metrics.horizontalAdvance(part)
                    painter.drawText(left, row.y, max(min(advance, room), 0), row.h, _LEFT, part)
                    left, room = left + advance + space, room - advance - space
                    if room <= 0:
                        break
                continue
            painter.setPen(ink.pen(selected, model.color(col)))
            self.draw_text(painter, metrics, row, column, model.alignment(col), text, widest)


class ValuesTable(QWidget):
    """The table plus a caption, a go-to-index box and a jump to the largest |value|."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = ValuesModel(self)
        self._sized_for: tuple | None = None  # what the column widths were measured for
        self.caption = QLabel()
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setWordWrap(True)  # a long caption (quantised rows) never widens the window
        self.caption.setMinimumWidth(120)
        self.goto = QSpinBox()
        self.goto.setPrefix("index ")
        self.goto.setToolTip("Scroll to a position in the row")
        self.goto.setKeyboardTracking(False)
        self.goto.valueChanged.connect(self.show_index)
        self.peak = QPushButton("Largest |value|")
        self.peak.setToolTip("Scroll to the entry with the largest magnitude (shown in bold)")
        self.peak.clicked.connect(self._show_peak)

        self.view = ValuesView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().hide()
        vh = self.view.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # never measure 4096 rows
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.view.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(False)  # a maximised window must not stretch the bits
        hh.setHighlightSections(False)
        self.view.setWordWrap(False)

        bar = QHBoxLayout()
        bar.addWidget(self.caption, 1)
        bar.addWidget(self.goto)
        bar.addWidget(self.peak)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.view)

    def changeEvent(self, ev) -> None:
        super().changeEvent(ev)
        if ev.type() == ev.Type.PaletteChange:
            self.model.set_dark(is_dark(self))

    @property
    def row(self) -> RowData | None:
        """The row the table shows."""
        return self.model.row

    def set_row(self, row: RowData | None) -> None:
        self.model.colors = field_colors(is_dark(self))
        self.model.set_row(row)
        n = 0 if row is None else int(row.values.shape[0])
        self.goto.blockSignals(True)
        self.goto.setRange(0, max(0, n - 1))
        self.goto.blockSignals(False)
        self.peak.setEnabled(n > 0)
        if row is None:
            self.caption.setText("")
            return
        quant = self.model.quant
        bits = "" if self.model.has_bits else f" — no bit layout for {row.dtype}"
        if quant is not None:
            bits = (
                f" in blocks of {quant.block_size} ({quant.block_bytes} bytes, "
                f"{quant.bits_per_value:g} bits a value): value = scale × quant"
                + (" + min" if quant.minimum is not None else "")
                + ", in steps of the block's scale"
            )
        self.caption.setText(
            f"{row_name(row.label, row.id)}  ·  {n} values stored as {row.dtype}{bits}"
        )
        self._size_columns(n)

    def _size_columns(self, n: int) -> None:
        quant = self.model.quant
        layout = (
            self.model.bold_font.key(),
            self.model.row_dtype,
            self.model.bits.width if self.model.bits is not None else None,
            None if quant is None else quant.minimum is not None,
            len(str(n)),
        )
        if layout == self._sized_for:  # clicking through one model: the same widths again
            return
        self._sized_for = layout
        fm = QFontMetrics(self.model.bold_font)
        pad = 18
        widths = {
            INDEX: fm.horizontalAdvance("index") + pad,
            VALUE: fm.horizontalAdvance(
                "-1.2345678901234567e-05" if self.model.row_dtype == "F64" else "-1.2345678e-05"
            )
            + pad,
        }
        if self.model.has_bits:
            bits = self.model.bits
            assert bits is not None
            widths.update(
                {
                    HEX: fm.horizontalAdvance("0x" + "F" * (bits.width // 4)) + pad * 2,
                    SIGN: fm.horizontalAdvance("sign") + pad,
                    EXPONENT: fm.horizontalAdvance("exponent") + pad,
                    MANTISSA: fm.horizontalAdvance("mantissa ") + pad,
                    BITS: fm.horizontalAdvance("0" * (bits.width + 2)) + pad * 2,
                }
            )
        if self.model.quant is not None:
            number = fm.horizontalAdvance("-1.2345678e-05") + pad
            widths.update({qc.BLOCK: fm.horizontalAdvance("block 0000") + pad})
            widths.update({qc.SCALE: number, qc.QUANT: fm.horizontalAdvance("quant") + pad})
            widths.update({qc.MINIMUM: number} if self.model.quant.minimum is not None else {})
        widths[INDEX] = max(widths[INDEX], fm.horizontalAdvance(str(n)) + pad)
        for col, w in widths.items():
            self.view.setColumnWidth(col, w)

    def show_index(self, i: int) -> None:
        if self.model.rowCount() == 0:
            return
        i = max(0, min(int(i), self.model.rowCount() - 1))
        idx = self.model.index(i, VALUE)
        self.view.selectRow(i)
        self.view.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)
        if self.goto.value() != i:
            self.goto.blockSignals(True)
            self.goto.setValue(i)
            self.goto.blockSignals(False)

    def _show_peak(self) -> None:
        row = self.model.row
        if row is not None and row.stats.argmax_abs >= 0:
            self.show_index(row.stats.argmax_abs)
