"""The library browser (the window's left dock): every named workload and target of the project.

Two lists (name, kind, one-line summary) follow the project's events, so undo and redo show at once;
the buttons add (a menu of kinds, with the zoo networks, MERIT workloads and filter presets as
starting points), duplicate, rename, delete and import items, every one an undoable project change.
Under the lists, the selected item's editor (gui.editors) writes its edits to the project.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QMenu, QScrollArea,
                               QSplitter, QToolButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from core.errors import InputError
from core.kinds import generated_name
from core.library_items import IMPORT_FILTER, import_file, new_target, new_workload, workload_variants
from core.project import KIND_TITLES, LIBRARIES, Project, summary
from core.project_events import LibraryChanged, Reset
from gui.editors import ItemEditor, editor_for
from gui.follow import follow

ID_ROLE = Qt.ItemDataRole.UserRole
ERROR_STYLE = "color: #b00020"
SECTION_TITLES = {"workloads": "Workloads", "targets": "Targets"}
NAME_MAX_WIDTH = 150            # px: the name and kind columns at their widest
MESSAGE_MS = 8000               # a note ("Deleted 'VGG-16'") goes after this long, or at the next change


def _rows(tree: QTreeWidget) -> list[QTreeWidgetItem]:
    """A list's rows, top to bottom (every index below topLevelItemCount has one)."""
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    return [item for item in items if item is not None]


class LibraryContext(Protocol):
    def log(self, message: str, level: str = "info") -> None: ...
    def status(self, message: str) -> None: ...


class LibraryBrowser(QWidget):
    """The Library dock. `current_changed` is emitted when the selected item changes (see current());
    `field_errors_changed` when the fields of the item on edit that were not taken change (see
    field_errors())."""

    current_changed = Signal()
    field_errors_changed = Signal()

    def __init__(self, project: Project, context: LibraryContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._in_use: set[str] = set()
        self.project, self.context = project, context
        self._current: tuple[str, str] | None = None
        self._last_row: dict[str, int] = {}          # per list: the row selected last (to select a neighbour)
        self.editor: ItemEditor | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)

        # ---- actions: buttons, keys (inside the dock only) and the lists' context menu
        self.act_duplicate = self._action("Duplicate", self.duplicate_current, "Ctrl+Shift+D",
                                          "Duplicate the selected item")
        self.act_rename = self._action("Rename", self.rename_current, "F2", "Rename the selected item (or double-click)")
        self.act_delete = self._action("Delete", self.delete_current, QKeySequence.StandardKey.Delete,
                                       "Delete the selected item (Undo brings it back)")
        self.act_import = self._action("Import…", self.import_dialog, "Ctrl+I",
                                       "Import an ONNX model, a kernel JSON file or a MERIT transform JSON file")
        self.act_import.setIconText("Import…")
        self.add_menu = self._build_add_menu()
        self.act_add = self._action("Add", self._popup_add_menu, "Ins", "Add a workload or a target")
        self.act_add.setMenu(self.add_menu)
        row = QHBoxLayout()
        row.setSpacing(2)
        self.buttons: dict[str, QToolButton] = {}
        for act in (self.act_add, self.act_duplicate, self.act_rename, self.act_delete, self.act_import):
            b = QToolButton()
            b.setDefaultAction(act)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            if act is self.act_add:
                b.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
            self.buttons[act.text()] = b
            row.addWidget(b)
        row.addStretch(1)
        outer.addLayout(row)
        self.message = QLabel("")
        self.message.setObjectName("library-message")
        self.message.setWordWrap(True)
        self.message.hide()
        outer.addWidget(self.message)
        self._message_timer = QTimer(self)              # a note never stays once stale (issue 30)
        self._message_timer.setSingleShot(True)
        self._message_timer.setInterval(MESSAGE_MS)
        self._message_timer.timeout.connect(lambda: self._say(""))

        # ---- the two lists, and the editor below them
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.trees: dict[str, QTreeWidget] = {}
        for lib in LIBRARIES:
            section = QWidget()
            lay = QVBoxLayout(section)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(QLabel(f"<b>{SECTION_TITLES[lib]}</b>"))
            tree = self._make_tree(lib)
            lay.addWidget(tree, 1)
            self.trees[lib] = tree
            self.splitter.addWidget(section)
        editor_box = QWidget()
        lay = QVBoxLayout(editor_box)
        lay.setContentsMargins(0, 0, 0, 0)
        self.editor_title = QLabel("")
        self.editor_title.setObjectName("editor-title")
        self.editor_title.setWordWrap(True)         # a long item name must not widen the dock (issue 30)
        lay.addWidget(self.editor_title)
        self.editor_area = QScrollArea()
        self.editor_area.setWidgetResizable(True)
        self.editor_area.setFrameShape(QScrollArea.Shape.NoFrame)
        lay.addWidget(self.editor_area, 1)
        self.splitter.addWidget(editor_box)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setStretchFactor(2, 3)
        self.splitter.setSizes([230, 150, 380])      # room for the lists: ~8 workloads and 5 targets
        # the lists and the editor scroll as one when the dock is short: the left dock sits between
        # the top and bottom dock areas, so its minimum (the lists', some 330 px) would hold a bottom
        # dock (Studies, Runs) small on a 768-pixel screen
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroller.setWidget(self.splitter)
        outer.addWidget(self.scroller, 1)

        follow(self, project.events.workloads, self._library_changed)
        follow(self, project.events.targets, self._library_changed)
        follow(self, project.events.reset, self._project_reset)
        for lib in LIBRARIES:
            self._fill(lib)
        first = next((lib for lib in LIBRARIES if project.entries(lib)), None)
        if first is not None:
            self.select(first, project.entries(first)[0].id)
        self._update_actions()

    # ================================================================ API
    def select(self, lib: str, entry_id: str | None) -> None:
        """Show an item selected, with its editor (None: select nothing)."""
        new: tuple[str, str] | None = (lib, entry_id) if entry_id is not None and self.project.entry(lib, entry_id) \
            else None
        for other, tree in self.trees.items():
            b = QSignalBlocker(tree)
            tree.clearSelection()
            if new is not None and other == lib:
                item = self._item(*new)
                if item is not None:
                    tree.setCurrentItem(item)
                    item.setSelected(True)
                    tree.scrollToItem(item)
            b.unblock()
        if new != self._current:
            self._current = new
            self._show_editor()
            self._update_actions()
            self.current_changed.emit()

    def current(self) -> tuple[str, str] | None:
        """(lib, entry id) of the selected item, or None."""
        return self._current

    def field_errors(self, lib: str, entry_id: str | None) -> list[str]:
        """The item's fields on edit whose text was not taken, each named by the item and the field's
        label ("ZC706 at 1 GB/s: Off-chip bandwidth: cannot be -5 GB/s: ..."): a run of the item would
        not run what they show."""
        e = self.project.entry(lib, entry_id)
        if self.editor is None or e is None or (self.editor.lib, self.editor.entry_id) != (lib, entry_id):
            return []
        return [f"{e.name}: {text}" for text in self.editor.field_errors()]

    def add_item(self, lib: str, kind: str, variant: str | None = None) -> str:
        """Add a new item of `kind` on its defaults (or from a variant); returns its id."""
        name, value = new_workload(kind, variant) if lib == "workloads" else new_target(kind)
        entry_id = self.project.add(lib, generated_name(lib, value) or name, value)     # type: ignore[arg-type]
        self.select(lib, entry_id)
        self._say(f"Added {self.project.entry(lib, entry_id).name!r}")        # type: ignore[union-attr]
        return entry_id

    def duplicate_current(self) -> str | None:
        if self._current is None:
            return None
        lib, entry_id = self._current
        new_id = self.project.duplicate(lib, entry_id)
        self.select(lib, new_id)
        return new_id

    def rename_current(self) -> None:
        """Start editing the selected item's name in place."""
        if self._current is not None:
            item = self._item(*self._current)
            if item is not None:
                self.trees[self._current[0]].editItem(item, 0)

    def rename(self, lib: str, entry_id: str, name: str) -> bool:
        """Rename an item; an empty or duplicate name is refused with a message."""
        try:
            self.project.rename(lib, entry_id, name)
        except InputError as exc:
            self._say(f"Not renamed: {exc.message}", error=True)
            return False
        self._say("")
        return True

    def delete_current(self) -> None:
        if self._current is None:
            return
        lib, entry_id = self._current
        name = self.project.entry(lib, entry_id).name           # type: ignore[union-attr]
        self.project.remove(lib, entry_id)
        self._say(f"Deleted {name!r} (Undo brings it back)")

    def import_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Import into the library", "", IMPORT_FILTER)
        for path in paths:
            self.import_path(path)

    def import_path(self, path: str) -> str | None:
        """Import a file as a new workload; returns its id, or None (with a message naming the file
        and the problem, and nothing changed)."""
        try:
            name, value = import_file(path)
        except InputError as exc:
            text = f"Not imported: {exc}"
            self._say(text, error=True)
            self.context.log(text, "error")
            return None
        entry_id = self.project.add("workloads", name, value)
        self.select("workloads", entry_id)
        self._say(f"Imported {path} as {self.project.entry('workloads', entry_id).name!r}")   # type: ignore[union-attr]
        return entry_id

    # ================================================================ building
    def _action(self, text: str, slot: Any, key: Any, tip: str) -> QAction:
        act = QAction(text, self)
        act.setShortcut(QKeySequence(key))
        act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        act.setToolTip(f"{tip} ({act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})")
        act.triggered.connect(lambda _checked=False: slot())
        self.addAction(act)
        return act

    def _build_add_menu(self) -> QMenu:
        menu = QMenu(self)
        for lib in LIBRARIES:
            menu.addSection(SECTION_TITLES[lib])
            for kind, title in KIND_TITLES[lib].items():
                variants = workload_variants(kind) if lib == "workloads" else {}
                if not variants:
                    act = menu.addAction(title)
                    act.triggered.connect(lambda _c=False, lib=lib, kind=kind: self.add_item(lib, kind))
                    continue
                sub = menu.addMenu(title)
                for variant, vtitle in variants.items():
                    act = sub.addAction(vtitle)
                    act.triggered.connect(lambda _c=False, lib=lib, kind=kind, v=variant: self.add_item(lib, kind, v))
        return menu

    def _popup_add_menu(self) -> None:
        b = self.buttons.get("Add")
        pos = b.mapToGlobal(b.rect().bottomLeft()) if b is not None else self.mapToGlobal(self.rect().topLeft())
        self.add_menu.popup(pos)

    def _make_tree(self, lib: str) -> QTreeWidget:
        tree = QTreeWidget()
        tree.setObjectName(f"library-{lib}")
        tree.setColumnCount(3)
        tree.setHeaderLabels(["Name", "Kind", "Summary"])
        tree.setRootIsDecorated(False)
        tree.setAlternatingRowColors(True)
        tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)       # name only: see below
        # Name and kind as wide as their texts (a long name at most NAME_MAX_WIDTH, cut in the middle,
        # whole in its tooltip), the summary the rest: no sideways scrolling (issue 30).
        header = tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        header.setMaximumSectionSize(NAME_MAX_WIDTH)
        tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        tree.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        tree.addActions([self.act_duplicate, self.act_rename, self.act_delete])
        tree.itemSelectionChanged.connect(lambda lib=lib: self._selection_changed(lib))
        tree.itemDoubleClicked.connect(lambda item, _col, t=tree: t.editItem(item, 0))
        tree.itemChanged.connect(lambda item, col, lib=lib: self._item_edited(lib, item, col))
        return tree

    # ================================================================ model -> widgets
    def _project_reset(self, _ev: Reset) -> None:
        if self.message.isVisible():
            self._say("")
        for lib in LIBRARIES:
            self._fill(lib)
        self._after_fill(None)

    def _library_changed(self, ev: LibraryChanged) -> None:
        if self.message.isVisible():
            self._say("")           # the next change (an undo of the deletion) makes the note stale
        appeared = self._fill(ev.lib)
        self._after_fill((ev.lib, ev.id) if ev.id in appeared else None)

    def mark_in_use(self, ids: set[str]) -> None:
        """Show in bold the items the current tab runs (the window calls this on tab and choice changes)."""
        self._in_use = set(ids)
        for lib in LIBRARIES:
            self._fill(lib)

    def _fill(self, lib: str) -> set[str]:
        """Bring a list in line with the project; returns the ids that were not listed before."""
        tree = self.trees[lib]
        entries = self.project.entries(lib)
        listed = [item.data(0, ID_ROLE) for item in _rows(tree)]
        b = QSignalBlocker(tree)
        if listed != [e.id for e in entries]:
            tree.clear()
            for e in entries:
                item = QTreeWidgetItem()
                item.setData(0, ID_ROLE, e.id)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                tree.addTopLevelItem(item)
        for e, item in zip(entries, _rows(tree), strict=True):
            texts = (e.name, KIND_TITLES[lib].get(e.kind, e.kind), summary(e.value))
            for col, text in enumerate(texts):
                if item.text(col) != text:
                    item.setText(col, text)
            item.setToolTip(0, f"{e.name} ({e.id}): double-click or F2 to rename"
                            + ("; the current tab runs it" if e.id in self._in_use else ""))
            item.setToolTip(2, texts[2])
            font = item.font(0)
            if font.bold() != (e.id in self._in_use):
                font.setBold(e.id in self._in_use)
                for col in range(len(texts)):
                    item.setFont(col, font)
        b.unblock()
        return {e.id for e in entries} - set(listed)

    def _after_fill(self, appeared: tuple[str, str] | None) -> None:
        """Keep the selection: on an item that (re)appeared, else the current one, else its neighbour."""
        if appeared is not None:
            self.select(*appeared)
        elif self._current is not None and self.project.entry(*self._current) is not None:
            lib, entry_id = self._current
            self.select(lib, entry_id)
            e = self.project.entry(lib, entry_id)
            if self.editor is not None and e is not None and e.kind != self.editor.kind:
                self._show_editor()             # its kind changed: another editor
            self._update_title()
        elif self._current is not None:
            lib = self._current[0]
            row = max(0, min(self._last_row.get(lib, 0), len(self.project.entries(lib)) - 1))
            entries = self.project.entries(lib)
            self.select(lib, entries[row].id if entries else None)
        else:
            first = next((lib for lib in LIBRARIES if self.project.entries(lib)), None)
            if first is not None:
                self.select(first, self.project.entries(first)[0].id)
        self._remember_row()

    def _remember_row(self) -> None:
        if self._current is not None:
            lib, entry_id = self._current
            ids = [e.id for e in self.project.entries(lib)]
            if entry_id in ids:
                self._last_row[lib] = ids.index(entry_id)

    def _item(self, lib: str, entry_id: str) -> QTreeWidgetItem | None:
        return next((item for item in _rows(self.trees[lib]) if item.data(0, ID_ROLE) == entry_id), None)

    def _show_editor(self) -> None:
        had_errors = self.editor is not None and bool(self.editor.field_errors())
        if self.editor is not None:
            self.editor.detach()
            self.editor_area.takeWidget()
            self.editor.deleteLater()
            self.editor = None
        if self._current is not None:
            self.editor = editor_for(self.project, *self._current)
            self.editor.field_errors_changed.connect(self._editor_errors_changed)
            self.editor_area.setWidget(self.editor)
        self._update_title()
        if had_errors:                  # the text not taken went with its editor
            self.field_errors_changed.emit()

    def _editor_errors_changed(self) -> None:
        e = self.project.entry(*self._current) if self._current is not None else None
        errors = self.editor.field_errors() if self.editor is not None else []
        if e is not None and errors:
            self.context.status(f"{e.name}: {errors[-1]} (a run of it waits until it reads)")
        elif getattr(self, "_said_error", False):   # the text now reads: the complaint about it goes
            self.context.status("")
        self._said_error = bool(e is not None and errors)
        self.field_errors_changed.emit()

    def _update_title(self) -> None:
        e = self.project.entry(*self._current) if self._current is not None else None
        if e is None:
            self.editor_title.setText("<i>Select an item to edit it</i>")
        else:
            lib = self._current[0] if self._current else "workloads"
            self.editor_title.setText(f"<b>{e.name}</b> · {KIND_TITLES[lib].get(e.kind, e.kind)}")

    def _update_actions(self) -> None:
        has = self._current is not None
        for act in (self.act_duplicate, self.act_rename, self.act_delete):
            act.setEnabled(has)

    # ================================================================ widgets -> model
    def _selection_changed(self, lib: str) -> None:
        items = self.trees[lib].selectedItems()
        if items:
            self.select(lib, items[0].data(0, ID_ROLE))
            self._remember_row()
        elif self._current is not None and self._current[0] == lib:
            self.select(lib, None)

    def _item_edited(self, lib: str, item: QTreeWidgetItem, col: int) -> None:
        if col != 0:
            return
        entry_id = item.data(0, ID_ROLE)
        self.rename(lib, entry_id, item.text(0))
        e = self.project.entry(lib, entry_id)
        if e is not None and item.text(0) != e.name:        # refused (or trimmed): show the stored name
            b = QSignalBlocker(self.trees[lib])
            item.setText(0, e.name)
            b.unblock()

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(ERROR_STYLE if error else "")
        self.message.setVisible(bool(text))
        if text:
            self._message_timer.start()
        else:
            self._message_timer.stop()
        if text:
            self.context.status(text)
