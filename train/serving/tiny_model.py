"""Build a random tiny chat model offline: `python -m train.serving.tiny_model OUT_DIR`.

No pip package ships a tiny causal LM and the machines have no model hub, so the model
is made by code: a byte-level BPE tokenizer (any text encodes) with the chat and
tool-call special tokens vLLM's `hermes` tool parser looks up, a Qwen-style chat
template that renders tools, and a random `Qwen2Config` model. The sizes are the
smallest the vLLM CPU attention kernel accepts (head_dim 64; 16 is rejected); the
context is long because harness system prompts are long under a tiny vocabulary.

Runs in the vLLM virtualenv (it needs torch, transformers and tokenizers); the trainer
can load the same folder. The output is deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
)
MARKER = "tiny-model.json"

CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n"
    "{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}\n{% endif %}"
    "Tools:{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}\n"
    'Call a tool as <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>\n'
    "{% elif messages[0]['role'] == 'system' %}"
    "<|im_start|>system\n{{ messages[0]['content'] }}<|im_end|>\n{% endif %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'tool' %}"
    "<|im_start|>user\n<tool_response>\n{{ message['content'] }}\n</tool_response><|im_end|>\n"
    "{% elif message['role'] != 'system' %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% elif message['content'] %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{% for call in message.get('tool_calls') or [] %}\n"
    '<tool_call>\n{"name": "{{ call[\'function\'][\'name\'] }}", "arguments": '
    "{% if call['function']['arguments'] is string %}{{ call['function']['arguments'] }}"
    "{% else %}{{ call['function']['arguments'] | tojson }}{% endif %}}\n</tool_call>"
    "{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
GENERATION_PROMPT = "<|im_start|>assistant\n"

_TRAINING_TEXT = (
    "You are a coding agent. Run the tests in /workspace and fix the failing code.",
    '{"name": "bash", "arguments": {"command": "ls -la /workspace && python3 -m pytest"}}',
    "def add(a, b):\n    return a + b\n\nimport os, sys, json\nprint(json.dumps({}))\n",
    "The quick brown fox jumps over the lazy dog. 0123456789 !@#$%^&*()[]{}<>",
)


def build(
    out_dir: Path,
    *,
    seed: int = 0,
    vocab_size: int = 512,
    layers: int = 2,
    script: tuple[str, ...] = (),
) -> Path:
    """Write tokenizer + weights to `out_dir`; a no-op when already built alike.

    Without `script` the weights are random (gibberish, as training wants). With a
    `script` (text pieces), the model is a deterministic chain: whatever the prompt, it
    answers with the pieces in order, then end-of-turn. That gives tests a *real* vLLM
    response with a known tool call on every endpoint (OpenAI and Anthropic, streaming
    or not), which no sampling trick reaches on vLLM's Anthropic route.
    """
    out_dir = Path(out_dir)
    spec = {
        "seed": seed,
        "vocab_size": vocab_size,
        "layers": layers,
        "version": 2,
        "script": list(script),
    }
    marker = out_dir / MARKER
    if marker.is_file() and json.loads(marker.read_text()) == spec:
        return out_dir

    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(vocab_size, script)
    tokenizer.save_pretrained(out_dir)
    hidden = 128 if not script else max(128, -(-len(tokenizer) // 64) * 64)
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        num_key_value_heads=hidden // 64,
        head_dim=64,
        max_position_embeddings=32768,
        tie_word_embeddings=not script,
        bos_token_id=None,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        torch_dtype="float32",
    )
    model = Qwen2ForCausalLM(config)
    if script:
        _make_chain(model, tokenizer, script)
    model.save_pretrained(out_dir, safe_serialization=True)
    marker.write_text(json.dumps(spec, sort_keys=True) + "\n")
    return out_dir


def _tokenizer(vocab_size: int, script: tuple[str, ...]):  # -> PreTrainedTokenizerFast
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(list(_TRAINING_TEXT) * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        additional_special_tokens=list(SPECIAL_TOKENS[1:]),
    )
    pieces = [p for p in script if p not in SPECIAL_TOKENS]
    tokenizer.add_tokens([AddedToken(p, normalized=False, special=False) for p in pieces])
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def _make_chain(model, tokenizer, script: tuple[str, ...]) -> None:
    """One-hot embeddings, silent layers, and an output head mapping each token to its
    successor: the residual stream is the current token, so the argmax is fixed."""
    import torch

    ids = [tokenizer.convert_tokens_to_ids(p) for p in script]
    if len(set(ids)) != len(ids):
        raise ValueError("script pieces must be distinct tokens")
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    start = tokenizer.encode(GENERATION_PROMPT)[-1]
    successor = dict.fromkeys(range(len(tokenizer)), eos)
    for current, following in zip([start, *ids], [*ids, eos], strict=True):
        successor[current] = following
    with torch.no_grad():
        embed = model.model.embed_tokens.weight
        embed.zero_()
        embed[torch.arange(len(tokenizer)), torch.arange(len(tokenizer))] = 1.0
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        head = model.lm_head.weight
        head.zero_()
        for current, following in successor.items():
            head[following, current] = 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.serving.tiny_model")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument(
        "--script", action="append", default=[], help="a piece the model always answers"
    )
    args = parser.parse_args(argv)
    build(args.out_dir, seed=args.seed, layers=args.layers, script=tuple(args.script))
    print(args.out_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
