"""Layer shapes the bound engine works on, read from zoo layers or from a `--layer` spec string.

A grouped convolution is analysed as `groups` independent convolutions of `Ci/groups -> Co/groups`
channels run one after the other (a depthwise layer is `groups == Ci == Co`), so every model in
this package works on one group's shape and multiplies by the group count.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from core.errors import InputError
from core.nets.layers import Conv, conv_out
from core.results import to_plain


@dataclass(frozen=True)
class ConvShape:
    """Batch B, input Ci x Hi x Wi, output channels Co, kernel Hk x Wk, stride D, zero padding."""

    # written in its JSON form after the fields, recomputed when read (core.results)
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("Ho", "Wo", "macs")

    name: str
    B: int
    Ci: int
    Hi: int
    Wi: int
    Co: int
    Hk: int
    Wk: int
    stride: int = 1
    pad: int = 0
    groups: int = 1
    dilation: int = 1
    fc: bool = False

    @property
    def Ho(self) -> int:
        return conv_out(self.Hi, self.Hk, self.stride, self.pad, self.dilation)

    @property
    def Wo(self) -> int:
        return conv_out(self.Wi, self.Wk, self.stride, self.pad, self.dilation)

    @property
    def Cig(self) -> int:
        """Input channels of one group."""
        return self.Ci // self.groups

    @property
    def Cog(self) -> int:
        """Output channels of one group."""
        return self.Co // self.groups

    @property
    def macs(self) -> int:
        return self.B * self.Ho * self.Wo * self.Co * self.Hk * self.Wk * self.Cig

    @property
    def inputs(self) -> int:
        return self.B * self.Ci * self.Hi * self.Wi

    @property
    def weights(self) -> int:
        return self.Co * self.Cig * self.Hk * self.Wk

    @property
    def outputs(self) -> int:
        return self.B * self.Co * self.Ho * self.Wo

    def group_shape(self) -> "ConvShape":
        """The shape of one group (what the tiling models see): the shape itself when it has one
        (the models ask for it on every tiling they evaluate)."""
        if self.groups == 1:
            return self
        return replace(self, Ci=self.Cig, Co=self.Cog, groups=1)

    def to_json(self) -> dict[str, Any]:
        return to_plain(self)

    def spec(self) -> str:
        """The `--layer` string that reads back as this shape."""
        return (f"name={self.name},Ci={self.Ci},Hi={self.Hi},Wi={self.Wi},Co={self.Co},Hk={self.Hk},"
                f"Wk={self.Wk},stride={self.stride},pad={self.pad},groups={self.groups},batch={self.B}")

    def validate(self, where: str = "layer") -> "ConvShape":
        """Raise InputError for sizes that do not make a convolution."""
        where = f"{where} {self.name}" if self.name else where
        for key in ("B", "Ci", "Hi", "Wi", "Co", "Hk", "Wk", "stride", "groups", "dilation"):
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise InputError(f"{_LABEL[key]} must be a positive integer, got {_shown(v)}", where)
            if v > MAX_SIZE[key]:
                raise InputError(f"{_LABEL[key]} must be at most {MAX_SIZE[key]}, got {_shown(v)}", where)
        if not isinstance(self.pad, int) or isinstance(self.pad, bool) or not 0 <= self.pad <= MAX_SIZE["pad"]:
            raise InputError(f"padding must be 0..{MAX_SIZE['pad']}, got {_shown(self.pad)}", where)
        if self.Ci % self.groups or self.Co % self.groups:
            raise InputError(f"groups={self.groups} must divide input channels {self.Ci} and output "
                             f"channels {self.Co}", where)
        for k, n, axis in ((self.Hk, self.Hi, "height"), (self.Wk, self.Wi, "width")):
            ext = self.dilation * (k - 1) + 1
            if ext > n + 2 * self.pad:
                raise InputError(f"kernel {axis} {k} (extent {ext}) is larger than the padded input {axis} "
                                 f"{n} + 2*{self.pad} = {n + 2 * self.pad}", where)
        for n, axis in ((self.Hi, "height"), (self.Wi, "width")):
            if self.stride > n + 2 * self.pad:
                raise InputError(f"stride {self.stride} does not fit the padded input {axis} "
                                 f"{n} + 2*{self.pad} = {n + 2 * self.pad}", where)
        if self.pad >= self.dilation * (self.Hk - 1) + 1 or self.pad >= self.dilation * (self.Wk - 1) + 1:
            raise InputError(f"padding {self.pad} is not smaller than the kernel ({self.Hk}x{self.Wk}): some "
                             f"outputs would see only padding", where)
        return self


# The largest layer the analysis takes: its tables grow with the input's extent (2048 x 2048 takes
# some 15 s, 4096 x 4096 40 s and 3 GB) and its counts must stay machine integers.
MAX_SIZE = {"B": 1_000_000, "Ci": 65536, "Co": 65536, "Hi": 2048, "Wi": 2048, "Hk": 64, "Wk": 64, "stride": 64,
            "groups": 65536, "dilation": 64, "pad": 64}


def _shown(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 30 else f"a number of {len(text)} digits"


_LABEL = {"B": "batch", "Ci": "input channels (Ci)", "Hi": "input height (Hi)", "Wi": "input width (Wi)",
          "Co": "output channels (Co)", "Hk": "kernel height (Hk)", "Wk": "kernel width (Wk)",
          "stride": "stride", "groups": "groups", "dilation": "dilation"}


def from_conv(layer: Conv, batch: int = 1) -> ConvShape:
    """A zoo Conv layer (fully connected layers are 1x1 convolutions) with a batch size."""
    return ConvShape(name=layer.name, B=batch, Ci=layer.in_ch, Hi=layer.in_h, Wi=layer.in_w, Co=layer.out_ch,
                     Hk=layer.k_h, Wk=layer.k_w, stride=layer.stride, pad=layer.pad, groups=layer.groups,
                     dilation=layer.dilation, fc=layer.fc)


# Keys of the --layer spec and their aliases (case-insensitive).
_KEYS = {"ci": "Ci", "c": "Ci", "in_ch": "Ci", "hi": "Hi", "h": "Hi", "wi": "Wi", "w": "Wi",
         "co": "Co", "k": "Co", "m": "Co", "out_ch": "Co", "hk": "Hk", "kh": "Hk", "wk": "Wk", "kw": "Wk",
         "kernel": "kernel", "stride": "stride", "d": "stride", "pad": "pad", "padding": "pad",
         "groups": "groups", "g": "groups", "batch": "B", "b": "B", "n": "B", "dilation": "dilation",
         "name": "name"}


def parse_layer_spec(text: str, batch: int | None = None, where: str = "--layer") -> ConvShape:
    """Read `Ci=64,Hi=56,Wi=56,Co=128,Hk=3,Wk=3,stride=1,pad=1,groups=1,batch=1`.

    Aliases: C/H/W for the input, K or M for output channels, kernel=3 for a square kernel,
    b/n for batch. Hi/Wi default to 1 (fully connected), kernel to 1x1, stride 1, pad 0.
    """
    vals: dict[str, Any] = {"name": "layer", "B": 1, "Hi": 1, "Wi": 1, "Hk": None, "Wk": None, "stride": 1,
                            "pad": 0, "groups": 1, "dilation": 1}
    seen: set[str] = set()
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise InputError(f"expected key=value, got {part!r} (e.g. Ci=64,Hi=56,Wi=56,Co=128,Hk=3,Wk=3)", where)
        key, _, value = part.partition("=")
        canon = _KEYS.get(key.strip().lower())
        if canon is None:
            raise InputError(f"unknown key {key.strip()!r}; known: Ci Hi Wi Co Hk Wk kernel stride pad groups "
                             f"batch dilation name", where)
        if canon in seen:
            raise InputError(f"{key.strip()!r} given twice", where)
        seen.add(canon)
        if canon == "name":
            vals["name"] = value.strip()
            continue
        try:
            number = int(value.strip())
        except ValueError:
            raise InputError(f"{key.strip()} must be an integer, got {_shown(value.strip())}", where) from None
        if canon == "kernel":
            vals["Hk"] = vals["Wk"] = number
        else:
            vals[canon] = number
    for need in ("Ci", "Co"):
        if need not in vals:
            raise InputError(f"missing {need}= (input and output channels are required)", where)
    if vals["Hk"] is None:
        vals["Hk"] = 1 if vals["Wk"] is None else vals["Wk"]
    if vals["Wk"] is None:
        vals["Wk"] = vals["Hk"]
    if batch is not None and "B" not in seen:
        vals["B"] = batch
    shape = ConvShape(**vals)
    return shape.validate(where)
