#!/usr/bin/env python3
"""Speed benchmark (SPEC §7): localjudge against a plain judge, side by side in one run.

The workload: the first ROWS rows of ../shared/benchmarks/context_sufficiency.jsonl that
have 3–5 retrieved chunks, each given its expected response as the response under
judgement and two fixed guidelines, so that every judge applies. Same model, same
threads, one process, one loaded model:

  (a) plain: one chat completion per verdict, the same prompt text rendered with the
      model's chat template, a JSON-schema grammar {"verdict", "rationale"}, a rationale
      of at most R tokens, and no reuse between calls (the KV cache is reset before each);
      this is what pointing a RAGAS- or DeepEval-style judge at a local model gives;
  (b) localjudge with rationales (at most R tokens);
  (c) localjudge without rationales;
  (d) the floor: every distinct prompt token of the workload evaluated once, in full
      batches of --batch-size tokens each in a fresh context (the cheapest a token gets),
      plus one single-token decode step per verdict. "Distinct" means the prompt trie:
      tokens shared by a common prefix of several prompts count once.

    .venv/bin/python scripts/bench.py            # table
    .venv/bin/python scripts/bench.py --json     # one JSON object
    .venv/bin/python scripts/bench.py --rows 10 --batch-sizes 64,128,512,2048   # (c) only
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from localjudge import api  # noqa: E402
from localjudge.engine.base import Prompt, VerdictRequest  # noqa: E402
from localjudge.engine.llama import LlamaBackend, physical_cores  # noqa: E402
from localjudge.engine.quiet import quiet_stderr  # noqa: E402
from localjudge.judges import JudgeOptions, select  # noqa: E402
from localjudge.models import resolve_for_eval  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402

BENCHMARKS = REPO.parent / "shared" / "benchmarks"
GUIDELINES = ["Answer in English.", "Keep the answer short."]
FILLER = (
    "The committee reviewed the annual report on regional water supply and noted that "
    "reservoir levels, pipe maintenance and metering all improved over the year."
)


def workload_rows(rows: int) -> list[tuple[int, dict[str, Any]]]:
    """The fixed workload as input rows, with their line numbers in the source file."""
    out: list[tuple[int, dict[str, Any]]] = []
    path = BENCHMARKS / "context_sufficiency.jsonl"
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            obj = json.loads(line)
            if not 3 <= len(obj["retrieved_context"]) <= 5:
                continue
            obj = {
                "request": obj["request"],
                "response": obj["expected_response"],
                "retrieved_context": obj["retrieved_context"],
                "expected_response": obj["expected_response"],
                "expected_retrieved_context": [
                    {"doc_uri": c["doc_uri"]} for c in obj["retrieved_context"][:1]
                ],
                "guidelines": GUIDELINES,
            }
            out.append((line_no, obj))
            if len(out) == rows:
                break
    return out


def workload(rows: int) -> list[Record]:
    """The fixed workload (see the module docstring)."""
    return [validate_row(line_no, obj) for line_no, obj in workload_rows(rows)]


def all_requests(records: Sequence[Record], rationale: bool) -> list[list[VerdictRequest]]:
    """Every verdict request of the workload, per row, exactly as `eval` asks them."""
    options = JudgeOptions(rationale=rationale)
    judges = select(None)
    per_row = []
    for record in records:
        reqs: list[VerdictRequest] = []
        for judge in judges:
            if not judge.missing(record):
                reqs.extend(judge.requests(record, options))
        per_row.append(reqs)
    return per_row


def distinct_stream(sequences: list[tuple[int, ...]]) -> list[int]:
    """The distinct tokens of a set of token sequences, in the order a depth-first walk of
    their prefix trie meets them (tokens of a shared prefix appear once)."""
    stream: list[int] = []
    previous: tuple[int, ...] = ()
    for seq in sorted(set(sequences)):
        common = 0
        for a, b in zip(previous, seq, strict=False):
            if a != b:
                break
            common += 1
        stream.extend(seq[common:])
        previous = seq
    return stream


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_localjudge(
    backend: LlamaBackend, records: Sequence[Record], rationale: bool
) -> dict[str, Any]:
    backend.reset()  # start cold: nothing cached from an earlier pass
    before = backend.stats.as_dict()
    started = time.perf_counter()
    run = api.evaluate(records, backend, select(None), JudgeOptions(rationale=rationale))
    seconds = time.perf_counter() - started
    after = backend.stats.as_dict()
    delta = {k: after[k] - before[k] for k in after}
    return {
        "seconds": seconds,
        "verdicts": delta["verdicts"],
        "verdicts_per_second": delta["verdicts"] / seconds,
        "prompt_tokens_evaluated": delta["evaluated_tokens"],
        "generated_tokens": delta["generated_tokens"],
        "results": run.results,
    }


def render_plain(backend: LlamaBackend, prompt: Prompt) -> str:
    """The same prompt as one string in the model's chat template (what a plain judge sends)."""
    t = backend.template
    return (
        t.system_start
        + prompt.system
        + t.system_end_user_start
        + prompt.user_text()
        + t.user_end_assistant_start
    )


def run_plain(
    backend: LlamaBackend, per_row: Sequence[Sequence[VerdictRequest]], rationale_tokens: int
) -> dict[str, Any]:
    from llama_cpp.llama_grammar import LlamaGrammar

    llm = backend._llm
    grammars: dict[tuple[str, ...], Any] = {}
    verdicts = evaluated = generated = 0
    labels_out: list[str | None] = []
    started = time.perf_counter()
    with quiet_stderr():
        for reqs in per_row:
            for req in reqs:
                if req.labels not in grammars:
                    schema = {
                        "type": "object",
                        "properties": {
                            "verdict": {"type": "string", "enum": list(req.labels)},
                            "rationale": {"type": "string"},
                        },
                        "required": ["verdict", "rationale"],
                    }
                    grammars[req.labels] = LlamaGrammar.from_json_schema(
                        json.dumps(schema), verbose=False
                    )
                text = render_plain(backend, req.prompt)
                tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
                llm.reset()  # no reuse between calls
                out = llm.create_completion(
                    tokens,
                    max_tokens=rationale_tokens + 16,
                    temperature=0.0,
                    grammar=grammars[req.labels],
                    seed=0,
                )
                verdicts += 1
                evaluated += len(tokens)
                generated += int(out["usage"]["completion_tokens"])
                try:
                    labels_out.append(json.loads(out["choices"][0]["text"]).get("verdict"))
                except ValueError:
                    labels_out.append(None)  # cut at max_tokens: unparseable
    seconds = time.perf_counter() - started
    backend.reset()
    return {
        "seconds": seconds,
        "verdicts": verdicts,
        "verdicts_per_second": verdicts / seconds,
        "prompt_tokens_evaluated": evaluated,
        "generated_tokens": generated,
        "unparseable": sum(1 for x in labels_out if x is None),
    }


def run_floor(backend: LlamaBackend, per_row: Sequence[Sequence[VerdictRequest]]) -> dict[str, Any]:
    """Evaluate every distinct token once in full batches, then time single-token steps."""
    llm = backend._llm
    seqs = []
    for reqs in per_row:
        for req in reqs:
            seqs.append(tuple(t for seg in backend.segments(req.prompt) for t in seg.tokens))
    stream = distinct_stream(seqs)
    distinct = len(stream)
    verdicts = len(seqs)
    # Full batches in a fresh context each: the cheapest way to evaluate a token here.
    window = backend.batch_size
    with quiet_stderr():
        started = time.perf_counter()
        for start in range(0, len(stream), window):
            llm.n_tokens = 0
            llm.eval(stream[start : start + window])
        eval_seconds = time.perf_counter() - started
        llm.n_tokens = 0
        llm.eval(stream[:256])
        steps = 32
        started = time.perf_counter()
        for i in range(steps):
            llm.eval([stream[256 + i]])
        step_seconds = (time.perf_counter() - started) / steps
    backend.reset()
    seconds = eval_seconds + verdicts * step_seconds
    return {
        "seconds": seconds,
        "verdicts": verdicts,
        "verdicts_per_second": verdicts / seconds,
        "prompt_tokens_evaluated": distinct,
        "prompt_tokens_total": sum(len(s) for s in seqs),
        "prompt_eval_tokens_per_second": len(stream) / eval_seconds,
        "step_seconds": step_seconds,
        "generated_tokens": 0,
    }


def synthetic_row(index: int, chunks: int, words: int) -> Record:
    """A made-up row: `chunks` chunks of about `words` words each (for the scaling table)."""
    filler = FILLER.split()
    text = " ".join(filler[(index + k) % len(filler)] for k in range(words))
    obj = {
        "request": f"What did the committee conclude about the water supply in year {index}?",
        "response": "The committee concluded that the water supply improved.",
        "retrieved_context": [
            {"content": f"Report {index}.{c}: {text}", "doc_uri": f"doc://{index}/{c}"}
            for c in range(chunks)
        ],
        "expected_response": "It improved.",
        "guidelines": GUIDELINES,
    }
    return validate_row(index + 1, obj)


def scaling(backend: LlamaBackend, rows: int) -> list[dict[str, Any]]:
    """Seconds per row (no rationale) as chunks per row and chunk length grow."""
    table = []
    for chunks in (1, 3, 5):
        for words in (50, 150, 300):
            records = [synthetic_row(i, chunks, words) for i in range(rows)]
            result = run_localjudge(backend, records, rationale=False)
            result.pop("results")
            table.append(
                {
                    "chunks": chunks,
                    "chunk_words": words,
                    "rows": rows,
                    "seconds_per_row": result["seconds"] / rows,
                    "verdicts_per_row": result["verdicts"] / rows,
                    "evaluated_tokens_per_row": result["prompt_tokens_evaluated"] / rows,
                }
            )
    return table


def batch_sizes(args: argparse.Namespace, model: Any, records: Sequence[Record]) -> int:
    """(c), localjudge without rationales, once per batch size, each with a fresh model."""
    table = []
    for size in (int(x) for x in args.batch_sizes.split(",")):
        backend = LlamaBackend(
            model.path,
            template=model.entry.template if model.entry else None,
            n_ctx=args.ctx,
            threads=args.threads,
            batch_size=size,
        )
        try:
            result = run_localjudge(backend, records, rationale=False)
        finally:
            backend.close()
        labels = [
            {k: v for k, v in r.items() if k.endswith(("/rating", "/ratings"))}
            for r in result.pop("results")
        ]
        table.append({"batch_size": size, **result, "verdicts_digest": _digest(labels)})
    if args.json:
        print(json.dumps({"model": model.id, "rows": len(records), "runs": table}, indent=2))
    else:
        print("| batch size | seconds | verdicts/s | evaluated tokens | verdicts digest |")
        print("|---:|---:|---:|---:|---|")
        for t in table:
            print(
                f"| {t['batch_size']} | {t['seconds']:.1f} | {t['verdicts_per_second']:.3f} | "
                f"{t['prompt_tokens_evaluated']} | {t['verdicts_digest']} |"
            )
    return 0


def _digest(value: Any) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:12]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="catalogue id or GGUF path (default model)")
    parser.add_argument("--rows", type=int, default=30)
    parser.add_argument("--threads", type=int, default=physical_cores())
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--rationale-tokens", type=int, default=None)
    parser.add_argument("--skip-plain", action="store_true", help="omit (a), the slowest part")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="instead: seconds per row as chunks and chunk length grow (synthetic rows)",
    )
    parser.add_argument(
        "--batch-sizes",
        metavar="LIST",
        help="instead: (c) only, once per llama.cpp batch size in LIST (e.g. 64,512,2048)",
    )
    args = parser.parse_args(argv)

    model = resolve_for_eval(args.model)
    records = workload(args.rows)
    if args.batch_sizes:
        return batch_sizes(args, model, records)
    kwargs: dict[str, Any] = {}
    if args.rationale_tokens is not None:
        kwargs["rationale_tokens"] = args.rationale_tokens
    backend = LlamaBackend(
        model.path,
        template=model.entry.template if model.entry else None,
        n_ctx=args.ctx,
        threads=args.threads,
        batch_size=args.batch_size,
        **kwargs,
    )
    if args.scaling:
        table = scaling(backend, rows=3)
        if args.json:
            print(json.dumps(table, indent=2))
        else:
            print("| chunks | words/chunk | s/row | verdicts/row | evaluated tokens/row |")
            print("|---:|---:|---:|---:|---:|")
            for t in table:
                print(
                    f"| {t['chunks']} | {t['chunk_words']} | {t['seconds_per_row']:.2f} | "
                    f"{t['verdicts_per_row']:.0f} | {t['evaluated_tokens_per_row']:.0f} |"
                )
        backend.close()
        return 0
    per_row = all_requests(records, rationale=False)
    chunks = [len(r.retrieved_context or ()) for r in records]
    report: dict[str, Any] = {
        "model": model.id,
        "model_file_bytes": model.path.stat().st_size,
        "threads": backend.threads,
        "batch_size": args.batch_size,
        "rows": len(records),
        "chunks_per_row": {
            "min": min(chunks),
            "max": max(chunks),
            "mean": sum(chunks) / len(chunks),
        },
        "rationale_tokens": backend.rationale_tokens,
    }
    floor = run_floor(backend, per_row)
    no_rat = run_localjudge(backend, records, rationale=False)
    with_rat = run_localjudge(backend, records, rationale=True)
    same = all(
        {k: v for k, v in a.items() if not k.endswith("/rationale") and "rationales" not in k}
        == {k: v for k, v in b.items() if not k.endswith("/rationale") and "rationales" not in k}
        for a, b in zip(no_rat.pop("results"), with_rat.pop("results"), strict=True)
    )
    report["floor"] = floor
    report["localjudge_no_rationale"] = no_rat
    report["localjudge_rationale"] = with_rat
    report["verdicts_same_with_and_without_rationale"] = same
    if not args.skip_plain:
        plain = run_plain(backend, per_row, backend.rationale_tokens)
        report["plain"] = plain
        report["speedup_vs_plain"] = no_rat["verdicts_per_second"] / plain["verdicts_per_second"]
        report["speedup_vs_plain_with_rationale"] = (
            with_rat["verdicts_per_second"] / plain["verdicts_per_second"]
        )
    report["ratio_to_floor"] = no_rat["seconds"] / floor["seconds"]
    report["peak_rss_bytes"] = peak_rss()
    report["peak_rss_over_model_bytes"] = report["peak_rss_bytes"] - report["model_file_bytes"]
    backend.close()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render(report))
    return 0


def render(r: dict[str, Any]) -> str:
    lines = [
        f"model {r['model']}, {r['threads']} threads, {r['rows']} rows, chunks/row "
        f"{r['chunks_per_row']['min']}-{r['chunks_per_row']['max']}, rationale <= "
        f"{r['rationale_tokens']} tokens",
        "",
        f"{'run':<28}{'verdicts':>9}{'seconds':>10}{'verdicts/s':>12}{'prompt tok':>12}"
        f"{'generated':>11}",
    ]
    for key, name in (
        ("plain", "(a) plain judge"),
        ("localjudge_rationale", "(b) localjudge, rationale"),
        ("localjudge_no_rationale", "(c) localjudge, no rationale"),
        ("floor", "(d) floor"),
    ):
        if key in r:
            x = r[key]
            lines.append(
                f"{name:<28}{x['verdicts']:>9}{x['seconds']:>10.1f}{x['verdicts_per_second']:>12.3f}"
                f"{x['prompt_tokens_evaluated']:>12}{x['generated_tokens']:>11}"
            )
    f = r["floor"]
    lines += [
        "",
        f"prompt tokens as asked: {f['prompt_tokens_total']}, distinct: "
        f"{f['prompt_tokens_evaluated']}; eval {f['prompt_eval_tokens_per_second']:.1f} tok/s, "
        f"one step {f['step_seconds'] * 1000:.1f} ms",
    ]
    if "speedup_vs_plain" in r:
        lines.append(
            f"speedup vs plain: {r['speedup_vs_plain']:.2f}x without rationale, "
            f"{r['speedup_vs_plain_with_rationale']:.2f}x with"
        )
    lines.append(f"ratio to floor (no rationale): {r['ratio_to_floor']:.3f}")
    lines.append(
        f"peak RSS {r['peak_rss_bytes'] / 2**20:.0f} MiB = model file + "
        f"{r['peak_rss_over_model_bytes'] / 2**20:.0f} MiB"
    )
    lines.append(
        f"verdicts identical with and without rationale: "
        f"{r['verdicts_same_with_and_without_rationale']}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
