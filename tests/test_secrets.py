import pytest

from repo2rlenv.secrets import REDACTED, find_secrets, redact
from tests.conftest import SAMPLES, needs_samples


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("key = AKIAIOSFODNN7EXAMPLE here", "aws-access-key"),
        ("export OPENAI_API_KEY=sk-proj-Abcdefghijklmnopqrstuvwx1234", "openai-key"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github-token"),
        ("HF hf_abcdefghijklmnopqrstuvwxyz0123456", "huggingface-token"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "private-key"),
        ("https://devnet.example.com/?api-key=0b1c2d3e-4f5a-6b7c", "url-credential"),
        ("postgres://admin:hunter2secret@db.internal:5432/x", "url-userinfo"),
        ("https://bot:s3cr3tpass@examples.com/repo.git", "url-userinfo"),
        ("https://deploy:password1234@git.internal/x.git", "url-userinfo"),
        ("token: Ab3dEf9hIjKlMnOp", "assigned-secret"),
        ('DB_PASSWORD = "correct-horse-battery-staple"', "assigned-secret"),
        # unquoted generated values stay secrets even though no quote marks them
        ("SECRET_KEY=9f8e7d6c5b4a39281706f5e4d3c2b1a0", "assigned-secret"),
        ("export API_TOKEN=aB3dE5gH7jK9mN1pQ3sT", "assigned-secret"),
        (
            "token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "assigned-secret",
        ),
        # a quoted value is a literal, whatever it looks like
        ("password = 'self.expand_macros'", "assigned-secret"),
        # only the name itself is a label, not a value that merely starts like it
        ('ADMIN_PASSWORD = "ADMIN_PASSWORD_2024_prod"', "assigned-secret"),
    ],
)
def test_finds_each_kind(text, kind):
    assert kind in {hit.kind for hit in find_secrets(text)}


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens = 4096",
        "def get_token(self):",
        "password = input()",
        "sk-learn is great",
        "see https://example.com/?page=2&sort=asc",
        # assignments whose value is code: a call, an attribute, a name
        "tokens = self.expand_macros(tokens)",  # astropy/extern/ply/cpp.py
        "token = read_token_from_environment()",
        "API_TOKEN = settings.GITHUB_API_TOKEN",
        "password: DEFAULT_PASSWORD_VALUE",
        "secret = self._secrets[key_name]",
        # documentation hosts (RFC 2606): marshmallow's URL validator tests
        '"http://user.name:pass.word@example",',
        "ftp://anonymous:guest-password@ftp.example.org/pub",
        # astropy: anonymous FTP, cfitsio's docs, a bison parser's C
        "IERS_A_URL = 'ftp://anonymous:mail%40astropy.org@gdc.cddis.eosdis.nasa.gov/pub/'",
        '"http://username:password@host"',
        "      fftoken = FFSYMBOL_FFerror;",
        # a label whose value is its own name: moto's cognitoidp enums
        '    FORCE_CHANGE_PASSWORD = "FORCE_CHANGE_PASSWORD"',
        "    REFRESH_TOKEN_AUTH = 'refresh_token_auth'",
    ],
)
def test_leaves_ordinary_text_alone(text):
    assert find_secrets(text) == []


def test_redact_replaces_only_the_secret():
    text = "curl 'https://rpc.example.com/?api-key=abcdef0123456789xyz' -d @body.json"
    cleaned, count = redact(text)
    assert count == 1
    assert cleaned == f"curl 'https://rpc.example.com/?api-key={REDACTED}' -d @body.json"


@needs_samples
def test_real_session_with_rpc_key_is_caught():
    sample = SAMPLES / "claude_code" / "SublyFi_privacy-x402__claude-session.jsonl"
    text = sample.read_text()
    kinds = {hit.kind for hit in find_secrets(text)}
    assert "url-credential" in kinds
    cleaned, count = redact(text)
    assert count >= 1 and "api-key=" + REDACTED in cleaned
    assert not any(h.kind == "url-credential" for h in find_secrets(cleaned))
