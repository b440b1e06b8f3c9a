"""One binding between settings and widgets, by key, driven by a JSON schema.

A panel names which setting a widget shows (`bind("time_s", spin)`) or lets `build()` make the
widget from the schema; the binding then sets the widget's range, items, label and tooltip from the
schema (core's limits, so nothing valid is clamped), writes user edits to the project, and redraws
the widget whenever the project changes (undo, redo, a loaded session). Settings without a widget
stay in the project untouched. It replaces each panel's hand-written settings()/set_settings() pair
and their loading guards: model-to-widget updates are the only place signals are blocked.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable, TypeVar, overload

from PySide6.QtCore import QObject, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (QAbstractSpinBox, QCheckBox, QComboBox, QDoubleSpinBox, QLabel, QLineEdit,
                               QPlainTextEdit, QSpinBox, QWidget)

from core.errors import InputError
from core.numbers import editable_text
from core.project import Project
from core.project_events import SettingsChanged
from core.settings import Setting, declared
from core.units import format_quantity, quantity_of, read_field
from gui.follow import follow

W = TypeVar("W", bound=QWidget)

INT_MAX = 2 ** 31 - 1
ERROR_STYLE = "border: 1px solid #d62728;"


def nullable(prop: Setting) -> bool:
    return prop.nullable


class Adapter:
    """How one widget kind shows a value: `read` raises InputError for text it cannot parse."""

    def configure(self, w: Any, prop: Setting) -> None: ...
    def read(self, w: Any, prop: Setting) -> Any: ...
    def write(self, w: Any, value: Any, prop: Setting) -> None: ...
    def signal(self, w: Any) -> Any: ...


class CheckAdapter(Adapter):
    def read(self, w: QCheckBox, prop: Setting) -> Any:
        return w.isChecked()

    def write(self, w: QCheckBox, value: Any, prop: Setting) -> None:
        w.setChecked(bool(value))

    def signal(self, w: QCheckBox) -> Any:
        return w.toggled


def _bare_text(spin: QAbstractSpinBox, text: str) -> str:
    """The text typed into a spin box without its prefix and unit."""
    for part in (spin.prefix(), spin.suffix()):                          # type: ignore[attr-defined]
        text = text.replace(part.strip(), "") if part.strip() else text
    return text.strip()


def _out_of_range(spin: QAbstractSpinBox, text: str) -> str | None:
    """The number typed (without prefix and unit) when it reads but lies outside the spin box's
    range, or a lone "-" where nothing negative is allowed; None otherwise."""
    core = _bare_text(spin, text)
    lo, hi = spin.minimum(), spin.maximum()                              # type: ignore[attr-defined]
    if core == "-":
        return core if lo >= 0 else None
    try:
        v = float(core.replace(",", ""))
    except ValueError:
        return None
    return core if v < lo or v > hi else None


def _refuse_out_of_range(spin: "RefusingSpinBox | RefusingDoubleSpinBox", state: QValidator.State, text: str,
                         pos: int) -> tuple[QValidator.State, str, int]:
    """Qt's verdict on `text`, except that a number outside the range stays on show (Intermediate)
    and the spin box says so on `refused`."""
    if state == QValidator.State.Invalid and (typed := _out_of_range(spin, text)) is not None:
        spin.refused.emit(typed)
        return QValidator.State.Intermediate, text, pos
    return state, text, pos


class RefusingSpinBox(QSpinBox):
    """A QSpinBox that keeps out-of-range text on show and says so (`refused`), instead of dropping
    the keystroke: Qt's own validator turned "-5" into "5" without a word (issue 30)."""

    refused = Signal(str)           # the number typed, as typed

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:  # noqa: D102 (Qt's)
        return _refuse_out_of_range(self, *super().validate(text, pos))


class RefusingDoubleSpinBox(QDoubleSpinBox):
    """RefusingSpinBox for numbers with decimals."""

    refused = Signal(str)

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:  # noqa: D102 (Qt's)
        return _refuse_out_of_range(self, *super().validate(text, pos))


def refusal_text(typed: str, prop: Setting) -> str:
    """Why a typed number is refused, in the field's unit: 'cannot be -5 GB/s: must be more than 0 GB/s'."""
    from core.display import format_number

    unit = f" {prop.unit}" if prop.unit else ""
    shown = f"{typed}{unit}" if typed != "-" else "negative"
    try:
        v = float(typed.replace(",", ""))
    except ValueError:
        v = -math.inf
    hi = prop.maximum
    if hi is not None and v > hi:
        return f"cannot be {shown}: must be at most {format_number(hi)}{unit}"
    if prop.exclusive_minimum is not None:
        return f"cannot be {shown}: must be more than {format_number(prop.exclusive_minimum)}{unit}"
    lo = prop.minimum or 0
    return f"cannot be {shown}: must be at least {format_number(lo)}{unit}"


class SpinAdapter(Adapter):
    """QSpinBox / QDoubleSpinBox; a nullable setting shows null as the value below the minimum,
    with the schema's "x-null-text" (e.g. 'auto') as its special text."""

    def _range(self, w: QAbstractSpinBox, prop: Setting) -> tuple[float, float]:
        integer = isinstance(w, QSpinBox)
        lo: float = prop.minimum if prop.minimum is not None else (-INT_MAX if integer else -1e12)
        if prop.exclusive_minimum is not None:
            step = 1 if integer else 10 ** -w.decimals()       # type: ignore[attr-defined]
            lo = prop.exclusive_minimum + step
        hi: float = prop.maximum if prop.maximum is not None else (INT_MAX if integer else 1e12)
        if integer:
            lo, hi = max(int(lo), -INT_MAX), min(int(hi), INT_MAX)
        return lo, hi

    def configure(self, w: QAbstractSpinBox, prop: Setting) -> None:
        lo, hi = self._range(w, prop)
        if prop.nullable:
            lo = lo - (1 if isinstance(w, QSpinBox) else w.singleStep())     # type: ignore[attr-defined]
            w.setSpecialValueText(prop.null_text or "auto")
        elif isinstance(w, QSpinBox) and str(lo) in (prop.labels or {}):
            w.setSpecialValueText(prop.label_of(lo))                # the minimum's meaning: "all" for 0 images
        w.setRange(lo, hi)                                                  # type: ignore[attr-defined]
        if prop.unit:
            w.setSuffix(f" {prop.unit}")                                    # type: ignore[attr-defined]

    def read(self, w: QAbstractSpinBox, prop: Setting) -> Any:
        v = w.value()                                                       # type: ignore[attr-defined]
        if prop.nullable and v == w.minimum():                              # type: ignore[attr-defined]
            return None
        return int(v) if isinstance(w, QSpinBox) else float(v)

    def write(self, w: QAbstractSpinBox, value: Any, prop: Setting) -> None:
        if value is None:
            w.setValue(w.minimum())                                         # type: ignore[attr-defined]
            return
        if isinstance(w, QDoubleSpinBox) and value != 0:       # enough decimals to show the value exactly
            digits = max(0, -int(math.floor(math.log10(abs(float(value)))))) + 3
            if digits > w.decimals():
                w.setDecimals(min(digits, 12))
        if value < w.minimum() or value > w.maximum():                      # type: ignore[attr-defined]
            # The schema allows it (the project holds it): widen rather than clamp.
            w.setRange(min(w.minimum(), value), max(w.maximum(), value))    # type: ignore[attr-defined]
        w.setValue(value)                                                   # type: ignore[attr-defined]

    def signal(self, w: QAbstractSpinBox) -> Any:
        return w.valueChanged                                               # type: ignore[attr-defined]


class QuantityEdit(QLineEdit):
    """A size, rate, frequency, time or energy typed with its unit ("256 KiB", "1.5 GB/s", "800 MHz",
    "3.7 pJ", "2 ns"): the field's unit is its schema's (core.units.quantity_of), a bare number is in
    that unit, and once typed the text shows the stored value with its unit. Text that does not read
    (letters, out of range, empty) stays on show and is marked by the binding; the project keeps its
    value, and Run waits. A spin box could not do this: it dropped the unit ("256 KiB" became 256 B)."""

    edited = Signal()           # the user typed, or setValue was called

    def __init__(self, prop: Setting, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prop = prop
        self.schema = prop.to_schema()          # what core.units.read_field checks a typed quantity against
        self.unit = str(prop.unit)
        self.quantity = quantity_of(self.unit)
        example = f"e.g. {self.quantity.example}" if self.quantity else ""
        self.setPlaceholderText((prop.null_text or "auto") if prop.nullable else example)
        self.textEdited.connect(lambda _t: self.edited.emit())

    def value(self) -> int | float | None:
        """The value the text says, in the field's unit (InputError if it does not read)."""
        if self.prop.nullable and not self.text().strip():
            return None
        return read_field(self.text(), self.schema)

    def setValue(self, value: float | int | None) -> None:         # noqa: N802 (as QSpinBox's)
        """Show a value (as a user would have typed it): the binding takes it."""
        self.setText(format_quantity(value, self.unit))
        self.edited.emit()

    def keyPressEvent(self, event: Any) -> None:                    # noqa: N802 (Qt's)
        """Up and Down step as a spin box's arrows did: a size doubles or halves, other quantities
        move by a tenth of their leading digit's place (1.0 -> 1.1 GB/s, 800 -> 810 MHz)."""
        key = event.key()
        if key not in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            super().keyPressEvent(event)
            return
        try:
            value = self.value()
        except InputError:
            return                          # nothing to step from: the text stays, marked
        if value is None:
            return
        up = key == Qt.Key.Key_Up
        if self.quantity is not None and self.quantity.whole:
            stepped: float = value * 2 if up else (value // 2 if isinstance(value, int) else value / 2)
        else:
            step = 10.0 ** (math.floor(math.log10(abs(value))) - 1) if value else 1.0
            stepped = float(Decimal(repr(float(value))) + Decimal(repr(step)) * (1 if up else -1))
        stepped = int(stepped) if isinstance(value, int) and float(stepped).is_integer() else stepped
        try:
            read_field(format_quantity(stepped, self.unit), self.schema)
        except InputError:
            return                          # at the end of the field's range
        self.setValue(stepped)


class QuantityAdapter(Adapter):
    def read(self, w: QuantityEdit, prop: Setting) -> Any:
        return w.value()

    def write(self, w: QuantityEdit, value: Any, prop: Setting) -> None:
        w.setText(format_quantity(value, w.unit))

    def signal(self, w: QuantityEdit) -> Any:
        return w.edited


def quantity_field(prop: Setting) -> bool:
    """Whether a schema field holds a quantity typed with units (see QuantityEdit): a number or an
    integer whose "unit" core.units knows (B, KiB, GB/s, MHz, ns, pJ, ...), with no list of choices."""
    return prop.main_type in ("integer", "number") and prop.enum is None and quantity_of(prop.unit) is not None


class ComboAdapter(Adapter):
    """An enum as items (data = value); a stored value missing from the items is added, not lost.
    An editable combo over a string setting reads its text."""

    def configure(self, w: QComboBox, prop: Setting) -> None:
        if w.count() == 0:
            for v in prop.enum or ():
                w.addItem(prop.label_of(v) if v is not None else prop.null_text or "auto", v)

    def read(self, w: QComboBox, prop: Setting) -> Any:
        if w.isEditable():
            text = w.currentText().strip()
            i = w.findText(text)
            data = w.itemData(i) if i >= 0 else None
            return data if data is not None else text
        return w.currentData()

    def write(self, w: QComboBox, value: Any, prop: Setting) -> None:
        i = next((k for k in range(w.count()) if w.itemData(k) == value and type(w.itemData(k)) is type(value)), -1)
        if i < 0 and w.isEditable() and isinstance(value, str):
            w.setCurrentText(value)
            return
        if i < 0:
            w.addItem(prop.label_of(value), value)
            i = w.count() - 1
        w.setCurrentIndex(i)

    def signal(self, w: QComboBox) -> Any:
        return w.currentTextChanged if w.isEditable() else w.currentIndexChanged


class LineAdapter(Adapter):
    """A string, or a list of strings / numbers written comma-separated."""

    def read(self, w: QLineEdit, prop: Setting) -> Any:
        text = w.text()
        if prop.main_type != "array":
            if not text.strip() and prop.nullable:
                return None
            if prop.main_type in ("integer", "number"):
                return _number(text.strip(), prop.main_type, "")
            return text
        items = [t.strip() for t in text.replace(";", ",").split(",") if t.strip()]
        kind = prop.items.main_type if prop.items is not None else "string"
        if kind in ("integer", "number"):
            return [_number(t, kind, f" (entry {i + 1})") for i, t in enumerate(items)]
        return items

    def write(self, w: QLineEdit, value: Any, prop: Setting) -> None:
        if isinstance(value, list):
            w.setText(",".join(_exact(v) for v in value))
        else:
            w.setText("" if value is None else _exact(value))

    def signal(self, w: QLineEdit) -> Any:
        return w.textEdited


def _exact(v: Any) -> str:
    """Text that reads back as the same value, as a person writes it (1e9, not 1000000000.0)."""
    return editable_text(v)


def _number(text: str, kind: str, where: str) -> float | int:
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"{text!r} is not a number{where}") from None
    if not math.isfinite(v):
        raise InputError(f"{text!r} is not a finite number{where}")
    if kind == "integer":
        if v != int(v):
            raise InputError(f"{text!r} is not a whole number{where}")
        return int(v)
    return v


class PlainTextAdapter(Adapter):
    def read(self, w: QPlainTextEdit, prop: Setting) -> Any:
        return w.toPlainText()

    def write(self, w: QPlainTextEdit, value: Any, prop: Setting) -> None:
        w.setPlainText(str(value or ""))

    def signal(self, w: QPlainTextEdit) -> Any:
        return w.textChanged


def adapter_for(w: QWidget) -> Adapter:
    for kind, adapter in ((QCheckBox, CheckAdapter), (QuantityEdit, QuantityAdapter), (QAbstractSpinBox, SpinAdapter),
                          (QComboBox, ComboAdapter),
                          (QLineEdit, LineAdapter), (QPlainTextEdit, PlainTextAdapter)):
        if isinstance(w, kind):
            return adapter()
    raise TypeError(f"no binding adapter for {type(w).__name__}: pass one")


class FieldBinding(QObject):
    """Widgets bound by key to the fields of one JSON object held elsewhere: `read_all` returns the
    object, `write_field(key, value)` changes it (through the project, so undo records it). The owner
    calls `refresh()` when the object changed.

    A widget whose text cannot be read keeps its text, is marked, and its reason stays in `errors`
    until the text reads or the model redraws the widget; `errors_changed` says so, because what the
    widget shows is then not what the project holds, and Run must not start (issue 30)."""

    errors_changed = Signal()

    def __init__(self, schema: dict[str, Any], read_all: Callable[[], dict[str, Any]],
                 write_field: Callable[[str, Any], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.props: dict[str, Setting] = declared(schema)         # each field's typed view, read once
        self._read_all, self._write_field = read_all, write_field
        self.widgets: dict[str, tuple[QWidget, Adapter]] = {}
        self.errors: dict[str, str] = {}        # key -> why the widget's text was not taken
        self.on_error: Callable[[str, str], None] | None = None

    # ------------------------------------------------------------ binding
    def bind(self, key: str, widget: W, adapter: Adapter | None = None) -> W:
        if key not in self.props:
            raise KeyError(f"{key!r} is not in the schema; known: {', '.join(self.props)}")
        adapter = adapter or adapter_for(widget)
        prop = self.props[key]
        adapter.configure(widget, prop)
        if prop.description and not widget.toolTip():
            widget.setToolTip(prop.description)
        widget.setObjectName(widget.objectName() or f"setting:{key}")
        self.widgets[key] = (widget, adapter)
        adapter.signal(widget).connect(lambda *_a, k=key: self._edited(k))
        if isinstance(widget, (RefusingSpinBox, RefusingDoubleSpinBox)):
            widget.refused.connect(lambda typed, k=key: self._refused(k, typed))
            widget.editingFinished.connect(lambda k=key: self._refusal_over(k))
        if isinstance(widget, QAbstractSpinBox):
            widget.lineEdit().textEdited.connect(lambda _t, k=key: self._spin_typed(k))
        if isinstance(widget, QuantityEdit):
            widget.editingFinished.connect(lambda k=key: self._tidy(k))
        self._show(key)
        return widget

    @overload
    def build(self, key: str) -> QWidget: ...
    @overload
    def build(self, key: str, kind: type[W]) -> W: ...

    def build(self, key: str, kind: type[QWidget] = QWidget) -> QWidget:
        """A widget made from the schema: check box, spin box, combo box or line edit. `kind` is the
        class the caller uses it as (a TypeError if the schema makes another)."""
        prop = self.props[key]
        main = prop.main_type
        w: QWidget
        if prop.enum is not None:
            w = QComboBox()
        elif quantity_field(prop):
            w = QuantityEdit(prop)
        elif main == "boolean":
            w = QCheckBox(prop.title_or(key))
        elif main == "integer":
            w = RefusingSpinBox()
        elif main == "number":
            w = RefusingDoubleSpinBox()
            w.setDecimals(int(prop.decimals if prop.decimals is not None else 2))
            w.setSingleStep(float(prop.step if prop.step is not None else 0.1))
        else:
            w = QLineEdit()
            if prop.placeholder:
                w.setPlaceholderText(prop.placeholder)
        if not isinstance(w, kind):
            raise TypeError(f"setting {key!r} makes a {type(w).__name__}, not a {kind.__name__}")
        return self.bind(key, w)

    def label(self, key: str) -> QLabel:
        prop = self.props[key]
        lab = QLabel(f"{prop.title_or(key)}:")
        if prop.description:
            lab.setToolTip(prop.description)
        return lab

    def build_into(self, layout: Any, keys: list[str]) -> dict[str, QWidget]:
        """Label and widget for each key, added to a layout (check boxes carry their own label)."""
        made = {}
        for key in keys:
            w = self.build(key)
            if not isinstance(w, QCheckBox):
                layout.addWidget(self.label(key))
            layout.addWidget(w)
            made[key] = w
        return made

    def widget(self, key: str) -> QWidget:
        return self.widgets[key][0]

    def title(self, key: str) -> str:
        """The setting's name in the window's words (its widget's label)."""
        prop = self.props.get(key)
        return prop.title_or(key) if prop is not None else key

    def error_texts(self) -> list[str]:
        """One line per field whose text was not taken, named by its label: 'Tile: cannot read ...'."""
        return [f"{self.title(k)}: {m}" for k, m in self.errors.items()]

    def shown(self) -> dict[str, Any]:
        """What each bound widget shows, read back as a setting value (InputError if unreadable)."""
        return {k: adapter.read(w, self.props[k]) for k, (w, adapter) in self.widgets.items()}

    # ------------------------------------------------------------ flow
    def refresh(self, key: str | None = None) -> None:
        for k in ([key] if key else list(self.widgets)):
            if k in self.widgets:
                self._show(k)

    def _show(self, key: str) -> None:
        widget, adapter = self.widgets[key]
        values = self._read_all()
        if key not in values:
            return
        blocker = QSignalBlocker(widget)
        try:
            try:
                same = adapter.read(widget, self.props[key]) == values[key]
            except InputError:
                same = False
            if not same:
                adapter.write(widget, values[key], self.props[key])
        finally:
            blocker.unblock()
        self._set_error(key, None)

    def _edited(self, key: str) -> None:
        widget, adapter = self.widgets[key]
        try:
            value = adapter.read(widget, self.props[key])
        except InputError as exc:
            self._set_error(key, exc.message)
            return
        if self._read_all().get(key, object()) != value:
            try:
                self._write_field(key, value)
            except InputError as exc:           # the item as a whole refused it: say why, keep the text
                self._set_error(key, exc.message)
                return
        self._set_error(key, None)

    def _spin_typed(self, key: str) -> None:
        """Text typed into a spin box that is no number yet (empty, a lone sign) is not taken: Qt
        keeps the old value until editing ends, so until then the field does not show what runs."""
        widget = self.widgets[key][0]
        assert isinstance(widget, QAbstractSpinBox)
        text = widget.lineEdit().text()
        if widget.hasAcceptableInput():
            if key in self.errors:          # fixed, perhaps back to the value held (no valueChanged then)
                self._edited(key)
            return
        if _out_of_range(widget, text) is not None:
            return                          # refused with its range already (_refused)
        self._set_error(key, "is empty: type a number" if not _bare_text(widget, text) else f"cannot read {text.strip()!r}")

    def _tidy(self, key: str) -> None:
        """Editing of a quantity ended on text that reads: show the stored value with its unit."""
        if key not in self.errors:
            widget, adapter = self.widgets[key]
            values = self._read_all()
            if key in values:
                blocker = QSignalBlocker(widget)
                adapter.write(widget, values[key], self.props[key])
                blocker.unblock()

    def _refused(self, key: str, typed: str) -> None:
        """A spin box refused the number typed (out of the schema's range): say so, naming the field
        and the limit; the project keeps its value."""
        self._set_error(key, refusal_text(typed, self.props[key]))

    def _refusal_over(self, key: str) -> None:
        """Editing ended on refused text: the spin box went back to its value, so the widget shows
        what the project holds again (the message was given)."""
        if key in self.errors and key in self.widgets:
            widget, adapter = self.widgets[key]
            try:
                adapter.read(widget, self.props[key])
            except InputError:
                return
            if not isinstance(widget, QAbstractSpinBox) or widget.hasAcceptableInput():
                self._show(key)

    def _set_error(self, key: str, message: str | None) -> None:
        widget = self.widgets[key][0]
        if message:
            changed = self.errors.get(key) != message
            self.errors[key] = message
            widget.setStyleSheet(ERROR_STYLE)
            widget.setToolTip(f"{self.title(key)}: {message}")
            if self.on_error:
                self.on_error(key, message)
            if changed:
                self.errors_changed.emit()
        elif key in self.errors:
            del self.errors[key]
            widget.setStyleSheet("")
            widget.setToolTip(self.props[key].description or "")
            self.errors_changed.emit()


class SettingsBinding(FieldBinding):
    """A FieldBinding over one engine's settings in the project."""

    def __init__(self, project: Project, engine: str, schema: dict[str, Any], parent: QObject | None = None) -> None:
        super().__init__(schema, lambda: project.choice(engine).settings,
                         lambda k, v: project.set_setting(engine, k, v), parent)
        self.project, self.engine = project, engine
        follow(self, project.events.settings, self._settings_changed)
        follow(self, project.events.reset, lambda _ev: self.refresh(None))

    def _settings_changed(self, ev: SettingsChanged) -> None:
        if ev.engine == self.engine:
            self.refresh(ev.key)
