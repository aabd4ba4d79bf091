"""Credential detection for the security scan: detect-secrets' token plugins and heuristic filters, a
few token shapes detect-secrets lacks (Anthropic, current OpenAI, Google API keys, fine-grained GitHub
tokens), hard-coded `password = "..."` assignments, and one placeholder filter applied to every hit.

Documentation is full of fake credentials (`AKIAIOSFODNN7EXAMPLE`, jwt.io's sample token,
`sk_live_abc123xyz`, a `-----BEGIN PRIVATE KEY-----` line followed by `...`); those are reported at
low confidence with the reason, so they never block the gate."""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from detect_secrets.filters.heuristic import (
    is_not_alphanumeric_string,
    is_potential_uuid,
    is_prefixed_with_dollar_sign,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from skillworks.check.lowered import CaselessPattern, lower_same_offsets


@dataclass(frozen=True)
class SecretHit:
    kind: str
    value: str
    start: int  # offset in the scanned text
    placeholder: str | None  # why the value looks like a documented fake, or None


class _Extra(RegexBasedDetector):
    """Token shapes detect-secrets does not know."""

    secret_type = "API key"
    denylist = (
        re.compile(r"\bsk-ant-(?:api\d\d-|admin\d\d-)?[A-Za-z0-9_-]{20,}"),
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{32,}"),
        re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
        re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}"),
    )


# (lowercase substrings of which one must occur on a match's line or the line before, plugin); the
# triggers of _CASED plugins are looked up as written (their regexes are case-sensitive)
_PLUGINS: tuple[tuple[tuple[str, ...], RegexBasedDetector], ...] = (
    (("akia", "asia", "abia", "acca", "a3t", "aws"), AWSKeyDetector()),
    (("accountkey=",), AzureStorageKeyDetector()),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), GitHubTokenDetector()),
    (
        ("glpat-", "gldt-", "glrt-", "glsoat-", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-", "gr1348941"),
        GitLabTokenDetector(),
    ),
    (("xox",), SlackDetector()),
    (("k_live_",), StripeDetector()),
    (("t3blbkfj",), OpenAIDetector()),
    (("private key",), PrivateKeyDetector()),
    (("eyj",), JwtTokenDetector()),
    (("pypi-",), PypiTokenDetector()),
    (("_authtoken",), NpmDetector()),
    (("sg.",), SendGridDetector()),
    (("AC", "SK"), TwilioKeyDetector()),
    (("discord",), DiscordBotTokenDetector()),
    (("telegram", "bot"), TelegramBotTokenDetector()),
    (("-us",), MailchimpDetector()),
    (("sk-", "aiza", "github_pat_"), _Extra()),
)
_CASED = frozenset({"Twilio API Key"})
_ASSIGN = CaselessPattern(
    r"\b(api[_-]?key|secret(?:[_-]?key)?|access[_-]?token|auth[_-]?token|client[_-]?secret|password|passwd)\b"
    r"[\"']?\s*[:=]\s*[\"']([^\"'\s]{12,})[\"']"
)
_PLACEHOLDER_WORDS = re.compile(
    r"example|sample|dummy|fake|placeholder|your|xxx|changeme|change_me|redacted|replace|insert|secret_here|"
    r"token_here|key_here|test|demo|mock|\.\.\.|\*\*\*|<|>|\{|\}|\$\(|environ|getenv|process\.env|abc123|123abc|"
    r"abcdef|qwerty|123456|password",
    re.I,
)
# a memorable made-up password of documentation: "SecurePass123", "SuperSecret123!"
_DEMO_PASSWORD = re.compile(r"^(?:[A-Z]?[a-z]{2,}){1,3}[_-]?\d{1,4}[!@#$%?.]{0,2}$")
_RUN = re.compile(r"(.)\1{5,}")  # aaaaaa, 000000
_DOCUMENTED = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",  # AWS documentation
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    }
)
_KEY_BODY = re.compile(r"^[A-Za-z0-9+/=]{40,}\s*$", re.M)


def _alphabet_run(value: str, length: int = 6) -> bool:
    """True when the value holds a run like 'abcdef', 'ABCDEFG' or '345678'."""
    run = 1
    for a, b in itertools.pairwise(value):
        run = run + 1 if ord(b) == ord(a) + 1 and a.isalnum() and b.isalnum() else 1
        if run >= length:
            return True
    return False


def placeholder_reason(value: str, kind: str = "") -> str | None:
    """Why `value` looks like a documented or made-up credential rather than a real one (None: it does not)."""
    if value in _DOCUMENTED:
        return "the documentation's sample value"
    if kind == "JSON Web Token" and _jwt_is_sample(value):
        return "a sample token (its payload is the well-known example)"
    m = _PLACEHOLDER_WORDS.search(value)
    if m:
        return f"placeholder text {m.group()!r} in the value"
    if is_templated_secret(value) or is_prefixed_with_dollar_sign(value) or is_not_alphanumeric_string(value):
        return "a template or variable, not a value"
    if _DEMO_PASSWORD.match(value):
        return "a memorable made-up password"
    body = re.sub(r"^(?:[a-z]{2,5}[_-](?:live_|test_|proj-|ant-)?|AKIA|ASIA|gh[pousr]_)", "", value)
    if is_sequential_string(body) or _alphabet_run(body) or _RUN.search(body):
        return "a sequential or repeated run of characters"
    if len(body) >= 16 and len(set(body)) < 8:
        return "too few distinct characters to be a real key"
    return None


def _jwt_is_sample(token: str) -> bool:
    parts = token.split(".")
    if len(parts) < 2:
        return False
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)).decode("utf-8")
        data = json.loads(payload)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return True  # not a decodable token: text shaped like one
    if not isinstance(data, dict):
        return True
    text = json.dumps(data).lower()
    return any(w in text for w in ("john doe", "1234567890", "example", "test", "user@", "demo"))


def _private_key_body(text: str, end: int) -> bool:
    """True when real key material follows a BEGIN ... PRIVATE KEY line."""
    following = text[end : end + 800]
    return len(_KEY_BODY.findall(following)) >= 2 and "..." not in following[:400]


def _trigger_spans(text: str, low: str, triggers: tuple[str, ...], cased: bool = False) -> list[tuple[int, int]]:
    """The lines (start, end) holding a trigger (in `text` when `cased`, else in `low`) with the line before;
    the whole text when triggers are on most lines, are short (lower-case), or when lower() changed the
    text's length."""
    if cased:
        low = text
    found = [t for t in triggers if t in low]
    if not found:
        return []
    if len(low) != len(text) or (not cased and any(len(t) < 3 for t in found)):
        return [(0, len(text))]
    lines: set[tuple[int, int]] = set()
    for t in found:
        pos = low.find(t)
        while pos >= 0:
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            # the line before too: a private key header or a multi-line assignment may start there
            line_start = text.rfind("\n", 0, pos) + 1
            lines.add((text.rfind("\n", 0, line_start - 1) + 1 if line_start > 0 else 0, end))
            pos = low.find(t, end + 1)
    if len(lines) > 200:
        return [(0, len(text))]
    return sorted(lines)


def find_secrets(text: str, low: str | None = None) -> Iterator[SecretHit]:
    """Every credential-shaped string in `text`, with why it looks like a placeholder when it does. `low` is
    `text.lower()` if the caller has it."""
    low = text.lower() if low is None else low
    seen: set[tuple[int, str]] = set()
    for triggers, plugin in _PLUGINS:
        spans = _trigger_spans(text, low, triggers, plugin.secret_type in _CASED)
        if not spans:
            continue
        for regex, (start_at, end_at) in ((r, span) for r in plugin.denylist for span in spans):
            for m in regex.finditer(text, start_at, end_at):
                group = m.group(1) if m.lastindex else None
                value = group if group is not None and len(group) >= 8 else m.group()
                value = value.strip(" \t\"'=:")
                start = m.start()
                if (start, value) in seen:
                    continue
                seen.add((start, value))
                kind = plugin.secret_type
                if kind == "Private Key":
                    line_end = text.find("\n", m.end())
                    real = line_end >= 0 and _private_key_body(text, line_end + 1)
                    yield SecretHit(kind, m.group(), start, None if real else "no key material follows the header")
                    continue
                if kind == "Twilio API Key" and not re.search(r"\d", value):
                    continue
                if kind != "API key" and is_potential_uuid(value):
                    continue
                yield SecretHit(kind, value, start, placeholder_reason(value, kind))
    if any(t in low for t in ("key", "secret", "token", "passw")):
        for m in _ASSIGN.finditer(text, lower_same_offsets(text, low)):
            value = text[m.start(2) : m.end(2)]
            if not (re.search(r"\d", value) and re.search(r"[A-Za-z]", value)):
                continue
            if any(abs(s - m.start(2)) < 80 and v in value for s, v in seen):
                continue  # already reported as a known token shape
            yield SecretHit(f"hard-coded {text[m.start(1) : m.end(1)]}", value, m.start(), placeholder_reason(value))
