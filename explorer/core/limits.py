"""Limits on everything a user can type or a file can declare, and the checks that enforce them.

One place for the CLI (through `explorer.cli.args`) and the GUI: each check raises an
ExplorerError whose message names the value, the allowed range and what to do instead.
"""

from __future__ import annotations

from explorer.core.errors import ExplorerError, TokenError, shown

# Text typed or passed as an argument (phrases, expressions, token text, id lists, titles).
# 100,000 characters tokenize in well under a second and a few tens of MB; 5 MB took 7.5 GB.
MAX_TEXT_CHARS = 1_000_000  # a 40k-token paste is ~300k characters; 1 MB of text stays bounded
# JSON side files (config.json, *.index.json) are a few KB to a few MB in real models.
MAX_JSON_BYTES = 64 << 20
# tokenizer.json: the largest real ones (256k-token vocabularies) are 30–40 MB.
MAX_TOKENIZER_BYTES = 512 << 20
# An id is at most 19 ASCII digits (int64); '#²' or '#١٢' are not ids.
MAX_ID_DIGITS = 19
# Files read whole: each has a cap far above real ones, so a wrong file (a 1 GB log, /dev/zero,
# a sparse file) is refused at once instead of filling memory.
MAX_SESSION_BYTES = 256 << 20  # a session with a 262k-point map layout is ~15 MB
MAX_CORPUS_BYTES = 64 << 20  # `learn --corpus`: the bundled corpus is a few hundred KB
MAX_LINES_BYTES = 32 << 20  # `tokenize --file` (a file or stdin)
MAX_SENTENCEPIECE_BYTES = 32 << 20  # tokenizer.model: real ones are 0.5-5 MB
MAX_MANIFEST_BYTES = 1 << 20  # an Ollama manifest, a Hugging Face refs/main
MAX_SEED = 2**32 - 1
MAX_EPOCHS = 10_000


def check_text(text: str, what: str = "text") -> str:
    """Non-empty, valid UTF-8 (no lone surrogates from undecodable argv) and not too long."""
    if not text:
        raise TokenError(f"{what} is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise TokenError(
            f"{what} is {len(text):,} characters long; the limit is {MAX_TEXT_CHARS:,}"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(text[e.start])
        where = f"byte 0x{code - 0xDC00:02X}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise TokenError(f"{what} is not valid UTF-8 ({where} at character {e.start})") from None
    return text


def display_text(text: str) -> str:
    """Text safe to write as UTF-8: undecodable bytes (surrogate escapes) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
            raw = text.encode("utf-8", errors="surrogatepass")
        return raw.decode("utf-8", errors="replace")


def parse_id(text: str) -> int | None:
    """'123' → 123 for ASCII digits only (at most MAX_ID_DIGITS); anything else → None."""
    if text.isascii() and text.isdigit() and len(text) <= MAX_ID_DIGITS:
        return int(text)
    return None


def parse_hash_id(ref: str) -> int | None:
    """'#123' → 123; '#' + more than MAX_ID_DIGITS ASCII digits is an id out of any range;
    anything else (including '#²' or '#١٢') → None: token text, not an id."""
    body = ref[1:] if ref.startswith("#") else None
    if body is None or not (body.isascii() and body.isdigit()):
        return None
    value = parse_id(body)
    if value is None:
        raise TokenError(f"token id {shown(ref, 30)} is out of range")
    return value


def shown_arg(text: str, limit: int = 40) -> str:
    """An argument value quoted for an error message, cut short."""
    return shown(display_text(text), limit)


def check_int(value: object, low: int, high: int, what: str) -> int:
    """A whole number in [low, high] (bools, floats and huge numbers are refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ExplorerError(
            f"{what} must be a whole number from {low:,} to {high:,}, not {shown(value)}"
        )
    return value
