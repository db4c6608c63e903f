"""Memory sizes as deployment files write them: Kubernetes quantities (``16Gi``, ``512M``, ``1.5e9``) and
Docker/compose byte values (``16g``, ``512m``, ``1gb``)."""

from __future__ import annotations

import re

_KUBERNETES_SUFFIX = {
    "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip
_KUBERNETES = re.compile(r"^\+?(?P<number>\d+(?:\.\d*)?|\.\d+)(?:(?P<suffix>[kMGTPE]i?)|[eE](?P<exponent>[+-]?\d+))?$")
# Docker's units are binary whatever their spelling (docker/go-units RAMInBytes).
_DOCKER = re.compile(r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[bkmgtp]?)b?$", re.IGNORECASE)
_DOCKER_UNIT = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}

GI = 2**30


def kubernetes_bytes(text: str) -> int | None:
    """A Kubernetes memory quantity in bytes, or None when ``text`` is not one."""
    match = _KUBERNETES.match(text.strip())
    if match is None:
        return None
    number = float(match.group("number"))
    if match.group("exponent") is not None:
        return int(number * 10 ** int(match.group("exponent")))
    return int(number * _KUBERNETES_SUFFIX[match.group("suffix") or ""])


def docker_bytes(text: str) -> int | None:
    """A Docker/compose byte value (``mem_limit``, ``shm_size``, ``deploy.resources.limits.memory``)."""
    match = _DOCKER.match(text.strip())
    if match is None:
        return None
    return int(float(match.group("number")) * _DOCKER_UNIT[match.group("unit").lower()])


def format_bytes(size: int) -> str:
    """``16Gi``, ``512Mi``: the binary unit that states ``size`` in the fewest digits."""
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = _KUBERNETES_SUFFIX[suffix]
        if size >= unit:
            value = size / unit
            return f"{value:.0f}{suffix}" if value == int(value) else f"{value:.1f}{suffix}"
    return str(size)
