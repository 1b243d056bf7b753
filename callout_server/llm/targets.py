"""Where a model call may go: never to a cloud-metadata or link-local address.

A configuration's base URL is written by an operator, and the test connection reads back
what it answers: pointed at 169.254.169.254, that is the cloud's instance credentials. So
these targets are refused, in every spelling, unless the process allows them (a lab):

    169.254.0.0/16        IPv4 link-local: the metadata service of AWS, GCP, Azure, Oracle,
                          DigitalOcean, Huawei (169.254.169.254), Tencent (169.254.0.23)
    100.100.100.200       Alibaba Cloud's metadata service
    fe80::/10             IPv6 link-local
    fd00:ec2::254         AWS's IPv6 metadata service
    metadata.google.internal, metadata.goog, metadata, metadata.tencentyun.com,
    instance-data, instance-data.ec2.internal
                          the metadata services' names

A host is read the way the HTTP library reads it (`yarl`: IDNA, lower case), then as an
address in any form the resolver would take (`2852039166`, `0xa9fea9fe`,
`0251.0376.0251.0376`, `169.254.43518`), and IPv6 forms that carry an IPv4 address
(`::ffff:a9fe:a9fe`, IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged
by that address. A name is judged by what it resolves to: when a configuration is saved
(`TargetPolicy.refusal`), and at every connection through the client's resolver
(`GuardedResolver`), so a name whose DNS answer changed since is refused when it is used.
Pure checks and one resolver; the client and the configuration layer hold the policy.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

REFUSED_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "169.254.0.0/16", "100.100.100.200/32", "fe80::/10", "fd00:ec2::254/128"))
METADATA_NAMES = frozenset({
    "metadata.google.internal", "metadata.goog", "metadata", "metadata.tencentyun.com",
    "instance-data", "instance-data.ec2.internal"})
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# The numeric forms inet_aton takes (decimal, octal, hex parts; one to four of them).
_LEGACY_IPV4 = re.compile(r"^(0x[0-9a-f]*|\d+)(\.(0x[0-9a-f]*|\d+)){0,3}$")
RESOLVE_TIMEOUT_S = 3.0

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a target is refused: the host as configured, and the address it stands for."""

    host: str
    address: str


def host_of(url: str) -> str | None:
    """The host the HTTP library will connect to (IDNA, lower case, no trailing dot)."""
    try:
        host = URL(url).host
    except (ValueError, TypeError):
        return None
    return host.rstrip(".").lower() if host else None


def as_address(host: str) -> Address | None:
    """`host` as an IP address, in any spelling the resolver accepts; None for a name."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])  # a zone id names no other host
    except ValueError:
        pass
    if _LEGACY_IPV4.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64 or int(address) >> 32 == 0:  # NAT64, or IPv4-compatible (::a.b.c.d)
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refused_address(address: Address) -> Address | None:
    """The refused address `address` is or carries (an IPv6 form's IPv4 one), or None."""
    if any(address in net for net in REFUSED_NETWORKS if net.version == address.version):
        return address
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_v4(address)
        if inner is not None:
            return refused_address(inner)
    return None


@lru_cache(maxsize=1024)
def literal_refusal(url: str) -> Refusal | None:
    """The refusal of a URL whose host is an address or a metadata name (no DNS); cached:
    the client checks every call's URL."""
    host = host_of(url)
    if host is None:
        return None
    if host in METADATA_NAMES:
        return Refusal(host, host)
    address = as_address(host)
    refused = refused_address(address) if address is not None else None
    return Refusal(host, str(refused)) if refused is not None else None


def refused_among(host: str, addresses: list[str]) -> Refusal | None:
    for text in addresses:
        address = as_address(text)
        refused = refused_address(address) if address is not None else None
        if refused is not None:
            return Refusal(host, str(refused))
    return None


class RefusedAddress(OSError):
    """Raised by `GuardedResolver`: the name resolves to a refused address."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(f"{refusal.host} resolves to {refusal.address}, a cloud-metadata or "
                         f"link-local address")
        self.refusal = refusal


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver, refusing a name any of whose addresses is refused."""

    def __init__(self) -> None:
        self._inner = aiohttp.DefaultResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        refusal = refused_among(host.rstrip(".").lower(), [r["host"] for r in results])
        if refusal is not None:
            raise RefusedAddress(refusal)
        return results

    async def close(self) -> None:
        await self._inner.close()


def target_refused(exc: BaseException | None) -> Refusal | None:
    """The refusal behind a transport exception (httpx -> aiohttp -> resolver), if any."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, RefusedAddress):
            return exc.refusal
        inner: Any = getattr(exc, "os_error", None)
        exc = inner if isinstance(inner, BaseException) else exc.__cause__
        seen += 1
    return None


@dataclass(frozen=True, slots=True)
class TargetPolicy:
    """The process's rule: refused targets stay refused unless `allow_metadata` (a lab)."""

    allow_metadata: bool = False

    def literal(self, url: str) -> Refusal | None:
        """Without DNS: the check every call makes before sending."""
        return None if self.allow_metadata else literal_refusal(url)

    async def refusal(self, url: str, *, timeout_s: float = RESOLVE_TIMEOUT_S) -> Refusal | None:
        """With DNS: a name is judged by the addresses it resolves to now (a name that does
        not resolve is not refused here; the call will say it cannot connect)."""
        if self.allow_metadata:
            return None
        found = literal_refusal(url)
        host = host_of(url)
        if found is not None or host is None or as_address(host) is not None:
            return found
        try:
            async with asyncio.timeout(timeout_s):
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host, None, type=socket.SOCK_STREAM)
        except (OSError, TimeoutError):
            return None
        return refused_among(host, [str(info[4][0]) for info in infos])

    def resolver(self) -> AbstractResolver | None:
        """The resolver the client's connections use (None: aiohttp's own)."""
        return None if self.allow_metadata else GuardedResolver()
