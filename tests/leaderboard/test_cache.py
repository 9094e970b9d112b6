"""The leaderboard's build cache: a rebuild scores only new or changed files, a new scorer version scores everything
again, and an entry that is corrupt, foreign or forged is ignored and rebuilt, never trusted. Entries are signed with
a key kept outside the site (conftest points ``G2M_CACHE_KEY_FILE`` at one per session): a forger who recomputes a
plain checksum gets nowhere, and even an entry signed with the key is checked for shape again."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import audit.key as key_module
import leaderboard.build as site_module
import leaderboard.cache as cache_module
from leaderboard.build import build_site
from leaderboard.cache import CACHE_DIR, Cache
from leaderboard.rows import slug, well_formed
from tests.support.helpers import REPO, cheap_doc, g2m, submission_doc, write_file


def _entry(site: Path, source: str) -> Path:
    return site / CACHE_DIR / f"{Cache(site, well_formed).key(source)}.json"


def _rewrite(path: Path, edit) -> None:
    """Edit an entry's body and sign it again with the real key (a forger who has the key: the shape checks remain)."""
    entry = json.loads(path.read_text())
    edit(entry["body"])
    entry["hmac"] = cache_module.sign(cache_module.signing_key(), entry)
    path.write_text(json.dumps(entry))


def _forge(path: Path, edit) -> None:
    """Edit an entry's body and give it the plain sha256 of its body, as the format before signing carried (what anyone
    who read the code can recompute), in the field the signature takes."""
    entry = json.loads(path.read_text())
    edit(entry["body"])
    field = "checksum" if "checksum" in entry else "hmac"  # the unsigned format's field, or the signature's
    entry[field] = hashlib.sha256(json.dumps(entry["body"], sort_keys=True).encode()).hexdigest()
    path.write_text(json.dumps(entry))


# ---------------------------------------------------------------- the cache alone (fast: rejection entries)
@pytest.fixture
def cache(tmp_path):
    c = Cache(tmp_path, well_formed)
    c.put("file:" + "a" * 64, {"rejected": "not a G2M submission"})
    return c


def _broken_json(p: Path) -> None:
    p.write_text(p.read_text()[:-20])


def _foreign(p: Path) -> None:  # another file's entry copied under this key's name
    other = Cache(p.parent.parent, well_formed)
    other.put("file:" + "b" * 64, {"rejected": "something else"})
    shutil.copyfile(_entry(p.parent.parent, "file:" + "b" * 64), p)


def _stale_checksum(p: Path) -> None:
    p.write_text(p.read_text().replace("not a G2M submission", "accepted after all"))


def _other_format(p: Path) -> None:
    p.write_text(p.read_text().replace(cache_module.ENTRY_FORMAT, "g2m-leaderboard-cache/0"))


def _huge(p: Path) -> None:
    p.write_bytes(b" " * (cache_module.MAX_ENTRY_BYTES + 1))


def _device(p: Path) -> None:
    p.unlink()
    p.symlink_to("/dev/zero")


def _extra_file(p: Path) -> None:  # a rejection that claims a page file
    _rewrite(p, lambda body: body["files"].update({"models/x.html": "0" * 64}))


def _forged(p: Path) -> None:
    _forge(p, lambda body: body.update(rejected="accepted after all"))


def _other_key(p: Path) -> None:  # signed, but with a key that is not this machine's
    entry = json.loads(p.read_text())
    entry["body"]["rejected"] = "accepted after all"
    entry["hmac"] = cache_module.sign(b"k" * key_module.KEY_BYTES, entry)
    p.write_text(json.dumps(entry))


@pytest.mark.parametrize("damage", [_broken_json, _foreign, _stale_checksum, _other_format, _huge, _device, _extra_file,
                                    _forged, _other_key])
def test_a_damaged_entry_is_as_good_as_absent(cache, damage):
    source = "file:" + "a" * 64
    assert cache.get(source) == {"rejected": "not a G2M submission", "files": {}}
    damage(_entry(cache.out, source))
    assert Cache(cache.out, well_formed).get(source) is None


def test_the_key_is_made_once_private_and_outside_the_site(tmp_path, monkeypatch):
    monkeypatch.delenv(key_module.KEY_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    site = tmp_path / "site"
    first = Cache(site, well_formed)
    first.put("file:" + "a" * 64, {"rejected": "r"})
    key = tmp_path / "xdg" / "grid2matrix" / "leaderboard.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text().strip()) == 64
    assert Cache(site, well_formed).get("file:" + "a" * 64) is not None  # the same key next time
    assert not [p for p in site.rglob("*") if "leaderboard.key" in p.name]
    key.chmod(0o644)
    with pytest.raises(cache_module.UsageError, match="may be read by others"):
        Cache(site, well_formed)
    monkeypatch.setenv(key_module.KEY_ENV, str(site / CACHE_DIR / "leaderboard.key"))
    with pytest.raises(cache_module.UsageError, match="lies inside the site folder"):
        Cache(site, well_formed)


def test_a_new_scorer_version_misses_every_entry(cache, monkeypatch):
    source = "file:" + "a" * 64
    monkeypatch.setattr(cache_module, "TASK_VERSION", cache_module.TASK_VERSION + 1)
    fresh = Cache(cache.out, well_formed)
    assert fresh.get(source) is None
    fresh.put(source, {"rejected": "scored again"})
    assert fresh.prune() == 1  # the old version's entry
    assert [p.name for p in (cache.out / CACHE_DIR).iterdir()] == [f"{fresh.key(source)}.json"]


# ---------------------------------------------------------------- real sites (slow)
slow = pytest.mark.slow  # builds sites: scores submissions and draws their figures


@pytest.fixture(scope="module")
def first_build(tmp_path_factory):
    """Two accepted submissions (one cheap to score), a copy of one, and a file that is not a submission."""
    subs = tmp_path_factory.mktemp("subs")
    write_file(subs, cheap_doc("Cheap-VLM"), "a.json")
    write_file(subs, submission_doc(), "b.json.gz")
    shutil.copyfile(subs / "b.json.gz", subs / "zz-copy.json.gz")
    (subs / "junk.json").write_text('{"format": "something else"}')
    site = tmp_path_factory.mktemp("site")
    result = build_site(subs, site, progress=False)
    return subs, site, result


@pytest.fixture
def again(first_build, tmp_path, monkeypatch):
    """A copy of the first build to rebuild, and a list of the files ``validate`` is called on."""
    subs, site = tmp_path / "subs", tmp_path / "site"
    shutil.copytree(first_build[0], subs)
    shutil.copytree(first_build[1], site)
    calls: list[str] = []
    real = site_module.validate
    monkeypatch.setattr(site_module, "validate", lambda p: (calls.append(Path(p).name), real(p))[1])
    return subs, site, calls


def _published(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and CACHE_DIR not in p.parts}


@slow
def test_the_first_build_caches_every_file_it_scored(first_build):
    _, site, result = first_build
    assert (result.submissions, result.scored, result.cached) == (2, 3, 0)  # the copy: b's entry, already
    assert sorted(r["file"] for r in result.rejected) == ["junk.json", "zz-copy.json.gz"]
    assert len(list((site / CACHE_DIR).glob("*.json"))) == 5  # a, b (and its copy), junk, the 2 baselines


def _store(source: str, site: Path) -> Path:
    from leaderboard.baseline_store import STORE_DIR

    return cache_module.key_file().parent / STORE_DIR / Cache(site, well_formed).key(source)


def _tamper_entry(folder: Path) -> None:
    entry = json.loads((folder / "entry.json").read_text())
    entry["body"]["row"]["views"]["all"]["overall"]["cell_accuracy"] = 0.999  # not re-signed: a forger without the key
    (folder / "entry.json").write_text(json.dumps(entry))


def _tamper_figure(folder: Path) -> None:
    figure = next(folder.rglob("*.png"))
    figure.write_bytes(figure.read_bytes()[:-1] + b"x")


@slow
@pytest.mark.parametrize("tamper", [None, _tamper_entry, _tamper_figure], ids=["intact", "entry", "figure"])
def test_a_new_site_folder_takes_the_baselines_from_the_machines_store_and_never_a_tampered_one(tmp_path, tamper):
    subs = tmp_path / "subs"
    subs.mkdir()
    first = build_site(subs, tmp_path / "first", progress=False)  # computed, or from the store if a build made it
    assert set(first.baselines.values()) <= {"store", "computed"}
    stored = {name: _store(f"baseline:{name}", tmp_path / "first") for name in ("g2m-oracle", "g2m-random")}
    assert all((folder / "entry.json").is_file() for folder in stored.values())
    if tamper:
        tamper(stored["g2m-oracle"])
        from leaderboard import baseline_store

        # nothing of a store entry that does not verify is copied into a site folder, not even for a moment
        assert not baseline_store.restore(Cache(tmp_path / "probe", well_formed), "baseline:g2m-oracle")
        assert not (tmp_path / "probe" / "models").exists()
    result = build_site(subs, tmp_path / "new", progress=False)
    assert result.baselines == {"g2m-oracle": "computed" if tamper else "store", "g2m-random": "store"}
    assert _published(tmp_path / "new") == _published(tmp_path / "first")  # the same pages, byte for byte
    if tamper:  # the store holds the good copy again
        assert build_site(subs, tmp_path / "newer", progress=False).baselines["g2m-oracle"] == "store"


@slow
def test_a_rebuild_scores_nothing_and_publishes_the_same_site(first_build, again):
    subs, site, calls = again
    before = _published(site)
    result = build_site(subs, site, progress=False)
    assert calls == [] and (result.scored, result.cached) == (0, 2)
    assert result.rejected == first_build[2].rejected
    assert _published(site) == before


@slow
def test_a_new_file_is_the_only_one_scored(again):
    subs, site, calls = again
    new = submission_doc(output=lambda t: "[[1]]")
    new["metadata"]["model"]["id"] = "New-VLM"
    write_file(subs, new, "c.json")
    result = build_site(subs, site, progress=False)
    assert calls == ["c.json"] and (result.scored, result.cached) == (1, 2)
    assert "New-VLM" in (site / "leaderboard.csv").read_text()


def _page_file(site: Path, name: str) -> Path:
    return next(site.glob(f"models/{slug(name)}-*/heatmaps.png"))


@slow
@pytest.mark.parametrize("damage", [
    lambda site, a, b: _broken_json(a),
    lambda site, a, b: shutil.copyfile(b, a),  # b's entry under a's key: foreign
    lambda site, a, b: _rewrite(a, lambda body: body["row"].update(page="../../index.html")),  # forged, checksum fixed
    lambda site, a, b: _rewrite(a, lambda body: body["files"].update({"models/x/../../../etc/hostname": "0" * 64})),
    lambda site, a, b: _rewrite(a, lambda body: body["accepted"].update(name="g2m-oracle")),  # a name the file lacks
    lambda site, a, b: _rewrite(a, lambda body: body["row"]["views"]["all"]["overall"].update(cell_accuracy=7.0)),
    lambda site, a, b: _page_file(site, "Cheap-VLM").write_bytes(b"not the figure"),  # its page changed on disk
], ids=["corrupt", "foreign", "path outside", "file outside", "another name", "impossible score", "page file changed"])
def test_a_bad_entry_is_scored_again_and_the_site_is_the_same(again, damage):
    from leaderboard.cache import file_digest

    subs, site, calls = again
    before = _published(site)
    a, b = (_entry(site, f"file:{file_digest(subs / f)}") for f in ("a.json", "b.json.gz"))
    damage(site, a, b)
    result = build_site(subs, site, progress=False)
    assert calls == ["a.json"] and (result.scored, result.cached) == (1, 1)
    assert _published(site) == before


@slow
def test_a_forged_score_with_a_recomputed_checksum_is_scored_again_and_the_board_shows_the_true_one(again):
    """A regression: an entry edited to a higher score, its plain sha256 recomputed, was shown (0.999617 for a file that
    scores 0.799617). Signed entries: it does not verify, the file is scored again, the board shows its true score."""
    from leaderboard.cache import file_digest

    subs, site, calls = again
    true = next(line for line in (site / "leaderboard.csv").read_text().splitlines() if line.startswith("Cheap-VLM,"))
    entry = _entry(site, f"file:{file_digest(subs / 'a.json')}")
    _forge(entry, lambda body: body["row"]["views"]["all"]["overall"].update(cell_accuracy=0.999617))
    assert "0.999617" in entry.read_text()
    res = g2m("leaderboard", "build", str(subs), "--out", str(site), "--quiet")
    assert res.returncode == 0, res.stderr
    assert "1 files scored" in res.stdout
    assert true in (site / "leaderboard.csv").read_text() and "0.999617" not in (site / "leaderboard.csv").read_text()
    assert "0.999617" not in (site / "index.html").read_text() and "0.999617" not in entry.read_text()


@slow
def test_a_new_scorer_version_scores_everything_again(again, monkeypatch):
    """One entry of each kind is enough to show it: an accepted file's, a rejected file's and the baselines'. The
    second accepted file and its copy are withdrawn first (their entries are pruned by the first build without them),
    since drawing another page again would only repeat what the accepted file shows."""
    subs, site, calls = again
    os.unlink(subs / "b.json.gz")
    os.unlink(subs / "zz-copy.json.gz")
    build_site(subs, site, progress=False)
    old = {p.name for p in (site / CACHE_DIR).glob("*.json")}
    assert calls == [] and len(old) == 4  # a, junk and the 2 baselines, all from the cache
    monkeypatch.setattr(cache_module, "TASK_VERSION", cache_module.TASK_VERSION + 0.1)
    result = build_site(subs, site, progress=False)
    assert calls == ["a.json", "junk.json"] and result.cached == 0
    assert result.baselines == {"g2m-oracle": "computed", "g2m-random": "computed"}
    new = {p.name for p in (site / CACHE_DIR).glob("*.json")}
    assert len(new) == 4 and not new & old  # every entry rewritten under its new key, the old ones removed


@slow
def test_a_withdrawn_submission_leaves_no_page_and_no_entry(again):
    subs, site, calls = again
    a_pages = sorted(site.glob(f"models/{slug('Cheap-VLM')}-*")) + sorted(site.glob(f"raw/{slug('Cheap-VLM')}-*"))
    assert len(a_pages) == 3  # its page, its figures, its raw outputs
    os.unlink(subs / "a.json")
    build_site(subs, site, progress=False)
    assert calls == [] and not any(p.exists() for p in a_pages)
    assert len(list((site / CACHE_DIR).glob("*.json"))) == 4
    assert "Cheap-VLM" not in (site / "index.html").read_text()


@slow
def test_a_second_build_into_the_same_folder_is_refused_at_once(again):
    """Two builds into one site would prune each other's pages and cache entries: while one holds the folder (here a
    real second process holding its lock), ``g2m leaderboard build`` stops in one line and touches nothing. A new file
    in the folder would be scored by a build that ran; after the refusal it is not even in the cache."""
    subs, site, calls = again
    before = {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}
    new = submission_doc(output=lambda t: "[[1]]")
    new["metadata"]["model"]["id"] = "New-VLM"
    write_file(subs, new, "c.json")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from g2m_base.files import folder_lock\n"
         "with folder_lock(Path(sys.argv[1]), sys.argv[2], 'busy'):\n    print('held', flush=True); time.sleep(3600)",
         str(site / CACHE_DIR), site_module.LOCK_NAME], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert holder.stdout.readline().strip() == "held"
        res = g2m("leaderboard", "build", str(subs), "--out", str(site), timeout=120)
        assert res.returncode == 2 and "Traceback" not in res.stderr
        assert f"another g2m leaderboard build is writing to {site}" in res.stderr
        assert {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
                if p.is_file()} == before  # every page and cache entry as it was (the lock file is empty)
    finally:
        holder.kill()
        holder.wait()
    os.unlink(subs / "c.json")  # scoring it would show nothing the lock does not
    result = build_site(subs, site, progress=False)  # the lock went with its holder
    assert result.submissions == 2 and calls == []


def _plant(site: Path, slug_dir: Path) -> list[Path]:
    """Files put into a site folder at every depth (a folder copied from elsewhere): none of them the build's."""
    planted = [site / "evil.html", site / "assets" / "app.js", slug_dir / "evil.svg", site / "models" / "x" / "y.html",
               site / "raw" / "a" / "b.json"]
    for p in planted:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("<script>alert(1)</script>")
    (site / "models" / "link").symlink_to("/etc")
    return planted


@slow
def test_the_site_holds_only_what_the_build_wrote_at_every_depth(tmp_path):
    subs, site = tmp_path / "subs", tmp_path / "site"
    subs.mkdir()
    write_file(subs, cheap_doc("Cheap-VLM"), "a.json")
    build_site(subs, site, progress=False)
    pages = _published(site)
    slug_dir = next(p for p in (site / "models").iterdir() if p.is_dir() and p.name.startswith("Cheap-VLM"))
    planted = _plant(site, slug_dir)
    (site / ".git").mkdir()
    (site / ".git" / "config").write_text("[core]")  # a Space's clone: the top's dot entries are not the site's
    result = build_site(subs, site, progress=False)  # from the cache
    assert result.cached == 1 and not any(p.exists() for p in planted)
    assert not (site / "models" / "link").is_symlink() and not (site / "assets").exists()
    assert (site / ".git" / "config").read_text() == "[core]"
    assert {k: v for k, v in _published(site).items() if not k.startswith(".git/")} == pages

    # a page drawn into a folder that holds a planted file: its signed entry lists only what the page wrote
    copy = tmp_path / "copy"
    shutil.copytree(site, copy, symlinks=True, ignore=shutil.ignore_patterns(CACHE_DIR, ".git"))
    planted = _plant(copy, copy / "models" / slug_dir.name)
    result = build_site(subs, copy, progress=False)
    assert result.scored == 1 and not any(p.exists() for p in planted)
    entry = json.loads(_entry(copy, f"file:{hashlib.sha256((subs / 'a.json').read_bytes()).hexdigest()}").read_text())
    assert not [f for f in entry["body"]["files"] if "evil" in f]
    assert _published(copy) == pages


@slow
def test_the_same_outputs_are_one_row_whatever_the_file_or_the_name(tmp_path):
    """Duplicates are found by the outputs, not the file's bytes: a reformatted, reordered copy and the same outputs
    sent under another model's name are each listed once as a repeat of the first file; a rebuild from the cache
    says the same."""
    subs = tmp_path / "subs"
    subs.mkdir()
    doc = cheap_doc("Cheap-VLM")
    write_file(subs, doc, "a.json")
    again = json.loads(json.dumps(doc))
    again["records"].reverse()
    (subs / "b.json").write_text(json.dumps(again, indent=2))  # reformatted and reordered: other bytes
    renamed = json.loads(json.dumps(doc))
    renamed["metadata"]["model"]["id"] = "Other-VLM"
    write_file(subs, renamed, "c.json.gz")
    shutil.copyfile(subs / "a.json", subs / "e.json")  # the very same bytes
    write_file(subs, cheap_doc("Cheap-VLM", "[[1]]"), "d.json")  # other outputs: a row of its own
    for _ in range(2):  # scored, then from the cache
        result = build_site(subs, tmp_path / "site", progress=False)
        assert {r["file"]: r["reason"] for r in result.rejected} == {
            "b.json": "the same outputs as a.json (shown once)", "c.json.gz": "the same outputs as a.json (shown once)",
            "e.json": "the same submission as a.json (shown once)"}
        assert result.submissions == 2


@pytest.mark.parametrize(("name", "looks_like"), [
    ("g2m-oracle", "g2m-oracle"), (" G2M-Oracle ", "g2m-oracle"), ("g2m-\u043eracle", "g2m-oracle"),  # Cyrillic о
    ("\uff47\uff12\uff4d\uff0d\uff4f\uff52\uff41\uff43\uff4c\uff45", "g2m-oracle"),  # full-width
    ("g2m\u200b-oracle", "g2m-oracle"), ("g2m\u2013random", "g2m-random"), ("g2m-rand\u03bfm", "g2m-random"),
    ("g2m-oracle2", "g2m-oracle2"), ("Qwen/Qwen3-VL-8B", "qwen/qwen3-vl-8b"), ("g2m-or\u00e1cle", "g2m-or\u00e1cle"),
])
def test_a_name_is_compared_as_it_looks(name, looks_like):
    from g2m_base.untrusted import skeleton

    assert skeleton(name) == looks_like


@slow
def test_a_look_alike_of_a_baselines_name_is_refused(tmp_path):
    """Letters of other scripts and full-width forms are no Hub id: validate refuses them; an id the Hub accepts
    that a reader cannot tell from a baseline's (another case) is refused by the board."""
    subs = tmp_path / "subs"
    subs.mkdir()
    names = ("g2m-\u043eracle", "\uff47\uff12\uff4d\uff0d\uff52\uff41\uff4e\uff44\uff4f\uff4d", "G2M-Random")
    for k, name in enumerate(names):
        write_file(subs, cheap_doc(name, f"[[{k}]]"), f"{k}.json")
    result = build_site(subs, tmp_path / "site", progress=False)
    reasons = {r["file"]: r["reason"] for r in result.rejected}
    assert reasons["0.json"].startswith("metadata.model.id 'g2m-\u043eracle' is not a Hub model id: it holds "
                                        "characters other than ASCII"), reasons["0.json"]
    assert "is not a Hub model id" in reasons["1.json"]
    assert reasons["2.json"].startswith("the model id 'G2M-Random' is, or looks like, the built-in baseline "
                                        "g2m-random") and result.submissions == 0
