"""A short check that the training loop works on this machine: `python -m train.device_check`.

It proves, in minutes and without harness containers, what a GPU run depends on: one
real vLLM server with LoRA on serves two trainers' adapters (`pi-policy-v<N>` and
`hermes-policy-v<N>`), each trainer (its own process, as in a real run) gets real
completions from the server under its own adapter name, runs ONE GRPO step through
TRL and peft, and publishes version 2. It then checks that each adapter's v2 weights
differ from v1, that every request named the asking trainer's adapter, that the server
serves each v2 as its own adapter, proven by output (`proof`: on a fixed prompt with
greedy decoding, v2's tokens or logprobs differ from the base model's and from the
other adapter's by more than the server's repeat noise; the answer's `model` field is
the request's, copied, so it proves nothing), that neither trainer loaded or unloaded
the other's names, and how long it all took. The reward is the share of even token ids
in a completion: meaningless, but it varies within a group, so GRPO has a gradient.

On a GPU machine the server is the `vllm` package in `--server-python` (default: this
interpreter) and everything shares the first GPU; without one, the vLLM CPU build in
`.venv-vllm` and the same code run on the CPU (tests/train/test_device_check.py).
Missing packages fail in a second with `device.no-vllm` or `device.no-train-deps` and
the exact list. The summary is printed and written to `<out>/device-check.json`.
`check` is the parent (preflight, server, verdict), `trainer` the trainers' process.
"""
