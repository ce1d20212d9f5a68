"""The sink classes, shared by every language: CWE, title, and the fix that fits each class."""

from __future__ import annotations

from watcher.roles.taint.spec import Sink

__all__ = ["SINKS"]

SINKS: dict[str, Sink] = {
    s.name: s
    for s in (
        Sink(
            "command",
            78,
            "Command injection",
            "Run the program with a list of arguments and no shell (subprocess.run([...], check=True)), "
            "or quote the value with shlex.quote()",
            "critical",
        ),
        Sink(
            "sql",
            89,
            "SQL injection",
            'Pass the value as a query parameter, e.g. cur.execute("... WHERE name = %s", (name,))',
        ),
        Sink(
            "code",
            94,
            "Code injection",
            "Never evaluate input as code: parse it (ast.literal_eval, json.loads, int()) or map it through an allow-list",
            "critical",
        ),
        Sink(
            "deserialization",
            502,
            "Deserialisation of untrusted data",
            "Load untrusted data with a data-only format (json.loads, yaml.safe_load), never pickle/marshal/unsafe YAML",
        ),
        Sink(
            "path",
            22,
            "Path traversal",
            "Reduce the name with os.path.basename() or werkzeug's secure_filename(), resolve it under a base "
            "directory and check the result stays inside it (os.path.commonpath / Path.is_relative_to)",
        ),
        Sink(
            "xss",
            79,
            "Cross-site scripting",
            "Escape the value for HTML (markupsafe.escape / html.escape), or render it through an autoescaping template",
        ),
        Sink(
            "redirect",
            601,
            "Open redirect",
            "Redirect only to a path of this site or a host on an allow-list compared as a whole value "
            "(Django's url_has_allowed_host_and_scheme, or url_for)",
        ),
        Sink(
            "trust-boundary",
            501,
            "Trust boundary violation",
            "Validate the value (type, allow-list, format) before storing it in the session or request state",
        ),
        Sink(
            "ldap",
            90,
            "LDAP injection",
            "Escape the value with ldap3.utils.conv.escape_filter_chars (or ldap.filter.escape_filter_chars; "
            "escape_dn_chars for a DN)",
        ),
        Sink(
            "xpath",
            643,
            "XPath injection",
            'Pass the value as an XPath variable (tree.xpath("//user[@name=$name]", name=value)) instead of splicing it',
        ),
        Sink(
            "xxe",
            611,
            "XML external entities resolved",
            "Keep external entities off: lxml.etree.XMLParser(resolve_entities=False, no_network=True), leave the SAX "
            "features feature_external_ges/pes False, or parse with defusedxml",
        ),
        Sink(
            "weak-random",
            330,
            "Predictable random value used as a secret",
            "Generate tokens, cookies and passwords with the secrets module (secrets.token_urlsafe()) or "
            "random.SystemRandom()",
        ),
        Sink(
            "weak-hash",
            328,
            "Weak hash (MD5/SHA-1) of a stored or sent value",
            "Use hashlib.sha256 (or a password hash: hashlib.scrypt, argon2, bcrypt) for values that are stored, "
            "compared or sent",
        ),
        Sink(
            "cookie",
            614,
            "Cookie without secure/httponly",
            "Set the cookie with secure=True, httponly=True (and samesite='Lax')",
        ),
    )
}
