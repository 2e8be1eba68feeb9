"""The llama.cpp backend (llama-cpp-python).

How a verdict is computed:

* The prompt is cut into segments: chat-template control text (tokenised with special
  tokens), the fixed system text, each user part, and the answer's start. Each segment is
  tokenised on its own and evaluated as its own llama_decode batch(es) at fixed positions.
* Prompt reuse (SPEC §7): the KV cache holds a stack of evaluated segments. A request that
  shares its first k segments with the stack truncates the cache to them and evaluates
  only the rest. Requests are ordered lexicographically by their segments, which is a
  depth-first walk of the prompt trie, so every shared prefix is evaluated once. With the
  cache off, every request starts from an empty cache and evaluates the same segments in
  the same batches at the same positions, so the logits, and the results, are the same
  bit for bit.
* The verdict: the grammar `root ::= label_1 | label_2 | ...` allows only the labels. The
  labels' first tokens are distinct, so after the first token the rest of a label is
  forced, and the grammar-constrained distribution over labels is exactly the softmax of
  the logits restricted to those first tokens. That distribution is read at the verdict
  position after one decode: no token is generated for a verdict without rationale.
* The rationale, when asked for, follows the verdict inside the same JSON object, as a
  JSON string under the grammar `string ::= char* "\""` where char is any token with no
  quote, backslash or control byte: greedy, ending at the closing quote, at the end of
  its first sentence, or after `rationale_tokens` tokens, whichever comes first.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from localjudge.engine.base import (
    RATIONALE_PREFIX,
    BackendStats,
    Prompt,
    Verdict,
    VerdictRequest,
    choose_label,
)
from localjudge.engine.quiet import quiet_stderr
from localjudge.engine.templates import ChatTemplate, template_for
from localjudge.errors import ModelError

TRUNCATION_MARKER = "\n[... truncated by localjudge ...]\n"
MIN_KEPT_TOKENS = 16

Tokens = tuple[int, ...]


def physical_cores() -> int:
    """Physical CPU cores (llama.cpp runs best with one thread per core)."""
    seen: set[tuple[str, str]] = set()
    phys = core = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "physical id":
                phys = value.strip()
            elif key == "core id":
                core = value.strip()
                seen.add((phys, core))
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count() or 1
    return max(1, min(len(seen) or available, available))


# llama.cpp's extra buffer types hold weights repacked for a faster CPU kernel. On CPUs with
# Intel AMX (Sapphire Rapids and later Xeons) a build with GGML_NATIVE (llama-cpp-python's
# default) puts the weights in its AMX buffer, whose matrix multiply crashes the process on
# the first batch of more than a few tokens (seen here with 0.3.36 on the default Qwen
# file; llama.cpp issues #11115 and #20824 report crashes in the same code). Off on such a
# CPU, on elsewhere (the repacked kernels are faster); LOCALJUDGE_EXTRA_BUFFERS=0 or 1
# decides instead.
EXTRA_BUFFERS_ENV = "LOCALJUDGE_EXTRA_BUFFERS"


def cpu_flags() -> frozenset[str]:
    """The first CPU's feature flags from /proc/cpuinfo (empty where there is none)."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "flags":
                return frozenset(value.split())
    return frozenset()


def default_extra_buffers(flags: frozenset[str] | None = None) -> bool:
    """Whether llama.cpp may use its extra (repacked-weight) buffer types: the
    EXTRA_BUFFERS_ENV setting if it is 0 or 1, else False on a CPU with AMX, else True."""
    setting = os.environ.get(EXTRA_BUFFERS_ENV, "").strip()
    if setting in ("0", "1"):
        return setting == "1"
    if setting:
        raise ModelError(f"{EXTRA_BUFFERS_ENV} must be 0 or 1, not {setting!r}")
    flags = cpu_flags() if flags is None else flags
    return not any(f.startswith("amx") for f in flags)


@contextlib.contextmanager
def extra_buffers_set(extra_buffers: bool) -> Iterator[None]:
    """While a Llama is built: its model parameters with use_extra_bufts set. Llama takes
    no argument for it, so the defaults it starts from are wrapped for the call."""
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params

    def params() -> Any:
        out = original()
        out.use_extra_bufts = extra_buffers
        return out

    lib.llama_model_default_params = params
    try:
        yield
    finally:
        lib.llama_model_default_params = original


class _Segment:
    """One tokenised piece of a prompt. `data` segments may be truncated."""

    __slots__ = ("tokens", "data")

    def __init__(self, tokens: Tokens, data: bool) -> None:
        self.tokens = tokens
        self.data = data


class LlamaBackend:
    """Verdicts from a GGUF model through llama.cpp. See the module docstring."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        template: str | None = None,
        n_ctx: int = 4096,
        threads: int | None = None,
        batch_size: int = 512,
        seed: int = 0,
        prompt_cache: bool = True,
        rationale_tokens: int = 48,
        verbose: bool = False,
        flash_attn: bool = True,
        extra_buffers: bool | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self.extra_buffers = default_extra_buffers() if extra_buffers is None else extra_buffers
        self.flash_attn = flash_attn
        self.n_ctx = n_ctx
        self.threads = threads or physical_cores()
        self.batch_size = batch_size
        self.seed = seed
        self.prompt_cache = prompt_cache
        self.rationale_tokens = rationale_tokens
        self.verbose = verbose
        self.stats = BackendStats()
        self._llm = self._load()
        metadata: dict[str, str] = dict(getattr(self._llm, "metadata", {}) or {})
        self.template: ChatTemplate = template_for(
            template, metadata.get("tokenizer.chat_template")
        )
        self._add_bos = metadata.get("tokenizer.ggml.add_bos_token") == "true" and (
            self.template.name != "llama3"
        )
        self._n_vocab: int = int(self._llm.n_vocab())
        self._ops: list[tuple[int, Tokens]] = []  # see _evaluate
        self._previous: Tokens = ()
        self._token_cache: dict[tuple[str, bool], Tokens] = {}
        self._label_cache: dict[tuple[str, ...], list[int]] = {}
        self._string_mask: npt.NDArray[np.bool_] | None = None
        self._quote_token: int | None = None

    # -- loading -----------------------------------------------------------------------

    def _load(self) -> Any:
        from llama_cpp import Llama  # imported here: loading the library is slow

        try:
            with quiet_stderr(not self.verbose), extra_buffers_set(self.extra_buffers):
                return Llama(
                    model_path=str(self.model_path),
                    n_ctx=self.n_ctx,
                    n_threads=self.threads,
                    n_threads_batch=self.threads,
                    n_batch=self.batch_size,
                    n_ubatch=self.batch_size,
                    seed=self.seed,
                    logits_all=False,
                    flash_attn=self.flash_attn,
                    verbose=self.verbose,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if "context" in reason.lower():
                raise ModelError(
                    f"{self.model_path.name}: cannot allocate a context of {self.n_ctx} tokens "
                    f"({reason}); try a smaller --ctx"
                ) from None
            raise ModelError(
                f"{self.model_path.name}: llama.cpp cannot load it ({reason})"
            ) from None

    def close(self) -> None:
        close = getattr(self._llm, "close", None)
        if close is not None:
            close()

    def describe(self) -> dict[str, object]:
        from llama_cpp import __version__ as llama_cpp_version

        return {
            "backend": "llama.cpp",
            "llama_cpp_python": llama_cpp_version,
            "n_ctx": self.n_ctx,
            "threads": self.threads,
            "batch_size": self.batch_size,
            "seed": self.seed,
            "template": self.template.name,
            "rationale_tokens": self.rationale_tokens,
            "extra_buffers": self.extra_buffers,
        }

    # -- tokens --------------------------------------------------------------------------

    def tokenize(self, text: str, special: bool = False) -> Tokens:
        key = (text, special)
        cached = self._token_cache.get(key)
        if cached is None:
            cached = tuple(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=special))
            if len(self._token_cache) > 4096:
                self._token_cache.clear()
            self._token_cache[key] = cached
        return cached

    def segments(self, prompt: Prompt) -> list[_Segment]:
        """The prompt as tokenised segments, in order (see the module docstring)."""
        t = self.template
        bos: Tokens = (int(self._llm.token_bos()),) if self._add_bos else ()
        segs = [
            _Segment(bos + self.tokenize(t.system_start, special=True), False),
            _Segment(self.tokenize(prompt.system), False),
            _Segment(self.tokenize(t.system_end_user_start, special=True), False),
        ]
        segs.extend(_Segment(self.tokenize(p.text), p.data) for p in prompt.user)
        segs.append(_Segment(self.tokenize(t.user_end_assistant_start, special=True), False))
        segs.append(_Segment(self.tokenize(prompt.answer_prefix), False))
        return segs

    def _label_tokens(self, labels: tuple[str, ...]) -> list[int]:
        first = self._label_cache.get(labels)
        if first is None:
            first = [self.tokenize(label)[0] for label in labels]
            if len(set(first)) != len(first):
                raise ModelError(
                    f"this model's tokenizer cannot tell the labels {labels} apart by their "
                    "first token"
                )
            self._label_cache[labels] = first
        return first

    def _fit(self, segs: list[_Segment], reserve: int) -> tuple[list[Tokens], bool]:
        """Truncate the longest data segments (keeping their head) until the prompt fits."""
        budget = self.n_ctx - reserve
        tokens = [s.tokens for s in segs]
        total = sum(len(t) for t in tokens)
        if total <= budget:
            return tokens, False
        marker = self.tokenize(TRUNCATION_MARKER)
        data_idx = [i for i, s in enumerate(segs) if s.data]
        while total > budget and data_idx:
            i = max(data_idx, key=lambda j: (len(tokens[j]), -j))
            current = len(tokens[i])
            keep = max(MIN_KEPT_TOKENS, current - (total - budget) - len(marker))
            if keep + len(marker) >= current:
                data_idx.remove(i)
                continue
            tokens[i] = tokens[i][:keep] + marker
            total += len(tokens[i]) - current
            data_idx.remove(i)
        if total > budget:
            raise _PromptTooLong(total, budget)
        return tokens, True

    # -- evaluation ------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget everything cached (the next verdict starts from an empty KV cache)."""
        self._ops = []
        self._previous = ()
        self._llm.n_tokens = 0

    def judge(self, requests: Sequence[VerdictRequest]) -> list[Verdict]:
        prepared: list[tuple[int, Tokens | None, int, bool, str | None]] = []
        for i, req in enumerate(requests):
            reserve = (self.rationale_tokens + 16) if req.rationale else 2
            try:
                segs, truncated = self._fit(self.segments(req.prompt), reserve)
                root = sum(len(s) for s in segs[:_ROOT_SEGMENTS])
                flat = tuple(t for seg in segs for t in seg)
                prepared.append((i, flat, root, truncated, None))
            except _PromptTooLong as exc:
                prepared.append((i, None, 0, True, str(exc)))
        out: list[Verdict | None] = [None] * len(requests)
        # Lexicographic order of the token sequences = a depth-first walk of the prompt trie.
        order = sorted((p for p in prepared if p[1] is not None), key=lambda p: (p[1] or (), p[0]))
        # Each call (one row) starts from the root (the system text): what a row's verdicts
        # compute never depends on earlier rows, so a resumed run gives the same bytes.
        self._previous = ()
        with quiet_stderr(not self.verbose):
            for i, tokens, root, truncated, _ in order:
                assert tokens is not None
                out[i] = self._one(requests[i], tokens, root, truncated)
        for i, tokens, _, _, error in prepared:
            if tokens is None:
                out[i] = Verdict.failed(error or "prompt too long", truncated=True)
        self.stats.verdicts += len(requests)
        return [v for v in out if v is not None]

    def _one(self, req: VerdictRequest, tokens: Tokens, root: int, truncated: bool) -> Verdict:
        try:
            self.stats.prompt_tokens += len(tokens)
            logits = self._evaluate(tokens, root)
            label_ids = self._label_tokens(req.labels)
            chosen_logits = logits[label_ids].astype(np.float64)
            probs_arr = np.exp(chosen_logits - chosen_logits.max())
            probs_arr /= probs_arr.sum()
            probs = {lab: float(p) for lab, p in zip(req.labels, probs_arr, strict=True)}
            label = choose_label(probs, req.labels, req.threshold)
            rationale = self._rationale(label, len(tokens)) if req.rationale else None
            return Verdict(
                label=label,
                probability=probs[label],
                probabilities=probs,
                rationale=rationale,
                truncated=truncated,
            )
        except RuntimeError as exc:  # llama_decode failed: the cache state is unknown
            self.reset()
            return Verdict.failed(f"model error: {exc}", truncated=truncated)

    def _evaluate(self, tokens: Tokens, root: int) -> npt.NDArray[np.float32]:
        """Bring the KV cache to `tokens` and return the logits after the last one.

        The work is a list of ops (start position, chunk): each chunk is evaluated as one
        llama_decode call at its start position, after cutting the cache back to it. The
        ops are the same with the prompt cache on or off: with it on, the ops that built a
        shared prefix are kept and only the new one runs; with it off, every op is replayed
        from an empty cache. Same batches at the same positions give the same logits.
        """
        if tokens[:root] != self._root_tokens():
            self._ops = [(0, tokens[:root])]
            if self.prompt_cache:
                self._llm.n_tokens = 0
                self._decode(tokens[:root])
        keep = _common_prefix(self._previous or tokens[:root], tokens)
        keep = max(root, min(keep, len(tokens) - 1))  # at least one token: its logits
        while self._ops and self._ops[-1][0] >= keep:
            self._ops.pop()
        self._ops.append((keep, tokens[keep:]))
        self._previous = tokens
        if self.prompt_cache:
            self._llm.n_tokens = keep
            self._decode(tokens[keep:])
        else:
            self._llm.n_tokens = 0
            for n, (start, chunk) in enumerate(self._ops):
                self._llm.n_tokens = start
                upto = self._ops[n + 1][0] if n + 1 < len(self._ops) else start + len(chunk)
                self._decode(chunk)
                self._llm.n_tokens = upto
        return self._logits()

    def _root_tokens(self) -> Tokens:
        return self._ops[0][1] if self._ops else ()

    def _decode(self, chunk: Sequence[int]) -> None:
        if self._llm.n_tokens + len(chunk) > self.n_ctx:
            raise RuntimeError(f"context full ({self.n_ctx} tokens)")
        self._llm.eval(list(chunk))
        self.stats.evaluated_tokens += len(chunk)

    def _logits(self) -> npt.NDArray[np.float32]:
        import llama_cpp

        ptr = llama_cpp.llama_get_logits_ith(self._llm._ctx.ctx, -1)
        logits: npt.NDArray[np.float32] = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,))
        return logits.copy()

    # -- rationale -----------------------------------------------------------------------

    def _rationale(self, label: str, prompt_length: int) -> str:
        """Generate after the prompt; the next verdict cuts all of it away again."""
        mask, quote = self._string_grammar()
        self._llm.n_tokens = prompt_length
        self._decode(self.tokenize(label) + self.tokenize(RATIONALE_PREFIX))
        generated: list[int] = []
        for _ in range(self.rationale_tokens):
            logits = self._logits()
            masked = np.where(mask, logits, -np.inf)
            token = int(np.argmax(masked))
            if token == quote:
                break
            generated.append(token)
            self.stats.generated_tokens += 1
            piece: bytes = self._llm.detokenize([token], special=False)
            # One sentence is asked for: stop at its end instead of paying for more.
            if len(generated) >= 4 and piece.rstrip().endswith((b".", b"!", b"?")):
                break
            self._decode((token,))
            self.stats.evaluated_tokens -= 1
        raw: bytes = self._llm.detokenize(generated, special=False)
        return raw.decode("utf-8", errors="replace").strip()

    def _string_grammar(self) -> tuple[npt.NDArray[np.bool_], int]:
        """Token mask for the body of a JSON string, plus the closing-quote token."""
        if self._string_mask is None or self._quote_token is None:
            quote = self.tokenize('"')
            if len(quote) != 1:
                raise ModelError("this model's tokenizer has no single-token quote")
            mask = np.zeros(self._n_vocab, dtype=np.bool_)
            for token in range(self._n_vocab):
                piece: bytes = self._llm.detokenize([token], special=False)
                if piece and b'"' not in piece and b"\\" not in piece and min(piece) >= 0x20:
                    mask[token] = True
            mask[quote[0]] = True
            self._string_mask, self._quote_token = mask, quote[0]
        return self._string_mask, self._quote_token


# The chat template's system start, the system text and the separator before the user
# message: the root every prompt shares.
_ROOT_SEGMENTS = 3


def _common_prefix(a: Tokens, b: Tokens) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class _PromptTooLong(Exception):
    def __init__(self, total: int, budget: int) -> None:
        super().__init__(
            f"prompt too long even after truncation: {total} tokens > {budget} available "
            "(raise --ctx)"
        )


@contextlib.contextmanager
def loaded(backend: LlamaBackend) -> Iterator[LlamaBackend]:
    try:
        yield backend
    finally:
        backend.close()
