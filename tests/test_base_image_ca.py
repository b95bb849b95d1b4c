"""The offline base trusts the host's CA bundle (`trust_host_certificates`): spec
recipes run pip inside image builds, and behind a TLS-intercepting proxy an image
made from Debian's packages alone fails every such step on the certificate."""

from __future__ import annotations

import pytest

from repo2rlenv.runtime.base_image import HOST_CA_LABEL, trust_host_certificates


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_the_base_takes_the_host_bundle_once(tmp_path, docker_ready):
    import docker

    client = docker.from_env(timeout=300)
    tag = "rlenv-harvest/test-ca-base:1"
    client.images.get(docker_ready).tag(tag)
    bundle = tmp_path / "bundle.crt"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nnot-a-real-one\n-----END CERTIFICATE-----\n")
    log: list[str] = []
    try:
        assert trust_host_certificates(client, tag, log, bundle=bundle) is True
        image = client.images.get(tag)
        assert image.labels[HOST_CA_LABEL]
        shown = client.containers.run(
            tag, ["cat", "/etc/ssl/certs/ca-certificates.crt"], remove=True
        )
        assert shown == bundle.read_bytes()
        # the same bundle again: nothing built, the same image
        assert trust_host_certificates(client, tag, log, bundle=bundle) is False
        assert client.images.get(tag).id == image.id
        # a changed bundle (a new proxy CA on the host): trusted anew
        bundle.write_text(bundle.read_text() + "# another\n")
        assert trust_host_certificates(client, tag, log, bundle=bundle) is True
        assert client.images.get(tag).id != image.id
        # no bundle on the host: nothing to trust, nothing built
        assert trust_host_certificates(client, tag, log, bundle=tmp_path / "none") is False
    finally:
        client.images.remove(tag, force=True)
