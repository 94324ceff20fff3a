"""Settings: one typed object; a CLI flag wins over the environment, which wins over the config file.

The config file is TOML at ``<user config dir>/hiermem-tui/config.toml``. The TUI saves back to
it only what the user changed in the app (theme, host, model, policy …): flags and environment
variables are for the run they were given to, and the file's comments, order and keys this
version does not know survive a save (tomlkit edits the document in place).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, NamedTuple

import platformdirs

APP_NAME = "hiermem-tui"
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
SUMMARY_FORMATS = ("notes", "sections", "plain")
BACKENDS = ("ollama", "openai", "extractive")
"""What can write summaries: an Ollama server, an OpenAI-compatible server, or the built-in digest."""
BASE_URL_ENV = "OPENAI_BASE_URL"


class Server(NamedTuple):
    """One model server a job may use: its kind (``ollama`` or ``openai``) and its URL."""

    backend: str
    url: str

SUMMARY_WAYS = ("measured", "titles", "writes")


class ConfigError(Exception):
    """The config file cannot be read or has a bad value (reported in one line)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """Compaction policy (ARCHITECTURE §5); every number is a default a user can change."""

    fresh_tail: int = 16
    """Newest episodes kept raw while a session is in use: a leaf pass never summarises them."""
    idle_after: int = 86_400
    """Seconds a session must be unchanged to count as idle (its newest message's time; for a chat whose source
    kept no times, its last import): an idle session keeps no fresh tail, so its summaries cover it to its end.
    An imported chat of last month is idle at once."""
    leaf_chunk_tokens: int = 3000
    """Input budget of one leaf summary, in tokens; sized for small local models."""
    leaf_min_episodes: int = 4
    """A chunk smaller than this waits for more episodes."""
    leaf_target_tokens: int = 1200
    """What a leaf summary should stay under (the aggressive tier asks for it explicitly)."""
    condense_fanout: int = 4
    """How many contiguous same-depth summaries one condensed summary takes."""
    condensed_target_tokens: int = 2000
    """What a condensed summary should stay under."""
    fidelity_threshold: float = 0.5
    """Share of its key names (its sources' most important identifiers, as many as a summary of
    its length can carry) under which a summary counts as low-fidelity: the lists flag it and
    ``repair`` re-makes it."""

    def validate(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "fidelity_threshold":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                    raise ConfigError(f"policy.{f.name} must be a number from 0 to 1, not {value!r}")
                continue
            if not isinstance(value, int) or value < (0 if f.name == "fresh_tail" else 1):
                raise ConfigError(f"policy.{f.name} must be a positive whole number, not {value!r}")
        if self.condense_fanout < 2:
            raise ConfigError("policy.condense_fanout must be at least 2")


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the app and the CLI can be told. Built by :func:`load_settings`."""

    db_path: Path = field(default_factory=lambda: default_db_path())
    """The database file; ``--db``, else ``$HIERMEM_DB``, else ``hiermem.db`` in the user data dir."""
    ollama_host: str = DEFAULT_OLLAMA_HOST
    """Ollama server URL; ``--ollama-host``, else ``$OLLAMA_HOST``, else the config file, else the default.
    With several hosts, the first of :attr:`ollama_hosts`."""
    ollama_hosts: tuple[str, ...] = ()
    """Every Ollama server a job shares its summaries among, each with its own ``parallel`` slots
    (``--ollama-host`` repeated, else ``$OLLAMA_HOST`` (one), else ``ollama_hosts = [...]`` in the
    config file); empty: :attr:`ollama_host` alone. A host that goes away mid-call has that summary
    made again on another and takes no more work in that job (ARCHITECTURE §7)."""
    openai_base_url: str | None = None
    """The OpenAI-compatible server (llama.cpp's, LM Studio, vLLM, LiteLLM, Ollama's ``/v1``): its base URL,
    ending in ``/v1``; ``--base-url``, else ``$OPENAI_BASE_URL``, else the config file. With several, the
    first of :attr:`openai_base_urls`. Its key is ``$OPENAI_API_KEY``, never a setting."""
    openai_base_urls: tuple[str, ...] = ()
    """Every OpenAI-compatible server a job shares its summaries among (``--base-url`` repeated, else
    ``openai_base_urls = [...]`` in the config file); empty: :attr:`openai_base_url` alone."""
    named: frozenset[str] = frozenset()
    """The kinds of server named on this run's command line (``ollama`` for ``--ollama-host``, ``openai``
    for ``--base-url``): a kind named there joins a job of the other backend (:meth:`servers`)."""
    model: str | None = None
    """The model; None means the model Ollama has loaded (``/api/ps``), or the one an OpenAI-compatible
    server serves when it serves one."""
    backend: str = "ollama"
    """What writes summaries: ``ollama``, ``openai`` (an OpenAI-compatible server) or ``extractive``
    (offline, deterministic)."""
    timeout_s: float = 120.0
    """Base seconds a model call may take before it counts as a failure for its tier; each call
    also gets twice the time its prompt and answer should take at the model's measured speed."""
    keep_alive: str = "10m"
    """How long Ollama keeps the model in memory after a call."""
    parallel: int = 1
    """Independent summaries (sessions, groups of one depth) made at once, on each host."""
    summary_format: str = "notes"
    """How a model is asked to write: ``notes`` (the default: the model titles a leaf from its key lines,
    and each source of a condensed summary, and the chat's key lines follow; ``summarize/notes.py``),
    ``sections`` (one call, a JSON schema with fixed sections, Ollama's structured outputs) or ``plain``
    (one call, bullet points). Why notes: docs/SUMMARIES.md."""
    summary_way: str = "measured"
    """How a model summarises in ``notes``: ``measured`` (the default: as ``hiermem-tui calibrate`` found for that
    model, ``titles`` for one never calibrated), or ``titles`` / ``writes`` for every model (``writes``: the model
    writes the summary from the key lines and the stretch, ``summarize/writes.py``). ``--summary-way`` for a run."""
    theme: str = "textual-dark"
    """The TUI theme, remembered between runs."""
    mask_secrets: bool = False
    """Show chat text with its secrets masked (``[secret: github token]``): for sharing the screen.
    The transcript, summaries, titles, search hits and what the model sees are masked as the MCP
    server and ``export`` mask them; the stored file is not changed. ``f4`` turns it on and off."""
    policy: Policy = field(default_factory=Policy)
    """Compaction policy (ARCHITECTURE §5)."""
    prompts: dict[str, dict[str, str]] = field(default_factory=dict)
    """Edited prompt templates by key (``leaf.normal`` …): ``{"system": …, "instruction": …}``.
    Only edits are stored; a template not listed is the built-in default."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Keys moved from their defaults: binding id (``app.help``) → keys (``f9``,
    several comma-separated). The help screen lists every id; ``[keymap]`` in the config file."""
    config_path: Path | None = None
    """Where these settings were read from and are saved to (None: nowhere)."""

    def hosts(self) -> tuple[str, ...]:
        """The Ollama servers a job uses, :attr:`ollama_host` first (the list is dropped when
        :attr:`ollama_host` was changed since it was read: the app's settings edit one host)."""
        if self.ollama_hosts and self.ollama_hosts[0] == self.ollama_host:
            return self.ollama_hosts
        return (self.ollama_host,)

    def base_urls(self) -> tuple[str, ...]:
        """The OpenAI-compatible servers configured, :attr:`openai_base_url` first (as :meth:`hosts`)."""
        if self.openai_base_urls and self.openai_base_urls[0] == self.openai_base_url:
            return self.openai_base_urls
        return (self.openai_base_url,) if self.openai_base_url else ()

    def servers(self) -> tuple[Server, ...]:
        """The servers a job shares its summaries among: those of :attr:`backend`'s kind, then those of the
        other kind when this run's command line named them (``--ollama-host`` with ``--backend openai``,
        ``--base-url`` with the Ollama backend); none for ``extractive``."""
        ollama = tuple(Server("ollama", h) for h in self.hosts())
        openai = tuple(Server("openai", u) for u in self.base_urls())
        if self.backend == "ollama":
            return ollama + (openai if "openai" in self.named else ())
        if self.backend == "openai":
            return openai + (ollama if "ollama" in self.named else ())
        return ()

    def configured_servers(self) -> tuple[Server, ...]:
        """Every server of either kind these settings know (what the TUI's model picker asks), the
        backend's kind first."""
        ollama = tuple(Server("ollama", h) for h in self.hosts())
        openai = tuple(Server("openai", u) for u in self.base_urls())
        return openai + ollama if self.backend == "openai" else ollama + openai


def default_db_path() -> Path:
    env = os.environ.get("HIERMEM_DB")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME)) / "hiermem.db"


def default_config_path() -> Path:
    env = os.environ.get("HIERMEM_CONFIG")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def _normalise_host(host: str) -> str:
    host = host.strip().rstrip("/")
    if "://" not in host:
        host = "http://" + host
    scheme, rest = host.split("://", 1)
    if ":" not in rest.split("/")[0]:
        rest = rest.split("/")[0] + ":11434" + rest[len(rest.split("/")[0]):]
    return f"{scheme}://{rest}"


def normalise_base_url(url: str) -> str:
    """An OpenAI-compatible server's base URL: ``http://`` when no scheme is given, ``/v1`` when no path
    is (``localhost:1234`` → ``http://localhost:1234/v1``), no trailing slash."""
    raw = url.strip()
    if "://" not in raw:
        raw = "http://" + raw
    scheme, _, rest = raw.partition("://")
    hostport, _, path = rest.partition("/")
    return f"{scheme.lower()}://{hostport or '127.0.0.1'}/{path.strip('/') or 'v1'}"


def load_settings(
    config_path: Path | None = None,
    *,
    db: str | os.PathLike[str] | None = None,
    model: str | None = None,
    ollama_host: str | Sequence[str] | None = None,
    base_url: str | Sequence[str] | None = None,
    backend: str | None = None,
    parallel: int | None = None,
    summary_way: str | None = None,
) -> Settings:
    """Settings: explicit flags, else the environment, else the config file, else the defaults."""
    path = config_path or default_config_path()
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config {path}: {exc}") from None
    s = Settings(config_path=path)
    pol = data.get("policy", {})
    if not isinstance(pol, dict):
        raise ConfigError(f"{path}: [policy] must be a table")
    known = {f.name for f in fields(Policy)}
    unknown = set(pol) - known
    if unknown:
        raise ConfigError(f"{path}: unknown policy setting(s) {', '.join(sorted(unknown))}")
    policy = replace(Policy(), **pol)
    policy.validate()
    prompts = _read_prompts(data.get("prompts", {}), path)
    keymap = _read_keymap(data.get("keymap", {}), path)
    hosts = _read_hosts(ollama_host, data, path)
    urls = _read_base_urls(base_url, data, path)
    named = {kind for kind, flag in (("ollama", ollama_host), ("openai", base_url)) if flag}
    s = replace(
        s,
        policy=policy,
        prompts=prompts,
        keymap=keymap,
        ollama_host=hosts[0],
        ollama_hosts=hosts if len(hosts) > 1 else (),
        openai_base_url=urls[0] if urls else None,
        openai_base_urls=urls if len(urls) > 1 else (),
        named=frozenset(named),
        model=model or data.get("model") or None,
        backend=backend or data.get("backend", s.backend),
        timeout_s=float(data.get("timeout_s", s.timeout_s)),
        keep_alive=str(data.get("keep_alive", s.keep_alive)),
        parallel=int(parallel or data.get("parallel", s.parallel)),
        theme=str(data.get("theme", s.theme)),
        mask_secrets=_read_bool(data.get("mask_secrets", s.mask_secrets), "mask_secrets", path),
        summary_format=str(data.get("summary_format", s.summary_format)),
        summary_way=str(summary_way or data.get("summary_way", s.summary_way)),
    )
    if db is not None:
        s = replace(s, db_path=Path(db).expanduser())
    elif data.get("db_path") and not os.environ.get("HIERMEM_DB"):
        s = replace(s, db_path=Path(str(data["db_path"])).expanduser())
    if s.backend not in BACKENDS:
        raise ConfigError(f"backend must be 'ollama', 'openai' or 'extractive', not {s.backend!r}")
    if s.backend == "openai" and not urls:
        raise ConfigError(f"the openai backend needs its server's URL: pass --base-url URL (or set ${BASE_URL_ENV}, "
                          "or openai_base_url in the settings file)")
    if s.parallel < 1:
        raise ConfigError("parallel must be at least 1")
    if s.summary_format not in SUMMARY_FORMATS:
        raise ConfigError(f"summary_format must be one of {', '.join(SUMMARY_FORMATS)}, not {s.summary_format!r}")
    if s.summary_way not in SUMMARY_WAYS:
        raise ConfigError(f"summary_way must be one of {', '.join(SUMMARY_WAYS)}, not {s.summary_way!r}")
    return s


def _read_hosts(flags: str | Sequence[str] | None, data: dict[str, Any], path: Path) -> tuple[str, ...]:
    """The Ollama hosts of this run, normalised, without repeats: the flags, else ``$OLLAMA_HOST``, else
    the file's ``ollama_hosts`` (a list), else its ``ollama_host``, else the default."""
    return _read_urls(flags, "OLLAMA_HOST", "ollama_hosts", "ollama_host", data, path,
                      example="http://a:11434", default=DEFAULT_OLLAMA_HOST, normalise=_normalise_host)


def _read_base_urls(flags: str | Sequence[str] | None, data: dict[str, Any], path: Path) -> tuple[str, ...]:
    """The OpenAI-compatible servers of this run, normalised, without repeats: the flags, else
    ``$OPENAI_BASE_URL``, else the file's ``openai_base_urls`` (a list), else its ``openai_base_url``; none
    when nothing names one."""
    return _read_urls(flags, BASE_URL_ENV, "openai_base_urls", "openai_base_url", data, path,
                      example="http://a:8000/v1", default=None, normalise=normalise_base_url)


def _read_urls(flags: str | Sequence[str] | None, env: str, list_key: str, one_key: str, data: dict[str, Any],
               path: Path, *, example: str, default: str | None, normalise: Callable[[str], str]) -> tuple[str, ...]:
    """Servers by the settings' order: the flags, else ``$env`` (one), else the file's ``list_key`` (a list of
    URLs), else its ``one_key``, else ``default``; normalised, without repeats."""
    given = [flags] if isinstance(flags, str) else list(flags or [])
    if not given and os.environ.get(env, "").strip():
        given = [os.environ[env]]
    if not given and list_key in data:
        listed = data[list_key]
        if not isinstance(listed, list) or not listed or not all(isinstance(h, str) and h.strip() for h in listed):
            raise ConfigError(f"{path}: {list_key} must be a list of URLs such as [\"{example}\"], not {listed!r}")
        given = listed
    if not given and data.get(one_key):
        if not isinstance(data[one_key], str):
            raise ConfigError(f"{path}: {one_key} must be a URL such as \"{example}\", not {data[one_key]!r}")
        given = [data[one_key]]
    if not given and default is not None:
        given = [default]
    return tuple(dict.fromkeys(normalise(h) for h in given if h.strip()))


def _read_bool(value: Any, name: str, path: Path) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: {name} must be true or false, not {value!r}")
    return value


def _read_prompts(table: Any, path: Path) -> dict[str, dict[str, str]]:
    """``[prompts."leaf.normal"]`` tables: known keys only, strings only, the material placed."""
    from .summarize.prompts import DEFAULT_TEMPLATES, validate_template

    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [prompts] must be a table")
    out: dict[str, dict[str, str]] = {}
    for key, edit in table.items():
        if key not in DEFAULT_TEMPLATES:
            raise ConfigError(f"{path}: unknown prompt {key!r}; known: {', '.join(DEFAULT_TEMPLATES)}")
        if not isinstance(edit, dict) or not all(isinstance(v, str) for v in edit.values()):
            raise ConfigError(f"{path}: prompts.{key} must be a table of strings (system, instruction)")
        unknown = set(edit) - {"system", "instruction"}
        if unknown:
            raise ConfigError(f"{path}: prompts.{key} has unknown field(s) {', '.join(sorted(unknown))}")
        if "instruction" in edit and (problem := validate_template(edit["instruction"])):
            raise ConfigError(f"{path}: prompts.{key}: {problem}")
        out[key] = dict(edit)
    return out


def _read_keymap(table: Any, path: Path) -> dict[str, str]:
    """``[keymap]``: binding id → keys, strings only (which ids exist is the TUI's to say)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [keymap] must be a table of binding ids to keys")
    out: dict[str, str] = {}
    for key, keys in table.items():
        if not isinstance(keys, str) or not keys.strip():
            raise ConfigError(f"{path}: keymap.{key} must be keys such as \"ctrl+t\", not {keys!r}")
        out[str(key)] = keys.strip()
    return out


SAVED_FIELDS = ("ollama_host", "openai_base_url", "model", "backend", "timeout_s", "keep_alive", "parallel",
                "summary_format", "summary_way", "theme", "mask_secrets")
"""Top-level settings the app writes back when the user changes them (``db_path`` never)."""


def save_settings(new: Settings, previous: Settings) -> Path | None:
    """Write what differs between ``previous`` and ``new`` (what the user just changed) to the
    config file, atomically; nothing else. A value given by a flag or the environment for this run
    is in both, so it is never written — except the OpenAI-compatible server's URL when the openai
    backend is saved to a file that names no server (the backend would not start without it); the
    key never. The file's comments and unknown keys are kept."""
    import tomlkit  # here, not at the top: only a save needs it, and the TUI's start should not wait for it
    from tomlkit.exceptions import TOMLKitError

    path = new.config_path
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        doc = tomlkit.parse(text) if text.strip() else _new_document()
    except (UnicodeDecodeError, TOMLKitError) as exc:
        raise ConfigError(f"cannot update config {path}: {exc}") from None
    for name in SAVED_FIELDS:
        if getattr(new, name) != getattr(previous, name):
            _put(doc, name, getattr(new, name))
    if (new.backend == "openai" and new.openai_base_url and "openai_base_url" not in doc
            and "openai_base_urls" not in doc):
        _put(doc, "openai_base_url", new.openai_base_url)  # the backend remembered is usable without its flag
    for f in fields(Policy):
        if getattr(new.policy, f.name) != getattr(previous.policy, f.name):
            _put(_table(doc, "policy"), f.name, getattr(new.policy, f.name))
    for key in sorted(set(new.prompts) | set(previous.prompts)):
        if new.prompts.get(key) != previous.prompts.get(key):
            edit = new.prompts.get(key)
            _put(_table(doc, "prompts", super_table=True), key, _string_table(edit) if edit else None)
    for key in sorted(set(new.keymap) | set(previous.keymap)):
        if new.keymap.get(key) != previous.keymap.get(key):
            _put(_table(doc, "keymap"), key, new.keymap.get(key))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _new_document() -> Any:
    import tomlkit

    doc = tomlkit.document()
    doc.add(tomlkit.comment("hiermem-tui settings: the app writes what you change in it; edit freely"))
    return doc


def _table(doc: Any, name: str, *, super_table: bool = False) -> Any:
    import tomlkit

    if name not in doc:
        doc[name] = tomlkit.table(is_super_table=super_table or None)
    return doc[name]


def _string_table(values: dict[str, str]) -> Any:
    import tomlkit

    table = tomlkit.table()
    for k, v in sorted(values.items()):
        table[k] = v
    return table


def _put(container: Any, key: str, value: Any) -> None:
    """Set ``key`` (None: remove it), keeping the comments around it."""
    if value is None:
        if key in container:
            del container[key]
        return
    container[key] = value
