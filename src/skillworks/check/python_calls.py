"""What the Python source-to-sink analysis (`python_flow`) knows of Python's APIs: the modules and calls that
reach the network, download, decode, run commands, hold connections or read files."""

from __future__ import annotations

NET_MODULES = ("requests", "httpx", "urllib", "urllib2", "http", "aiohttp", "socket", "smtplib", "ftplib", "urllib3")
NET_SENDS = frozenset(
    {
        "post",
        "put",
        "patch",
        "request",
        "urlopen",
        "Request",
        "send",
        "sendall",
        "sendmail",
        "send_message",
        "storbinary",
        "connect",
        "get",
        "stream",
    }
)
RAW_SENDS = frozenset({"send", "sendall", "sendmail", "send_message", "storbinary"})
DOWNLOAD_CALLS = frozenset({"get", "urlopen", "request", "stream", "urlretrieve"})
DECODERS = frozenset(
    {
        "b64decode",
        "b32decode",
        "b85decode",
        "a85decode",
        "urlsafe_b64decode",
        "decodebytes",
        "fromhex",
        "unhexlify",
        "a2b_base64",
        "a2b_hex",
        "decompress",
        "loads",
    }
)
DECODER_MODULES = ("base64", "binascii", "codecs", "zlib", "marshal", "bytes", "gzip", "lzma", "bz2")
CODECS = frozenset({"base64", "base_64", "hex", "hex_codec", "zlib", "zip", "bz2", "rot13", "rot_13", "uu"})
EXECS = frozenset({"exec", "eval", "builtins.exec", "builtins.eval"})
RUNNERS = frozenset(
    {
        "system",
        "popen",
        "run",
        "call",
        "check_call",
        "check_output",
        "Popen",
        "getoutput",
        "getstatusoutput",
        "spawnl",
        "execv",
        "execl",
        "execvp",
    }
)
MUTATORS = frozenset(
    {"update", "append", "extend", "insert", "__setitem__", "write", "write_text", "write_bytes", "writelines"}
)
# constructors of connection objects: their send/sendall/sendmail/request methods are network sinks
CONNECTIONS = frozenset(
    {
        "socket.socket",
        "socket.create_connection",
        "ssl.wrap_socket",
        "smtplib.SMTP",
        "smtplib.SMTP_SSL",
        "ftplib.FTP",
        "http.client.HTTPConnection",
        "http.client.HTTPSConnection",
        "requests.Session",
        "requests.session",
        "httpx.Client",
        "httpx.AsyncClient",
        "aiohttp.ClientSession",
        "urllib3.PoolManager",
    }
)
CONN_SENDS = frozenset(
    {"send", "sendall", "sendto", "sendmail", "send_message", "request", "post", "put", "patch", "storbinary"}
)
READS = frozenset({"open", "read_text", "read_bytes", "load", "dotenv_values", "load_dotenv"})
