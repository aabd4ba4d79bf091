"""Security scan over SKILL.md, references and scripts: each finding names file, line, rule and evidence,
and carries where the text sits, whether it is an instruction, a confidence and the reason for its severity.

A regex hit alone is not a verdict. The same `rm -rf ~/` is a threat in a skill's instructions, a lesson
in a write-up that warns against it, and a fixture in a scanner's tests; `severity.py` turns context and
confidence into the finding's severity, and only high-confidence findings in instructions or scripts
block the gate."""

from __future__ import annotations

import base64
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from skillworks.check.context import TextMap
from skillworks.check.data_literals import fenced_data_element, is_data_element, yaml_sequence_item
from skillworks.check.js_flow import JS_SUFFIXES, analyse_js
from skillworks.check.lifecycle import scan_lifecycle
from skillworks.check.model import Confidence, Context, Finding
from skillworks.check.python_flow import PyHit, analyse_python, analyse_python_files
from skillworks.check.reader import SkillFile, SkillSource
from skillworks.check.secrets import find_secrets
from skillworks.check.severity import PHRASE_RULES, Assessment, assess, security_finding
from skillworks.check.shell_flow import analyse_shell

_I = re.I | re.M
HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW


@dataclass(frozen=True)
class _Pat:
    trigger: str  # lowercase literal that must occur on the line of a match
    regex: re.Pattern[str]
    confidence: Confidence = HIGH
    wraps: bool = False  # a match may continue on the next line (prose phrases)


def _p(trigger: str, pattern: str, flags: int = _I, confidence: Confidence = HIGH, wraps: bool = False) -> _Pat:
    return _Pat(trigger, re.compile(pattern, flags), confidence, wraps)


_INJECTION: list[_Pat] = [
    *(
        _p(
            word,
            word + r"\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|"
            r"original|system)\s+(?:instructions?|prompts?|rules|directions|guidelines|messages?)",
            wraps=True,
        )
        for word in ("ignore", "disregard", "forget", "override")
    ),
    _p(
        "not ",
        r"do\s+not\s+(?:tell|inform|alert|notify|mention\s+(?:this\s+|it\s+)?to)\s+the\s+user\b(?!\s+(?:to|how)\b)",
        wraps=True,
    ),
    _p("without", r"without\s+(?:telling|informing|notifying|alerting)\s+the\s+user", wraps=True),
    _p("hide", r"hide\s+(?:this|these|it|them|your actions?)\s+from\s+the\s+user", wraps=True),
    _p("conceal", r"conceal\s+(?:this|these|it|them|your actions?)\s+from\s+the\s+user", wraps=True),
    _p("you are now", r"you\s+are\s+now\s+(?:in\s+)?(?:developer|dan|jailbreak|unrestricted|god)\b", wraps=True),
    _p("system prompt", r"new\s+system\s+prompt\s*:"),
    # chat-template tokens: common in documentation about models, so never more than a hint
    _p("<|", r"<\|im_start\|>\s*system|<\|system\|>", confidence=LOW),
    _p("inst]", r"\[INST\]\s*<<SYS>>", confidence=LOW),
]
_HIDDEN_STYLE: list[_Pat] = [
    _p(
        "style",
        r"style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|"
        r"font-size\s*:\s*0(?:\.0+)?(?:px|em|rem|pt|%)?\s*(?:[;\"'!]|$)|opacity\s*:\s*0(?:\.0+)?\s*[;\"'])",
        confidence=MEDIUM,
    )
]
_HTML_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
# a hidden comment is suspect when it addresses the agent and asks for an action
_ADDRESSEE = re.compile(r"\b(agent|assistant|ai|llm|model|claude|gpt|codex|copilot|system prompt)\b", re.I)
_ACTION = re.compile(
    r"\b(ignore|disregard|forget|execute|run|send|upload|post|curl|wget|delete|remove|download|install|tell|hide|"
    r"approve|exfiltrate|secrets?|passwords?|tokens?|credentials?|api keys?)\b",
    re.I,
)
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_RM_TARGET = (
    r"(?:/|/\*|~/?|~/\*|\$HOME/?|\"\$HOME\"/?|\*|/(?:etc|usr|bin|sbin|var|home|boot|lib|root|opt)/?)"
    r"(?=\s|$|;|&|\||\)|`|\"|')"
)
_DESTRUCTIVE: list[_Pat] = [
    _p(
        "rm ",
        r"\brm\s+(?:-[a-zA-Z]*\s+|--[a-z-]+\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-[a-zA-Z]+\s+|--[a-z-]+\s+)*" + _RM_TARGET,
    ),
    _p("mkfs", r"\bmkfs(?:\.\w+)?\s+/dev/"),
    _p("of=/dev/", r"\bdd\b[^\n]*\bof=/dev/(?:sd|nvme|hd|xvd|vd|disk|mmcblk)"),
    _p("/dev/", r">\s*/dev/(?:sd[a-z]|nvme\d|hd[a-z]|xvd[a-z]|disk\d)"),
    _p(":()", r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),
    _p("chmod", r"\bchmod\s+-R\s+0?777\s+/(?=\s|$)"),
    _p("shred", r"\bshred\b[^\n]*/dev/"),
    _p("rmtree", r"shutil\.rmtree\(\s*[\"'](?:/|~|/home|/etc|/usr)[\"']"),
]
# the interpreter runs what it reads on stdin: `| sh`, `| sudo bash -s -- args`, `| python3`, `| python3 -`
# (not `| python3 -m json.tool` or `| python3 -c "..."`, which only process the downloaded data)
_STDIN_INTERPRETER = (
    r"\|\s*(?:sudo\s+(?:-\w+\s+)*)?(?:(?:(?:ba|z|da|k)?sh)\b(?!\s+-c\b)|"
    r"(?:python3?|node|ruby|perl)(?:\s+-)?\s*(?=$|[;&|)#`\"']))"
)
_WEB_FETCH = r"(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|\(?\s*New-Object\s+(?:System\.)?Net\.WebClient)"
_REMOTE_EXEC: list[_Pat] = [
    _p("curl", r"\bcurl\b[^\n|]*" + _STDIN_INTERPRETER),
    _p("wget", r"\bwget\b[^\n|]*" + _STDIN_INTERPRETER),
    _p("<(", r"\b(?:ba)?sh\s+<\(\s*(?:curl|wget)\b"),
    _p("$(", r"\bsh\s+-c\s+[\"']\$\(\s*(?:curl|wget)\b"),
    _p("iex", r"\b(?:iex|Invoke-Expression)\s*\(?\s*\(?\s*" + _WEB_FETCH),
    _p("iex", _WEB_FETCH + r"[^\n|]*\|\s*(?:iex|Invoke-Expression)\b"),
]
_SENSITIVE = (
    r"(?:\.ssh|\.aws|\.env\b|id_rsa|id_ed25519|/etc/passwd|/etc/shadow|\.netrc|credentials|\.kube"
    r"|\.git-credentials|\.npmrc|\.pypirc)"
)
_SECRET_VAR = re.compile(r"\$\{?[A-Z_]*(?:SECRET|TOKEN|API_KEY|PASSWORD|ACCESS_KEY)")
# a data flag whose value is a sensitive file: `-d @~/.ssh/id_rsa`, `--data-binary @.env`, `-F f=@~/.aws/credentials`
# (`-d` must stand alone: not the end of a hyphenated word such as `x-api-key-d`)
_DATA_FLAG = r"(?:(?<![\w-])-[dFT]|--data(?:-binary|-raw|-urlencode)?|--form|--upload-file|--post-file|--body-file)"
_EXFIL: list[_Pat] = [
    *(
        # the data is the file itself (`@file`, or a path for --upload-file): not a form value that merely
        # contains a word such as `grant_type=client_credentials`
        _p(
            tool,
            r"\b" + tool + r"\b[^\n]*" + _DATA_FLAG + r"[=\s]+[\"']?(?:\w+=)?(?:@[^\s\"']*|[^\s\"']*/)" + _SENSITIVE,
        )
        for tool in ("curl", "wget", "http")
    ),
    _p("cat", r"\bcat\b[^\n|]*" + _SENSITIVE + r"[^\n|]*\|\s*(?:curl|nc|ncat|wget)\b"),
    _p("env", r"\b(?:env|printenv)\s*\|\s*(?:curl|nc|ncat|wget)\b"),
    _p("curl", r"\bcurl\b[^\n]*\$\(\s*(?:env|printenv)\s*\)"),
    _p("wget", r"\bwget\b[^\n]*\$\(\s*(?:env|printenv)\s*\)"),
    _p("requests.p", r"requests\.(?:post|put)\([^\n]*(?:os\.environ\b(?!\.get|\[)|open\([^\n]*" + _SENSITIVE + r")"),
    _p("nc ", r"\bnc\s+(?!(?:127\.|10\.|192\.168\.|localhost\b))[\w.-]+\s+\d+\s*<\s*\S+"),  # off this network
]
_RC_NAMES = ("bashrc", "zshrc", "profile", "zshenv", "bash_login")
_RC_FILE = r"(?:~|\$HOME|\$\{HOME\}|\"\$HOME\"|/root|/home/\w+)/\.(?:bash_|z)?(?:bashrc|zshrc|profile|zshenv|login)\b"
_PY_RC_FILE = r"[\"'](?:~/)?\.(?:bash_|z)?(?:bashrc|zshrc|profile|zshenv)[\"']"
_CRON_PATH = r"(?:etc/cron\.(?:d|daily|hourly|weekly)|var/spool/cron|etc/crontab)\b"
_UNIT_DIR = r"(?:/etc/systemd/system/|\.config/systemd/user/|/lib/systemd/system/)"
_LAUNCH_DIR = r"Library/Launch(?:Agents|Daemons)/"
_PERSISTENCE: list[_Pat] = [
    # shell: `echo ... >> ~/.bashrc`, `tee -a ~/.zshrc`, `cat >> "$HOME/.profile" <<EOF`; python: open(..., "a")
    *(
        pat
        for name in _RC_NAMES
        for pat in (
            _p(name, r"(?:>>|\btee\s+(?:-\w+\s+)*-a\s+|\btee\s+--append\s+)\s*[\"']?" + _RC_FILE),
            _p(name, r"open\([^\n]*" + _PY_RC_FILE + r"[^\n]*,\s*[\"']a"),
        )
    ),
    _p("sed", r"\bsed\s+-i[^\n]*" + _RC_FILE),
    # cron: `(crontab -l; echo ...) | crontab -`, `crontab /tmp/job`, files in the cron directories
    _p("crontab", r"\|\s*crontab\b"),
    # the command (not the path /etc/crontab), reading its table from stdin (`crontab -` ends the command) or
    # from a file
    _p(
        "crontab",
        r"(?<![/\w.-])crontab\s+(?:-u\s+\w+\s+)?(?:-(?=\s*(?:$|[;&|)\"'<]))|[~$/.][\w./~${}\"'-]*|\w+\.(?:txt|cron|tab)\b)",
    ),
    # an argument list that starts with crontab and hands it one file: `["crontab", path]` (not `-l`, not a
    # list of words a detector looks for, not a dict value)
    _p("crontab", r"[\[(]\s*[\"']crontab[\"']\s*,\s*(?:[\"'][^\"'\s-][^\"'\s]*[\"']|[A-Za-z_][\w.]*)\s*[\])]"),
    _p("crontab", r"\bCronTab\s*\(\s*user\s*="),
    # a file written into the cron directories: the target of a redirect or tee, the last argument of cp/mv/
    # install (copying /etc/crontab out as evidence writes nothing there), a file opened for writing
    _p("cron", r"(?:>>?|\btee\b(?:\s+-a)?)\s*[\"']?/" + _CRON_PATH),
    _p("cron", r"\b(?:cp|mv|install)\b[^\n;&|]*\s[\"']?/" + _CRON_PATH + r"[\w./-]*[\"']?\s*(?:$|[;&|#])"),
    _p("cron", r"open\([^\n]*/" + _CRON_PATH + r"[^\n]*,\s*[\"'][wa]"),
    # systemd units and launch agents written, and git hooks installed
    _p("systemd", r"(?:>|\btee\b|\bcp\b|\bmv\b|\binstall\b|\bln\b|open\(|write_text\()[^\n]*" + _UNIT_DIR),
    _p("launch", r"(?:>|\btee\b|\bcp\b|\bmv\b|\bln\b|open\(|write_text\(|plistlib\.dump)[^\n]*" + _LAUNCH_DIR),
    _p("launchctl", r"\blaunchctl\s+(?:load|bootstrap)\b[^\n]*" + _LAUNCH_DIR),
    _p(
        "hooks",
        r"(?:>|\btee\b|\bcp\b|\bmv\b|\bln\b|\binstall\b|open\(|write_text\(|chmod\s+\+x)[^\n]*"
        r"\.git/hooks/(?:pre|post)-\w+",
    ),
]
# what an installed hook, rc line or job runs that makes it an attack rather than a setup step
_PAYLOAD = re.compile(
    r"\b(?:curl|wget|nc|ncat|socat)\b|/dev/tcp/|base64|\beval\b|\bexec\b|\bpython3?\s+-c\b|" + _SENSITIVE,
    re.I,
)


_ENUMERATED = re.compile(r"`[^`\n]+`\s*[,，、;]\s*`[^`\n]+`")


def _names_commands(line: str, fenced: bool) -> bool:
    """True for a Markdown table row or an enumeration of inline-code commands (`rm -rf /`, `mkfs`): a line
    that names commands, not one that tells the agent to run them."""
    if fenced:
        return False
    stripped = line.strip()
    return (stripped.startswith("|") and stripped.endswith("|")) or bool(_ENUMERATED.search(line))


def _logical_line(text: str, pos: int) -> str:
    """The line holding `pos` and, for a heredoc or multi-line echo, the few lines after it."""
    start = text.rfind("\n", 0, pos) + 1
    own_end = text.find("\n", pos)
    line = text[start : len(text) if own_end < 0 else own_end]
    if "<<" not in line and line.count('"') % 2 == 0 and line.count("'") % 2 == 0 and not line.endswith("\\"):
        return line  # a complete line: what the next lines run is not written by it
    end = start
    for _ in range(8):
        nxt = text.find("\n", end + 1)
        end = len(text) if nxt < 0 else nxt
    return text[start:end]


_PERMISSION_TAMPERING: list[_Pat] = [
    # command-shaped (the CLI, then its flags): not a sentence that says how some tool runs
    _p(
        "--dangerously",
        r"\b(?:claude|codex)(?:\s+[-\w=.:/\"']+)*?\s+--dangerously-(?:skip-permissions|bypass-approvals-and-sandbox)\b",
    ),
    # the agent's own settings (`defaultMode`) or CLI flag (`--permission-mode`) turn its checks off; an SDK
    # option (`permission_mode="bypassPermissions"`) documents how to build some other agent: a warning
    _p("bypasspermissions", r"(?:defaultMode[\"']?\s*[:=]|--permission-mode)\s*[\"']?bypassPermissions"),
    _p(
        "bypasspermissions",
        r"(?<!--)\bpermission[_]?mode[\"']?\s*[:=]\s*[\"']?bypassPermissions",
        _I,
        MEDIUM,
    ),
    _p("danger-full-access", r"sandbox(?:_mode)?[\"']?\s*[=:]\s*[\"']danger-full-access"),
    _p("--yolo", r"\b(?:gemini|codex|qwen)\b[^\n]*--yolo\b"),
    _p(
        "disable",
        r"\b(?:disable|turn\s+off|switch\s+off|bypass|skip)\s+(?:all\s+)?(?:of\s+)?(?:your|the\s+agent'?s|its)\s+"
        r"(?:own\s+)?(?:safety|security|permission|approval|sandbox)\s*(?:checks?|prompts?|rules|guardrails?|"
        r"restrictions?|filters?|confirmations?)",
        wraps=True,
    ),
]
_URL = re.compile(r"https?://([^/\s:)>\]\"'`?#]+)")
_IP = re.compile(r"(?:\d{1,3}\.){3}\d{1,3}")
# loopback, private and link-local (the cloud metadata service at 169.254.169.254): data sent there stays
_PRIVATE_IP = re.compile(r"(?:127\.|0\.0\.0\.0|10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.)")
_PASTE_HOSTS = frozenset(
    {
        "pastebin.com",
        "paste.ee",
        "hastebin.com",
        "ghostbin.com",
        "ghostbin.co",
        "rentry.co",
        "transfer.sh",
        "termbin.com",
        "0x0.st",
        "webhook.site",
        "requestbin.com",
        "requestbin.net",
    }
)
_PASTE_SUFFIXES = (".ngrok.io", ".ngrok.app", ".ngrok-free.app", ".pipedream.net")
_SHORTENERS = frozenset(
    {
        "bit.ly",
        "tinyurl.com",
        "t.co",
        "goo.gl",
        "is.gd",
        "ow.ly",
        "rebrand.ly",
        "cutt.ly",
        "shorturl.at",
        "tiny.cc",
        "buff.ly",
    }
)


def _suspicious_host(host: str) -> str | None:
    host = host.lower().removeprefix("www.")
    if _IP.fullmatch(host):
        return None if _PRIVATE_IP.match(host) else "raw IP address"
    if host in _PASTE_HOSTS or host.endswith(_PASTE_SUFFIXES):
        return "paste or request-capture site"
    if host in _SHORTENERS:
        return "URL shortener"
    return None


_OBFUSCATION: list[_Pat] = [
    _p("base64", r"\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"),
    _p(
        "eval",
        r"\beval\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads|"
        r"__import__\(\s*[\"'](?:base64|codecs|zlib|marshal)[\"']\))",
    ),
    _p(
        "exec",
        r"\bexec\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads|"
        r"__import__\(\s*[\"'](?:base64|codecs|zlib|marshal)[\"']\))",
    ),
    _p("decode(", r"\b(?:eval|exec)\s*\([^\n]*\.decode\(\s*[\"'](?:base64|hex|rot13|rot_13)[\"']"),
    _p("atob(", r"\beval\s*\(\s*atob\(|\bnew\s+Function\s*\(\s*atob\("),
    _p("base64", r"\beval\s+\"?\$\(\s*(?:echo|printf)\b[^\n]*\|\s*base64\s+(?:-d|--decode)"),
]
_BLOB = re.compile(r"[A-Za-z0-9+/]{240,}={0,2}")
_DECODERS = re.compile(r"b64decode|base64\s+(?:-d|--decode)|atob\(|fromBase64|FromBase64String", re.I)
_DECODER_TRIGGERS = ("b64decode", "base64", "atob(", "frombase64")

_CHECKS: tuple[tuple[str, str, list[_Pat]], ...] = (
    ("sec-prompt-injection", "instruction-override phrasing", _INJECTION),
    ("sec-destructive-shell", "destructive command", _DESTRUCTIVE),
    ("sec-remote-exec", "downloaded code is executed", _REMOTE_EXEC),
    ("sec-exfiltration", "local data is sent to a remote host", _EXFIL),
    ("sec-obfuscation", "decoded payload is executed", _OBFUSCATION),
    ("sec-hidden-text", "text styled to be invisible", _HIDDEN_STYLE),
    ("sec-persistence", "installs code to run again later", _PERSISTENCE),
    ("sec-permission-tampering", "turns off the agent's permission checks", _PERMISSION_TAMPERING),
)
# a skill whose subject is security quotes attacks to teach, test or detect them
_SECURITY_TOPIC = re.compile(
    r"\b(security|pen-?test\w*|penetration|red[- ]team\w*|attacks?|exploit\w*|injections?|malware|vulnerab\w*|"
    r"guardrails?|jailbreak\w*|threats?|forensic\w*|ctf|secret[- ]scan\w*|audit\w*|ssrf|xss|phishing|"
    r"incident[- ]response|hardening|cyber\w*|safety|moderation)\b",
    re.I,
)


def security_topic(name: object, description: object) -> str | None:
    """The security subject a skill declares in its name or description (None for other skills)."""
    text = " ".join(v for v in (name, description) if isinstance(v, str))
    m = _SECURITY_TOPIC.search(text.replace("-", " ") + " " + text)
    return m.group().lower() if m else None


def _addresses_agent(comment: str) -> bool:
    """True when a comment names the agent and asks for an action within a few words of it."""
    names = [m.start() for m in _ADDRESSEE.finditer(comment)]
    return bool(names) and any(abs(m.start() - n) <= 60 for m in _ACTION.finditer(comment) for n in names)


def _is_emoji(ch: str) -> bool:
    if not ch:
        return False
    cp = ord(ch)
    return cp >= 0x1F000 or 0x2190 <= cp <= 0x2BFF or cp in (0xFE0F, 0x20E3, 0x200D) or 0x2300 <= cp <= 0x23FF


def _complex_script(ch: str) -> bool:
    """A letter or mark of a script where ZWJ/ZWNJ shape the text (Arabic, Persian, Indic, ...)."""
    return bool(ch) and ord(ch) >= 0x0590 and unicodedata.category(ch)[0] in "LM" and not _is_emoji(ch)


def _rtl(text: str) -> bool:
    return any(unicodedata.bidirectional(c) in ("R", "AL") for c in text)


def _invisible(text: str, tm: TextMap, rel: str | None) -> list[Finding]:
    out: list[Finding] = []
    for m in _INVISIBLE.finditer(text):
        ch, pos = m.group(), m.start()
        if pos == 0 and ch == "\ufeff":
            continue  # a byte-order mark at the very start is harmless
        prev = text[pos - 1] if pos else ""
        nxt = text[pos + 1] if pos + 1 < len(text) else ""
        cp = ord(ch)
        if ch == "\u200d" and (_is_emoji(prev) or _is_emoji(nxt)):
            continue  # emoji ZWJ sequence such as a person + laptop
        if ch in "\u200c\u200d" and (_complex_script(prev) or _complex_script(nxt)):
            continue  # joiner/non-joiner shaping Persian, Arabic or Indic text
        if 0xE0020 <= cp <= 0xE007F and _in_flag_tag(text, pos):
            continue  # subdivision flag emoji (tag sequence after a black flag)
        spot = tm.spot(pos, pos + 1, cue_lines=0)
        line_text = tm.line_text(pos)
        rtl_near = _rtl(line_text) or _rtl(text[max(0, pos - 400) : pos + 400])
        if ch in "\u200e\u200f":
            confidence = LOW if rtl_near else MEDIUM  # direction marks belong to right-to-left prose
        elif ch in _BIDI and spot.context in (Context.PROSE, Context.QUOTED) and rtl_near:
            # embeddings in right-to-left prose (also around a number or a Latin phrase on a line of its own);
            # reordering that fools a reader is a threat in code: there an override still warns
            confidence = LOW if ch not in "\u202d\u202e" else MEDIUM
        elif ch in _BIDI or 0xE0000 <= cp <= 0xE007F:
            confidence = HIGH  # Trojan Source reordering or ASCII smuggling in tag characters
        else:
            confidence = MEDIUM  # zero-width space / word joiner: hides a word from readers and scanners
        a = Assessment(spot.context, confidence, spot.context in (Context.PROSE, Context.EXAMPLE, Context.QUOTED))
        a.reasons.append(f"U+{cp:04X} {unicodedata.name(ch, 'invisible character').lower()}")
        if spot.context is Context.TEST:
            a.lower("test fixtures hold such characters on purpose")
        out.append(
            security_finding(
                "sec-invisible-unicode", f"invisible character U+{cp:04X}", rel, spot.line, repr(spot.line_text), a
            )
        )
    return out


def _in_flag_tag(text: str, pos: int) -> bool:
    i = pos
    while i > 0 and 0xE0020 <= ord(text[i - 1]) <= 0xE007E:
        i -= 1
    return i > 0 and text[i - 1] == "\U0001f3f4"


def _trigger_lines(text: str, low: str, trigger: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every line holding `trigger` (found with str.find, far faster than a regex pass)."""
    if len(low) != len(text):  # lower() changed the length (rare letters such as 'İ'): offsets differ
        yield 0, len(text)
        return
    pos = low.find(trigger)
    while pos >= 0:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        yield start, end
        pos = low.find(trigger, end + 1)


def _matches(pat: _Pat, text: str, low: str) -> Iterator[re.Match[str]]:
    """The pattern's matches on the lines that hold its trigger (patterns never span lines, except the few
    injection phrases that may wrap; those are searched over the line and the next one)."""
    for start, end in _trigger_lines(text, low, pat.trigger):
        if pat.wraps and end < len(text):
            following = text.find("\n", end + 1)
            end = len(text) if following < 0 else following
        yield from pat.regex.finditer(text, start, end)


# rules whose hit inside a data collection, a pattern or a comment is not a command that runs
_DATA_AWARE = frozenset({"sec-destructive-shell", "sec-persistence"})


def _is_data(text: str, rel: str | None, tm: TextMap, start: int, end: int) -> bool:
    """True when text[start:end] is data (see `data_literals`): in a script by its syntax tree, in a fenced
    block of a Markdown file by the syntax of the fence's language, or an item of a fenced YAML list."""
    if is_data_element(text, rel, start, end):
        return True
    fence = tm.fence_at(start)
    return fence is not None and (fenced_data_element(text, fence, start, end) or yaml_sequence_item(text, start))


def scan_text(text: str, rel: str | None, start_line: int = 1, *, topic: str | None = None) -> list[Finding]:
    """Every security finding in one text. `start_line` is the file line of text[0]; `topic` is the skill's
    security subject, if any (see `security_topic`)."""
    out: list[Finding] = []
    tm = TextMap(text, rel, start_line)
    # the line rules read a command continued with `\` as one line; "\\\n" -> "  " keeps every offset, so
    # findings still point at the line where the command starts
    lines = text.replace("\\\r\n", "   ").replace("\\\n", "  ") if "\\\n" in text else text
    low = lines.lower()

    def add(
        rule_id: str,
        message: str,
        start: int,
        end: int,
        confidence: Confidence,
        evidence: str | None = None,
        cue_lines: int = 1,
    ) -> Assessment:
        spot = tm.spot(start, end, cue_lines=cue_lines, backticks_quote=rule_id in PHRASE_RULES)
        a = assess(rule_id, spot, confidence, topic)
        out.append(security_finding(rule_id, message, rel, spot.line, evidence or spot.line_text, a))
        return a

    for rule_id, what, patterns in _CHECKS:
        for pat in patterns:
            if pat.trigger not in low:
                continue
            for m in _matches(pat, lines, low):
                confidence = pat.confidence
                if rule_id == "sec-hidden-text" and (tm.base is not Context.PROSE or tm.in_fence(m.start())):
                    confidence = LOW  # display:none toggles in an HTML page, a script or markup shown as code
                elif rule_id == "sec-obfuscation" and _harmless_literal(tm.line_text(m.start()), topic):
                    confidence = MEDIUM  # the literal it decodes was decoded and re-scanned: nothing in it
                elif (
                    rule_id == "sec-persistence"
                    and tm.base is not Context.SCRIPT
                    and not _PAYLOAD.search(_logical_line(text, m.start()))
                ):
                    confidence = MEDIUM  # a setup step shown to the reader (PATH export, the skill's own service)
                elif (
                    rule_id == "sec-destructive-shell"
                    and tm.base is not Context.SCRIPT
                    and _names_commands(tm.line_text(m.start()), tm.in_fence(m.start()))
                ):
                    confidence = MEDIUM  # a table row or an enumeration that names commands (to detect, to block)
                elif rule_id in _DATA_AWARE and _is_data(text, rel, tm, m.start(), m.end()):
                    confidence = MEDIUM  # one element of a list of payloads, blocked or detected commands
                add(rule_id, what, m.start(), m.end(), confidence)
    if "://" in text:
        for m in _URL.finditer(text):
            why = _suspicious_host(m.group(1))
            if why:
                add("sec-suspicious-url", why, m.start(), m.end(), MEDIUM)
        if _SECRET_VAR.search(text):
            for m in _URL.finditer(text):
                line = tm.line_text(m.start())
                if _suspicious_host(m.group(1)) and _SECRET_VAR.search(line) and re.search(r"\b(?:curl|wget)\b", line):
                    add(
                        "sec-exfiltration",
                        "a secret is sent to a " + str(_suspicious_host(m.group(1))),
                        m.start(),
                        m.end(),
                        HIGH,
                    )
    if "<!--" in text:
        for m in _HTML_COMMENT.finditer(text):
            body = m.group(1)
            if tm.in_fence(m.start()) or not _addresses_agent(body):
                continue  # an ordinary comment, or markup shown as an example
            confidence = MEDIUM if tm.base is Context.PROSE else LOW
            add(
                "sec-hidden-text",
                "HTML comment (invisible when rendered) addresses the agent",
                m.start(),
                m.end(),
                confidence,
                " ".join(m.group(0).split()),
                cue_lines=0,
            )
    if not text.isascii():
        out.extend(_invisible(text, tm, rel))
    for hit in find_secrets(text, low):
        spot = tm.spot(hit.start, hit.start + len(hit.value), cue_lines=0)
        a = assess("sec-secret", spot, HIGH, topic)
        if hit.placeholder:
            a.lower(f"looks like a placeholder: {hit.placeholder}", 2, instruction=None)
        out.append(
            security_finding(
                "sec-secret", f"credential-shaped string ({hit.kind})", rel, spot.line, _mask(hit.value), a
            )
        )
    if any(t in low for t in _DECODER_TRIGGERS) and _DECODERS.search(text):
        for m in _BLOB.finditer(text):
            if "base64," in text[max(0, m.start() - 20) : m.start()]:
                continue  # data: URI (embedded image), not an executed payload
            add(
                "sec-obfuscation",
                f"{len(m.group())}-character encoded blob next to a decoder",
                m.start(),
                m.end(),
                MEDIUM,
                m.group()[:40] + "...",
            )
    return out


_B64_LITERAL = re.compile(r"[\"']([A-Za-z0-9+/]{8,}={0,2})[\"']")


def _harmless_literal(line: str, topic: str | None) -> bool:
    """True when the line decodes a base64 literal whose text, scanned again, holds no security error."""
    m = _B64_LITERAL.search(line)
    if not m:
        return False
    try:
        decoded = base64.b64decode(m.group(1), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    if not decoded.isprintable():
        return False
    scanned = scan_text(decoded, "scripts/decoded.sh", topic=topic)
    return (
        not _PAYLOAD.search(decoded)
        and not any(f.severity.value == "error" for f in scanned)
        and not any(h.high for h in analyse_python(decoded))
    )


def _mask(secret: str) -> str:
    return secret if len(secret) <= 8 else f"{secret[:6]}...{secret[-2:]} ({len(secret)} chars)"


def _flow_findings(f: SkillFile, python_hits: dict[str, list[PyHit]]) -> list[Finding]:
    """Source-to-sink findings of one script, judged on what the code does: a script's file name, the skill's
    description and the words around the code never lower them."""
    if f.text is None:
        return []
    hits: list[tuple[str, str, int, bool]] = []
    if f.language == "python":
        hits = [(h.rule_id, h.message, h.line, h.high) for h in python_hits.get(f.rel, [])]
    elif f.language == "shell":
        hits = [(h.rule_id, h.message, f.text.count("\n", 0, h.start) + 1, h.high) for h in analyse_shell(f.text)]
    elif f.suffix in JS_SUFFIXES:
        hits = [(h.rule_id, h.message, h.line, h.high) for h in analyse_js(f.text, f.suffix)]
    out = []
    lines = f.text.splitlines()
    for rule_id, message, line, high in hits:
        a = Assessment(Context.SCRIPT, HIGH if high else MEDIUM, True, ["in a script (data flow)"])
        evidence = lines[line - 1].strip() if 0 < line <= len(lines) else None
        out.append(security_finding(rule_id, message, f.rel, line, evidence, a))
    return out


def scan_security(src: SkillSource) -> list[Finding]:
    fm = src.frontmatter or {}
    topic = security_topic(fm.get("name"), fm.get("description"))
    out: list[Finding] = []
    if src.text is not None:
        out.extend(scan_text(src.text, src.skill_md_rel, topic=topic))
    # the skill's Python files are analysed together: a helper one script imports carries its flows
    python_hits = analyse_python_files(
        {f.rel: f.text for f in src.files if f.text is not None and f.language == "python"}
    )
    for f in src.files:
        if f.text is not None:
            out.extend(scan_text(f.text, f.rel, topic=topic))
            out.extend(_flow_findings(f, python_hits))
    out.extend(scan_lifecycle(src))
    # one finding per (rule, file, line): the most severe one
    order = {"error": 0, "warning": 1, "info": 2}
    best: dict[tuple[str, str | None, int | None], Finding] = {}
    for found in out:
        key = (found.rule_id, found.file, found.line)
        if key not in best or order[found.severity.value] < order[best[key].severity.value]:
            best[key] = found
    return list(best.values())
