"""Adapters for memory libraries people deploy, each an optional extra and an arm plug-in.

Each adapter is declared in armbench's own `armbench.arms` entry-point group
(pyproject.toml) with its default options in `arms/conf/arm/<kind>.yaml`, and imports
its library only when the arm is built, so the default install stays lean. The
library's own LLM and embedding calls go through the run's accounting proxy
(`ArmServices.llm_proxy`, bench/providers/proxy.py). See docs/libraries.md.
"""
