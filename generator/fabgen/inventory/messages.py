"""What a problem says: "did you mean", schema errors in the inventory's words, and the rules of
name patterns (hostnames, plane port names)."""

from __future__ import annotations

import os
import re
import string
import unicodedata
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from fabgen.errors import Problem
from fabgen.inventory.loader import Loaded, PathT, format_path
from fabgen.spec.schema import (
    BANNER_PATTERN,
    DEVICE_PATTERN,
    DOMAIN_PATTERN,
    ENV_PATTERN,
    LDAP_DN_PATTERN,
    MAC_PATTERN,
    NAME_PATTERN,
    NAME_RULE,
    NCCL_VERSION_PATTERN,
    PEER_GROUP_PATTERN,
    PRINTABLE_PATTERN,
    SKU_PATTERN,
    SNMP_TEXT_PATTERN,
    TEXT_PATTERN,
    TIMEZONE_PATTERN,
    USER_PATTERN,
    VAULT_PATTERN,
    Inventory,
)


def _distance(a: str, b: str) -> int:
    """Edit distance. Kept instead of difflib.get_close_matches, which was tried on every error
    case: difflib ranks by a similarity ratio and breaks ties by list order, so 'qm970' got
    'did you mean qm9790' (both score 0.91) where one deletion makes it qm9700; edit distance
    with a common-prefix tie-break suggests the one a person meant."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def closest(word: Any, options: list[str] | tuple[str, ...]) -> str | None:
    """The option nearest to `word` by edit distance, then longest common prefix; a number among
    numeric options is matched by value (tiers: 4 -> 3, not the first option one edit away)."""
    w = str(word)
    numbers = [str(x) for x in options if str(x).isdigit()]
    if w.isdigit() and numbers:
        return min(numbers, key=lambda o: (abs(int(o) - int(w)), int(o)))
    best = None
    for o in sorted(str(x) for x in options):
        d = _distance(w.lower(), o.lower())
        if d > max(2, len(o) // 3):
            continue
        prefix = len(os.path.commonprefix([w.lower(), o.lower()]))
        key = (d, -prefix)
        if best is None or key < best[0]:
            best = (key, o)
    return best[1] if best else None


def did_you_mean(word: Any, options: list[str] | tuple[str, ...]) -> str:
    text = str(word)
    odd = [c for c in text if not c.isascii()]
    if odd:  # a look-alike (Cyrillic 'р' for 'p'): name the characters, then match their ASCII twins
        named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'UNKNOWN')}" for c in dict.fromkeys(odd))
        match = closest("".join(c if c.isascii() else "?" for c in text), options)
        return f" (it contains {named}{f'; did you mean {match!r}?' if match else ''})"
    match = closest(word, options)
    return f" (did you mean '{match}'?)" if match else ""


def _fields_of(loc: PathT, root: Any = Inventory) -> list[str]:
    """The keys a model at `loc` accepts, for 'unknown key' hints."""
    model: Any = root
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        info = model.model_fields.get(part) if hasattr(model, "model_fields") else None
        if info is None:  # a dict key (switch_models.<name>): the value model stays
            continue
        model = _inner_model(info.annotation)
    return list(model.model_fields) if hasattr(model, "model_fields") else []


def _choices_of(loc: PathT, root: Any = Inventory) -> list[Any]:
    """The values a Literal field at `loc` allows (tiers: auto, 1, 2, 3), for the message of a
    value that only equals one of them (true for 1, 2.0 for 2)."""
    from typing import Literal, get_args, get_origin

    info = None
    model: Any = root
    for part in loc:
        if isinstance(part, int) or not hasattr(model, "model_fields"):
            continue
        info = model.model_fields.get(part)
        if info is None:
            continue
        model = _inner_model(info.annotation)
    annotation = info.annotation if info is not None else None
    while annotation is not None and get_origin(annotation) is not Literal:
        annotation = next((a for a in get_args(annotation) if get_origin(a) is Literal), None)
    return list(get_args(annotation)) if annotation is not None else []


def _inner_model(annotation: Any) -> Any:
    from typing import get_args

    if hasattr(annotation, "model_fields"):
        return annotation
    for arg in get_args(annotation):
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def schema_problems(loaded: Loaded, exc: ValidationError, root: Any = Inventory) -> list[Problem]:
    """pydantic's errors as located problems in `loaded`'s file; `root` is the model validated
    (the inventory, or another file fabgen reads such as a price list)."""
    out = []
    errors = exc.errors(include_url=False)
    # A misspelt key shows up twice: as an unknown key and as the required key it was meant
    # to be. Report it once, as the misspelling.
    meant = {(tuple(e["loc"][:-1]), closest(e["loc"][-1], _fields_of(tuple(e["loc"][:-1]), root)))
             for e in errors if e["type"] == "extra_forbidden"}
    for err in errors:
        if err["type"] == "missing" and (tuple(err["loc"][:-1]), err["loc"][-1]) in meant:
            continue
        loc = _untagged(tuple(err["loc"]))
        etype = err["type"]
        if etype == "extra_forbidden" and len(loc) < len(err["loc"]):  # a secret's second reference
            line, col = loaded.where(loc, key=True)
            out.append(Problem(line, col, format_path(loc), "a secret is one reference, {env: VARIABLE} or "
                               "{vault: variable}, not both", loaded.file))
            continue
        if etype == "extra_forbidden":
            key = loc[-1]
            hint = did_you_mean(key, _fields_of(loc[:-1], root))
            line, col = loaded.where(loc, key=True)
            out.append(Problem(line, col, format_path(loc), f"unknown key '{key}'{hint}", loaded.file))
            continue
        if etype == "missing":
            line, col = loaded.where(loc[:-1])
            out.append(Problem(line, col, format_path(loc), f"missing required key '{loc[-1]}'", loaded.file))
            continue
        line, col = loaded.where(loc)
        out.append(Problem(line, col, format_path(loc), _message(err, loc, loaded, root), loaded.file))
    return out


SECRET_TAGS = ("env", "vault")  # spec/schema.py AnySecret's tags: pydantic puts the chosen one in the path


def _untagged(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """A path without a secret's union tag (`password_hash.vault.vault` -> `password_hash.vault`):
    a tag is followed by the field it chose, a key of the inventory is not followed by another
    `env` or `vault` (both are leaves)."""
    return tuple(p for i, p in enumerate(loc) if not (p in SECRET_TAGS and i + 1 < len(loc)))


_TYPE_ERRORS = {"int_type": "a whole number", "float_type": "a number", "string_type": "a string",
                "list_type": "a list", "dict_type": "a mapping", "model_type": "a mapping",
                "model_attributes_type": "a mapping", "bool_type": "true or false",
                "int_from_float": "a whole number"}


def _message(err: ErrorDetails, loc: tuple[Any, ...], loaded: Loaded, root: Any) -> str:
    """One pydantic error (a value's, not a key's) in the inventory's words, by its type."""
    etype = err["type"]
    value = err.get("input")
    if etype == "literal_error":
        return _literal_message(err, value)
    if etype == "string_pattern_mismatch":
        return pattern_message(str(err.get("ctx", {}).get("pattern", "")), value)
    if etype in _TYPE_ERRORS:
        return _type_message(etype, value, loc, loaded)
    if etype == "number_choice":
        return _choice_message(value, loc, loaded, root)
    if etype == "secret_literal":
        return err["msg"]  # never the value: it is a secret
    if etype in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        ctx = err.get("ctx", {})
        bound = {"greater_than_equal": ("at least", "ge"), "less_than_equal": ("at most", "le"),
                 "greater_than": ("more than", "gt"), "less_than": ("less than", "lt")}[etype]
        return f"must be {bound[0]} {ctx.get(bound[1])}, not {value!r}"
    if etype in ("too_short", "too_long"):
        ctx = err.get("ctx", {})
        n = ctx.get("min_length") if etype == "too_short" else ctx.get("max_length")
        return f"needs {'at least' if etype == 'too_short' else 'at most'} {n} item{'s' if n != 1 else ''}"
    text = err["msg"]
    msg = text[0].lower() + text[1:] if text else etype
    if value is not None and not isinstance(value, (dict, list)):
        msg += f" (got {value!r})"
    return msg


def _literal_message(err: ErrorDetails, value: Any) -> str:
    """Not one of the allowed values: which are, and whether quotes made the difference."""
    expected = err.get("ctx", {}).get("expected", "")
    options = re.findall(r"'([^']*)'|\b(\d+)\b", expected)
    flat = [a or b for a, b in options]
    msg = f"{value!r} is not one of {', '.join(flat)}{did_you_mean(value, flat)}"
    if isinstance(value, str) and value in flat and value.isdigit():
        msg = f"the text {value!r} is not one of {', '.join(flat)}: write the number {value} without quotes"
    elif not isinstance(value, str) and str(value) in flat:
        msg = f"{value!r} is not one of {', '.join(flat)}: quote it: \"{value}\""
    return msg


def _type_message(etype: str, value: Any, loc: tuple[Any, ...], loaded: Loaded) -> str:
    """A value of the wrong type, and the YAML reading (quotes, exponents) that most likely made it."""
    wanted = _TYPE_ERRORS[etype]
    msg = f"must be {wanted}, not {_describe(value)}"
    if etype in ("int_type", "float_type") and isinstance(value, str) and _looks_numeric(value):
        msg = f"must be {wanted}, not the text {value!r}: write it without quotes"
        if loc in loaded.numbers:
            msg = (f"must be {wanted}: YAML 1.1 reads the unquoted {value} as text, not a number (an "
                   "exponent needs a '.' and a sign, as in 1.5e+9): write it as a plain number")
    written = loaded.numbers.get(loc)
    if etype == "string_type" and written is not None and ("." in written or loc[-1] in QUOTED_NUMBERS):
        msg = (f"must be text, not the number {written}" + (f" (YAML reads it as {value!r})"
               if str(value) != written else "") + f": quote it: \"{written}\"")
    if len(loc) == 3 and loc[0] == "fabrics" and loc[2] == "management":
        msg = f"must be an IPv4 prefix (e.g. 192.168.0.0/24) or a mapping with prefix, gateway, vrf, ntp, " \
              f"dns, syslog, domain and users; not {_describe(value)}"
    return msg


def _choice_message(value: Any, loc: tuple[Any, ...], loaded: Loaded, root: Any) -> str:
    """A number that is not one of the field's choices (a speed, a radix): the choices."""
    choices = [str(c) for c in _choices_of(loc, root)]
    wanted = (", ".join(choices[:-1]) + " or " + choices[-1]) if len(choices) > 1 else \
        (choices[0] if choices else "a whole number")
    msg = f"must be {wanted}, not {_describe(value)}"
    if isinstance(value, float) and value.is_integer():
        msg = f"must be {wanted}, not {loaded.numbers.get(loc, value)} (a decimal number): write {int(value)}"
    return msg


# What each pattern of the schema (and of the other files fabgen reads) asks for, in words.
PATTERN_RULES = {
    ENV_PATTERN: "is not an environment variable name: letters, digits and '_', not starting with a digit, "
                 "at most 64",
    USER_PATTERN: "is not a user name: lowercase letters, digits, '_' and '-', starting with a letter or '_', "
                  "at most 32",
    DOMAIN_PATTERN: "is not a DNS domain: labels of letters, digits and '-' joined by '.'",
    DEVICE_PATTERN: "is not a valid device name: letters, digits, '_', '.' and '-', at most 64",
    SKU_PATTERN: "is not a SONiC SKU or platform name (the name of its folder in sonic-buildimage): letters, "
                 "digits, '_', '.', '+' and '-', at most 100",
    NCCL_VERSION_PATTERN: "is not an NCCL version: write 2.x, 2.x.y or the package's 2.x.y-z, quoted "
                          "(e.g. \"2.28.3\")",
    NAME_PATTERN: f"is not a valid name: {NAME_RULE}",
    BANNER_PATTERN: "is not banner text: letters, digits, spaces and the punctuation . , : ; ! ? # * = + _ / ( ) @ & "
                    "< > | ~ ^ [ ] - (no quotes, '$', '`', '\\', braces or '%', which a config or shell would "
                    "interpret; the one brace taken is {hostname}, the switch's name), at most 20 lines of 120",
    PEER_GROUP_PATTERN: "is not a BGP peer group name: a letter, then letters, digits, '_' and '-', at most 63",
    MAC_PATTERN: "is not a unicast MAC address: six pairs of hex digits joined by ':', the first octet even "
                 "(44:38:39:ff:00:ff)",
    SNMP_TEXT_PATTERN: "is not SNMP text: one line of letters, digits, spaces and the punctuation a banner takes",
    TIMEZONE_PATTERN: "is not a time zone name: Region/City as the IANA database writes it (Etc/UTC)",
    LDAP_DN_PATTERN: "is not an LDAP distinguished name of attribute=value parts joined by ',' (dc=example,dc=com)",
    VAULT_PATTERN: "is not an Ansible variable name for a vault secret: lowercase letters, digits and '_', not "
                   "starting with a digit, at most 64",
}


def pattern_message(pattern: str, value: Any) -> str:
    """The message for a string that does not match `pattern`: the rule it breaks, in words."""
    if pattern in (TEXT_PATTERN, PRINTABLE_PATTERN):
        if isinstance(value, str) and pattern == TEXT_PATTERN and ("{" in value or "}" in value) and \
                re.fullmatch(PRINTABLE_PATTERN, value):
            return (f"{ascii(value)} contains '{{' or '}}': the deploy playbooks pass configs through Ansible's "
                    "template module, where braces start Jinja; write the text without them")
        return f"{ascii(value)} contains control, invisible or direction-changing characters: write printable " \
               "text only"
    rule = PATTERN_RULES.get(pattern)
    if rule is None:
        rule = f"does not match the pattern {pattern}"
    return f"{value!r} {rule}"


# Text keys whose values are often written as numbers (versions, names of digits): "quote it"
QUOTED_NUMBERS = frozenset({"nccl_version", "platform_version", "cluster", "name", "hostname", "rdma", "netdev"})


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return f"{value!r} ({type(value).__name__.replace('str', 'a string').replace('int', 'a number')})"


MAX_FIELD_WIDTH = 63  # a name is at most a DNS label; a wider field could only make it too long


def pattern_problem(pattern: str, fields: tuple[str, ...]) -> str | None:
    """Why a name pattern cannot be used, before anything is formatted: unknown fields,
    conversions, attribute or index access, or a width that would build a huge string."""
    try:
        parsed = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        return f"{exc}"
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in fields:
            return f"unknown field {{{name}}}; the fields are {', '.join('{' + f + '}' for f in fields)}"
        if conversion or "{" in (spec or ""):
            return f"field {{{name}}} takes a format spec only (like {{{name}:03d}})"
        widths = [int(w) for w in re.findall(r"\d+", spec or "")]
        if any(w > MAX_FIELD_WIDTH for w in widths):
            return f"a field width of {max(widths)} makes names longer than {MAX_FIELD_WIDTH} characters"
    return None


def format_all(pattern: str, values: Iterable[dict[str, int]], limit: int) -> tuple[list[str], str | None]:
    """Every name, or the first problem: a format error (whatever it raises) or a name longer
    than `limit`, found at the first name that has it."""
    names: list[str] = []
    for v in values:
        try:
            name = pattern.format(**v)
        except Exception as exc:  # noqa: BLE001 - any error of a user's format spec is a located problem
            return names, f"{type(exc).__name__}: {exc}"
        if len(name) > limit:
            return names, f"gives {name[:40]!r}..., {len(name)} characters (at most {limit})"
        names.append(name)
    return names, None
