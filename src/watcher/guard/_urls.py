"""A URL a tool or a command fetches: a ``file://`` URL is a read of that file, the cloud metadata
service hands out the machine's credentials, and a credential written into a URL is sent with it.

``WebFetch`` and MCP fetchers are judged on all three; ``curl``, ``wget`` and the like on the first
two, and on the metadata service only where it serves credentials (``…/security-credentials/``,
``…/service-accounts/default/token``; a script reading its region or instance id is ordinary),
since what they send is judged by the exfiltration rules."""

from __future__ import annotations

import re
from collections.abc import Iterator
from fnmatch import fnmatchcase
from urllib.parse import unquote

from watcher.guard._context import At
from watcher.guard._files import Finding, credential, read_finding
from watcher.guard._lazy import lazy
from watcher.guard._paths import Place
from watcher.guard._policy import Policy

__all__ = ["fetched_urls", "url_findings"]

_METADATA = lazy(
    r"^(169\.254\.169\.254|metadata\.google\.internal|metadata|100\.100\.100\.200|\[?fd00:ec2::254\]?|169\.254\.170\.2)$",
    re.I,
)
# the metadata services' paths that hand out credentials (ECS's 169.254.170.2 serves nothing else)
_CREDENTIALS = lazy(r"(?i)security-credentials|service-accounts|/identity|token|user-data|/credentials|/v2/credentials")
_URL = re.compile(r"^\s*([a-zA-Z][\w+.-]*):(?://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*))?([^?#]*)")
_FETCHERS = frozenset(
    {"curl", "wget", "http", "https", "xh", "xhs", "curlie", "aria2c", "lynx", "links", "w3m", "httpie"}
)


def url_findings(url: str, place: Place, policy: Policy, *, tool: bool = True) -> Iterator[Finding]:
    """What fetching ``url`` does; ``tool``: a fetch tool's (every metadata read, credentials in the URL)."""
    m = _URL.match(url)
    scheme, host, path = (m.group(1).lower(), (m.group(2) or "").lower(), m.group(3)) if m else ("", "", "")
    if scheme == "file":
        found = read_finding(place, place.resolve(unquote(path)), policy)
        if found and policy.enabled(found[0]):
            yield found
        return
    metadata = _METADATA.match(host) and (tool or host == "169.254.170.2" or _CREDENTIALS.search(path))
    if metadata and policy.enabled("secret-read"):
        yield "secret-read", f"fetches the cloud metadata service ({host}), which hands out the machine's credentials"
    if tool and credential(policy, unquote(url)) and policy.enabled("secret-exfiltration"):
        local = any(fnmatchcase(host, p) for p in policy.data["network"]["local_hosts"])
        if not local:
            yield "secret-exfiltration", f"puts a credential into a request to {host}"


def fetched_urls(x: At) -> Finding | None:
    """``curl file:///home/me/.ssh/id_rsa``, ``curl http://169.254.169.254/…/security-credentials/``."""
    if x.name not in _FETCHERS:
        return None
    for a in x.args:
        if "://" in a or a.startswith(("169.254.", "metadata")):
            url = a if "://" in a else f"http://{a}"
            for found in url_findings(url, x.place, x.policy, tool=False):
                return found
    return None
