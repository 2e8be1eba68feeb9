"""Chat templates: the control text around the system message, the user message and the
answer. Only the control text is tokenised with special tokens; everything else is plain
text, so a special token written inside a row stays text (it cannot close a turn)."""

from __future__ import annotations

from dataclasses import dataclass

from localjudge.errors import ModelError


@dataclass(frozen=True)
class ChatTemplate:
    name: str
    system_start: str
    system_end_user_start: str
    user_end_assistant_start: str


TEMPLATES: dict[str, ChatTemplate] = {
    "chatml": ChatTemplate(
        "chatml",
        "<|im_start|>system\n",
        "<|im_end|>\n<|im_start|>user\n",
        "<|im_end|>\n<|im_start|>assistant\n",
    ),
    "llama3": ChatTemplate(
        "llama3",
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n",
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n",
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    ),
    "phi3": ChatTemplate(
        "phi3",
        "<|system|>\n",
        "<|end|>\n<|user|>\n",
        "<|end|>\n<|assistant|>\n",
    ),
}


def template_for(name: str | None, gguf_chat_template: str | None) -> ChatTemplate:
    """The named template, else one recognised from the GGUF's own chat template."""
    if name:
        try:
            return TEMPLATES[name]
        except KeyError:
            known = ", ".join(TEMPLATES)
            raise ModelError(f"unknown chat template {name!r} (known: {known})") from None
    text = gguf_chat_template or ""
    if "<|im_start|>" in text:
        return TEMPLATES["chatml"]
    if "<|start_header_id|>" in text:
        return TEMPLATES["llama3"]
    if "<|assistant|>" in text:
        return TEMPLATES["phi3"]
    raise ModelError(
        "cannot tell this model's chat template (supported: chatml, llama3, phi3); "
        "add the model to a catalogue with `template = ...`"
    )
