"""Made-up secrets in the shapes real ones have, in the places chats hold them, and look-alikes that
are not secrets (hashes, UUIDs, ids) — what the redaction tests read.

None of these is a real credential. The secret bodies are drawn from a seeded generator at import
time, so the file holds no literal key a scanner could take for a leaked one, and the same run
always makes the same corpus.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

_rng = random.Random(23)
_ALNUM = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits
_LOWER_DIGITS = string.ascii_lowercase + string.digits
_URLSAFE = _ALNUM + "-_"
_B64 = _ALNUM + "+/"


def _draw(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


@dataclass(frozen=True)
class Planted:
    """A line of chat holding ``secret``, which must be masked as ``kind``."""

    name: str
    kind: str
    secret: str
    line: str


def _pem(kind: str) -> str:
    body = "\n".join(_draw(_B64, 64) for _ in range(6)) + "\n" + _draw(_B64, 20) + "=="
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


def _planted() -> list[Planted]:
    ghp = "gh" + "p_" + _draw(_ALNUM, 36)
    gho = "gh" + "o_" + _draw(_ALNUM, 36)
    fine = "github" + "_pat_" + _draw(_ALNUM, 22) + "_" + _draw(_ALNUM, 59)
    akia = "AK" + "IA" + _draw(_UPPER_DIGITS, 16)
    aws_secret = _draw(_B64, 40)
    openai_old = "sk-" + _draw(_ALNUM, 20) + "T3Blbk" + "FJ" + _draw(_ALNUM, 20)
    openai_proj = "sk-" + "proj-" + _draw(_URLSAFE, 120)
    anthropic = "sk-" + "ant-api03-" + _draw(_URLSAFE, 93) + "AA"
    slack = "xo" + "xb-" + _draw(string.digits, 12) + "-" + _draw(string.digits, 13) + "-" + _draw(_LOWER_DIGITS, 24)
    hook = ("https://hooks.slack.com/services/T" + _draw(_UPPER_DIGITS, 8) + "/B" + _draw(_UPPER_DIGITS, 8) + "/"
            + _draw(_ALNUM, 24))
    stripe = "sk" + "_live_" + _draw(_ALNUM, 24)
    google = "AI" + "za" + _draw(_URLSAFE, 35)
    hf = "hf" + "_" + _draw(string.ascii_letters, 34)
    glpat = "gl" + "pat-" + _draw(_URLSAFE, 20)
    jwt = ("ey" + "J" + _draw(_URLSAFE, 30) + "." + "ey" + "J" + _draw(_URLSAFE, 60) + "." + _draw(_URLSAFE, 43))
    sendgrid = "SG" + "." + _draw(_URLSAFE, 22) + "." + _draw(_URLSAFE, 43)
    npm = "np" + "m_" + _draw(_ALNUM, 36)
    pypi = "pypi-" + "AgEIcHlwaS5vcmc" + _draw(_URLSAFE, 80)
    telegram = _draw(string.digits, 10) + ":" + "AA" + _draw(_URLSAFE, 33)
    twilio = "S" + "K" + _draw("0123456789abcdef", 32)
    azure = _draw(_B64, 86) + "=="
    square = "sq0" + "csp-" + _draw(_URLSAFE, 43)
    db_password = _draw(_ALNUM + "!#%", 18)
    url_password = _draw(_ALNUM, 16)
    dotenv = _draw(_ALNUM, 24)
    json_key = _draw(_LOWER_DIGITS, 32)
    bearer = _draw(_URLSAFE, 40)
    py_secret = _draw(_ALNUM, 20)
    rsa = _pem("RSA PRIVATE KEY")
    openssh = _pem("OPENSSH PRIVATE KEY")
    return [
        Planted("github classic token", "github token", ghp,
                f"git push https://{ghp}@github.com/acme/widgets.git main"),
        Planted("github oauth token in json", "github token", gho, f'{{"token": "{gho}", "scope": "repo"}}'),
        Planted("github fine-grained token", "github token", fine, f"export GH_TOKEN={fine}"),
        Planted("aws access key id", "aws access key", akia, f"aws_access_key_id = {akia}"),
        Planted("aws secret key next to its name", "aws access key", aws_secret,
                f'aws_secret_access_key = "{aws_secret}"'),
        Planted("openai key, old format", "openai token", openai_old, f"OPENAI_API_KEY={openai_old}"),
        Planted("openai project key", "openai token", openai_proj, f"client = OpenAI(api_key='{openai_proj}')"),
        Planted("anthropic key", "anthropic api key", anthropic, f"curl -H 'x-api-key: {anthropic}' https://api"),
        Planted("slack bot token", "slack token", slack, f"SLACK_BOT={slack}"),
        Planted("slack webhook", "slack token", hook, f"post it to {hook} when done"),
        Planted("stripe live key", "stripe access key", stripe, f"stripe.api_key = {stripe}"),
        Planted("google api key", "google api key", google, f"maps?key={google}&q=paris"),
        Planted("hugging face token", "hugging face token", hf, f"huggingface-cli login --token {hf}"),
        Planted("gitlab token", "gitlab token", glpat, f"PRIVATE-TOKEN: {glpat}"),
        Planted("jwt", "json web token", jwt, f"the cookie was session={jwt}; Path=/"),
        Planted("sendgrid key", "sendgrid api key", sendgrid, f"SENDGRID={sendgrid}"),
        Planted("npm token", "npm tokens", npm, f"//registry.npmjs.org/:_authToken={npm}"),
        Planted("pypi token", "pypi token", pypi, f"password = {pypi}"),
        Planted("telegram bot token", "telegram bot token", telegram, f"bot = Bot({telegram!r})"),
        Planted("twilio api key", "twilio api key", twilio, f"TWILIO_KEY_SID {twilio}"),
        Planted("azure storage key", "azure storage account access key", azure,
                f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={azure};EndpointSuffix=core.windows.net"),
        Planted("square oauth secret", "square oauth secret", square, f"SQUARE_SECRET={square}"),
        Planted("rsa private key", "private key", rsa, f"here is the deploy key:\n{rsa}\nuse it carefully"),
        Planted("openssh private key", "private key", openssh, openssh),
        Planted("password in a database url", "basic auth credentials", url_password,
                f"DATABASE_URL=postgres://app:{url_password}@db.internal:5432/app"),
        Planted("password next to its name", "secret keyword", db_password, f"DB_PASSWORD={db_password}"),
        Planted("api key in a dotenv line", "secret keyword", dotenv, f"WEATHER_API_KEY={dotenv}"),
        Planted("api key in json", "secret keyword", json_key, f'{{"api_key": "{json_key}", "units": "metric"}}'),
        Planted("bearer token header", "secret keyword", bearer, f"-H 'Authorization: Bearer {bearer}'"),
        Planted("secret in python", "secret keyword", py_secret, f'SECRET_KEY = "{py_secret}"'),
    ]


PLANTED = _planted()

LOOKALIKES = [
    "commit 3f9a2c41d0b7e8f65a9c1d2e3f4a5b6c7d8e9f01\nAuthor: Dev <dev@example.com>",
    "Merge: 1a2b3c4 5d6e7f8 — fixed in a1b2c3d, reverted in 0f1e2d3c",
    '{"id": "5f2b9c1e8d7a6b5c4d3e2f1a0b9c8d7e", "session_id": "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"}',
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    '"digest": "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"',
    "run id 0b6f1e2a-4c3d-4e5f-8a9b-1c2d3e4f5a6b finished; see 7c9e6679-7425-40de-944b-e07fc1f90ae7",
    '{"uuid": "123e4567-e89b-12d3-a456-426614174000", "request_id": "req_8f14e45fceea167a5a36dedd4bea2543"}',
    "md5 d41d8cd98f00b204e9800998ecf8427e, etag \"e0aa021e21dddbd6d8cecec71e9cf564\"",
    "The secret: patience. The password is what you chose at sign-up; the token count is 1,234.",
    "max_tokens = 1024\ntoken_count = count_tokens(text)\npassword = getpass()\napi_key = os.environ['API_KEY']",
    'password = "${DB_PASSWORD}"\nsecret: <your secret here>\napi_key: "YOUR_API_KEY"',
    '"secret_scanning": "enabled", "password_policy": "strong"',
    "docker pull ghcr.io/acme/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "[secret: github token] was already masked; so was [secret: private key]",
]
"""Lines that look random or name a key but hold no secret: nothing in them may be masked."""
