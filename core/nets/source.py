"""A network named as people name it: a zoo name or an ONNX file, read into its layers (the cost
records of several engines cost a network layer by layer from here)."""

from __future__ import annotations

from typing import Any

from core.errors import InputError


def network_layers(source: str, where: str = "settings.cost_network") -> tuple[str, list[Any]]:
    """(network name, its Conv layers) of a zoo name or an ONNX file path."""
    name, convs, _ = network_with_weights(source, where, weights=False)
    return name, convs


def network_with_weights(source: str, where: str = "settings.cost_network",
                         weights: bool = True) -> tuple[str, list[Any], dict[str, dict[str, Any]] | None]:
    """(network name, its Conv layers, per layer {"weight", "bias"} where the source has them: an
    ONNX file's, read when `weights`; None for a zoo network, which gives shapes only)."""
    from core.nets import zoo
    from core.nets.layers import Conv

    found: dict[str, dict[str, Any]] | None = None
    if source.lower().endswith(".onnx"):
        from core.nets.onnx_import import load_onnx, load_onnx_with_weights

        try:
            if weights:
                net, found = load_onnx_with_weights(source)
            else:
                net = load_onnx(source)
        except InputError as exc:
            raise InputError(exc.message, where) from None
        except FileNotFoundError:
            raise InputError(f"no such file: {source}", where) from None
        except Exception as exc:      # a malformed model: said in words, never a traceback
            raise InputError(f"cannot read ONNX file {source}: {type(exc).__name__}: {exc}"[:300], where) from None
    else:
        try:
            net = zoo.get(source)
        except KeyError:
            raise InputError(f"unknown network {source!r}; known: {', '.join(zoo.names())} (or an .onnx file)",
                             where) from None
    convs = [layer for layer in net.layers if isinstance(layer, Conv)]
    if not convs:
        raise InputError(f"{net.name} has no convolution or fully connected layer", where)
    return net.name, convs, found
