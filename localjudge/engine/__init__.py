"""The model backend: a small protocol, the llama.cpp implementation and a scripted fake."""

from localjudge.engine.base import Backend, Part, Prompt, Verdict, VerdictRequest

__all__ = ["Backend", "Part", "Prompt", "Verdict", "VerdictRequest"]
