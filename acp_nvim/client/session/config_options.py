"""An agent's session config options as a person reads them and `:AcpConfig` takes them: the name of an
option's current value, the words it accepts, a select's choices flattened (a grouped one "Group / Name")."""

from __future__ import annotations

from acp_nvim.protocol import schema as s


def config_value(option: s.SessionConfigOption) -> str | bool:
    return option.current_value


def config_value_name(option: s.SessionConfigOption) -> str:
    """The name of the option's current value, as a person reads it (its value when it has none)."""
    if isinstance(option, s.SessionConfigOptionBoolean):
        return "on" if option.current_value else "off"
    for choice in _select_choices(option):
        if choice.value == option.current_value:
            return choice.name
    return option.current_value


def config_value_words(option: s.SessionConfigOption) -> list[str]:
    """What `:AcpConfig <option>` accepts and completes: a boolean's words, else every choice's value
    (grouped ones too)."""
    if isinstance(option, s.SessionConfigOptionBoolean):
        return ["true", "false", "toggle"]
    return [choice.value for choice in _select_choices(option)]


def select_choice_names(option: s.SessionConfigOptionSelect) -> list[tuple[str, str, str | None]]:
    """(value, name, description) of every choice of a select option, a grouped one named "Group / Name"."""
    out: list[tuple[str, str, str | None]] = []
    for entry in option.options:
        if isinstance(entry, s.SessionConfigSelectGroup):
            out.extend((c.value, f"{entry.name} / {c.name}", c.description) for c in entry.options)
        else:
            out.append((entry.value, entry.name, entry.description))
    return out


def _select_choices(option: s.SessionConfigOptionSelect) -> list[s.SessionConfigSelectOption]:
    choices: list[s.SessionConfigSelectOption] = []
    for entry in option.options:
        if isinstance(entry, s.SessionConfigSelectGroup):
            choices.extend(entry.options)
        else:
            choices.append(entry)
    return choices
