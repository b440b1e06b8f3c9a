"""The editor of convolution layer specs (kind `conv_layers`)."""

from __future__ import annotations


from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import (QLabel, QPlainTextEdit, QWidget)

from core.errors import InputError
from core.library_items import (layers_from_text)
from core.project import Project
from core.workload import (ConvLayers)
from gui.editors.base import ItemEditor


class ConvLayersEditor(ItemEditor):
    """One layer spec per line, each checked as it is typed."""

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        super().__init__(project, lib, entry_id, parent)
        hint = QLabel("One layer per line, e.g. <tt>Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1</tt> (keys: Ci Hi Wi "
                      "Co Hk Wk kernel stride pad groups dilation batch name)")
        hint.setWordWrap(True)
        self.layout_.addWidget(hint)
        self.text = QPlainTextEdit()
        self.text.textChanged.connect(self._edited)
        self.layout_.addWidget(self.text, 1)
        self.layout_.addWidget(self.error)
        self.refresh()

    def refresh(self) -> None:
        layers: ConvLayers = self.value()
        try:
            same = layers_from_text(self.text.toPlainText()).layers == layers.layers
        except InputError:
            same = False
        if not same:            # keep the cursor when the text already says it
            b = QSignalBlocker(self.text)
            self.text.setPlainText("\n".join(layers.layers))
            b.unblock()
            self.set_problem("Layers", None)
            self.show_error(None)

    def _edited(self) -> None:
        """Taken as typed, else the text stays, marked, and Run waits until it reads."""
        try:
            layers = layers_from_text(self.text.toPlainText())
            self.store(layers)
        except InputError as exc:
            self.set_problem("Layers", str(exc))
            return
        self.set_problem("Layers", None)


EDITOR = ConvLayersEditor
