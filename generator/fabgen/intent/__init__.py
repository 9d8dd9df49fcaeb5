"""Fabric intent: decisions that more than one target reads, made once per fabric.

Platform modules translate intent into their dialect and decide nothing that another
platform or the hosts must agree with. Intent modules import nothing from platforms.
"""

from __future__ import annotations


def secret_ref(env: str) -> str:
    """How a secret appears in rendered files: an Ansible lookup of the environment variable,
    resolved by the deploy playbooks (eos_config and template render their sources)."""
    return "{{ lookup('ansible.builtin.env', '" + env + "') }}"
