"""Local model serving for tests and CPU training runs.

`install` creates the vLLM CPU virtualenv (`.venv-vllm`, kept apart from the trainer's
packages because vLLM pins transformers differently), `tiny_model` builds a random tiny
chat model offline, and `server` starts and stops a vLLM OpenAI-compatible server on it.
"""
