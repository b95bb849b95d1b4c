"""The committed example datasets are exactly what their generators write."""

from repo2rlenv.examples.session_formats import SESSIONS_DIR, render_all


def test_example_sessions_match_their_generator():
    expected = render_all()
    committed = {
        p.relative_to(SESSIONS_DIR).as_posix(): p.read_text()
        for p in SESSIONS_DIR.rglob("*")
        if p.is_file()
    }
    assert committed == expected


def test_example_notebook_matches_its_generator(tmp_path, monkeypatch):
    import smoldataenvs.examples.make_bakery as make

    committed = {
        name: (make.HERE / name).read_text() for name in ("sales_analysis.ipynb", "data/sales.csv")
    }
    monkeypatch.setattr(make, "HERE", tmp_path / "bakery")
    assert make.build() == committed
