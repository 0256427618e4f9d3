"""JupyterLab, as a user meets it: double-click a notebook, Run All, see the figures.

Starts ``.venv/bin/jupyter lab`` on a free local port with an empty HOME and empty Jupyter
config/data/runtime folders, so the only settings in play are the ones the project installs
into its environment (``make install``: the override under
``.venv/share/jupyter/lab/settings/overrides.d/``).  Headless Chromium (the system package,
driven by Playwright) opens ``notebooks/20_context_scaling.py`` through the file-browser URL,
runs all cells from the Run menu, and the test checks that the notebook view (not the text
editor) shows the script and that every saved figure renders as an image; a second test does
the same with the subtype explorer (notebook 50) and changes one of its widgets.  The server
is stopped at the end.  Autosave is off and checkpoints go to a temporary folder, so nothing is
written into the repository.

``VOXMEM_ROOT`` points the notebooks' relative paths at a temporary project root whose
``data`` links to the repository's, so the default ``out_dir = "figures"`` lands there.

Chromium comes from the system package manager (``.ci/run`` installs it); if it is missing the
test installs it with apt-get when it can (root), and is skipped only when that is impossible.
Playwright (the ``[test]`` extra) drives that executable; no browser is downloaded.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO

NOTEBOOK = "notebooks/20_context_scaling.py"
EXPLORER = "notebooks/50_subtype_explorer.py"
TIMEOUT_S = 180                     # each wait; generous for a loaded 2-core machine
RUN_TIMEOUT_S = 900                 # Run All of the whole notebook (default n_boot) on such a machine
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]
OVERRIDES = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.d" / "voxmem-analysis.json"


def _chromium() -> str:
    """Path of the system Chromium, installed with apt-get if missing and possible; else skip."""
    for name in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if name and os.access(name, os.X_OK):
            return name
    apt = shutil.which("apt-get")
    if not apt or os.geteuid() != 0:
        pytest.skip("Chromium is not installed and cannot be installed here (needs apt-get as root); "
                    "install the `chromium` package")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log = ""
    for cmd in ([apt, "install", "-y", "-qq", "chromium"], [apt, "update", "-qq"],
                [apt, "install", "-y", "-qq", "chromium"]):
        r = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
        log += r.stdout[-500:] + r.stderr[-500:]
        if os.access("/usr/bin/chromium", os.X_OK):
            return "/usr/bin/chromium"
    pytest.skip(f"Chromium could not be installed with apt-get: {log[-800:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lab_env(tmp: Path, root: Path) -> dict:
    """A clean user: empty HOME and Jupyter folders; user settings: autosave off, no windowing;
    VOXMEM_ROOT=root."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
    dirs = {"HOME": "home", "JUPYTER_CONFIG_DIR": "config", "JUPYTER_DATA_DIR": "data",
            "JUPYTER_RUNTIME_DIR": "runtime", "IPYTHONDIR": "ipython"}
    for var, sub in dirs.items():
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp / sub)
    user = tmp / "config" / "lab" / "user-settings" / "@jupyterlab" / "docmanager-extension"
    user.mkdir(parents=True)
    (user / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    # every cell in the DOM (no virtual scrolling), so all outputs can be inspected
    tracker = tmp / "config" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    env.update(JUPYTER_PREFER_ENV_PATH="1", VOXMEM_ROOT=str(root), PYTHONHASHSEED="0")
    env.pop("JUPYTERLAB_DIR", None)
    return env


def _wait_http(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"JupyterLab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise AssertionError(f"JupyterLab did not answer at {url} within {TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def chromium() -> str:
    return _chromium()


@contextlib.contextmanager
def _serve(tmp: Path, root_dir: Path, chromium: str):
    """A JupyterLab server on a free port (token off, no browser) serving ``root_dir``; checkpoints in ``tmp``."""
    assert OVERRIDES.is_file(), f"{OVERRIDES} is missing: run `make install` (it installs the JupyterLab settings)"
    root = tmp / "root"
    root.mkdir()
    (root / "data").symlink_to(REPO / "data", target_is_directory=True)
    port = _free_port()
    log = tmp / "jupyterlab.log"
    jupyter = Path(sys.executable).with_name("jupyter")      # .venv/bin/jupyter lab, as a user starts it
    cmd = [str(jupyter), "lab"] if jupyter.is_file() else [sys.executable, "-m", "jupyterlab"]
    cmd += ["--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0",
            "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root_dir}",
            f"--FileCheckpoints.checkpoint_dir={tmp / 'checkpoints'}", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:           # CI containers run as root
        cmd.append("--allow-root")
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=root_dir, env=_lab_env(tmp / "user", root), stdin=subprocess.DEVNULL,
                                stdout=fh, stderr=subprocess.STDOUT)
    try:
        _wait_http(f"http://127.0.0.1:{port}/api/status", proc, log)
        yield {"url": f"http://127.0.0.1:{port}", "root": root, "log": log, "chromium": chromium}
    finally:
        proc.terminate()            # the server shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium):
    """JupyterLab serving the repository; opening a notebook leaves nothing in it."""
    with _serve(tmp_path_factory.mktemp("lab"), REPO, chromium) as server:
        yield server


def _accept_kernel_dialog(page) -> None:
    """Lab asks "Select Kernel" (with the notebooks' "Python 3" preselected) when the kernel list
    reached the page after the notebook opened, as on a loaded machine: answer it as a user would."""
    dialog = page.locator(".jp-Dialog:visible")
    if dialog.count() and "Select Kernel" in dialog.first.inner_text():
        chosen = dialog.first.locator("select option:checked").first.inner_text().strip()
        assert chosen == "Python 3", f"Lab proposes the kernel {chosen!r}, not the notebooks' 'Python 3'"
        dialog.first.locator("button.jp-mod-accept").first.click()
        _wait_for_idle_kernel(page)


def _run_all_cells(page) -> None:
    """Run > Run All Cells; again if no cell started (a click while the kernel was still connecting)."""
    started = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')]
                     .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""
    for attempt in range(3):
        _accept_kernel_dialog(page)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        item = page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first
        item.wait_for(state="visible")
        page.wait_for_timeout(500)   # let the menu settle before clicking an entry
        item.click()
        try:
            page.wait_for_function(started, timeout=30_000)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError; try the menu again
            page.keyboard.press("Escape")
    raise AssertionError("Run > Run All Cells started no cell (3 attempts)")


def _wait_for_idle_kernel(page) -> None:
    page.wait_for_function(
        """() => { const el = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
                   return el && el.getAttribute('data-status') === 'idle'; }""", timeout=TIMEOUT_S * 1000)


def _open_and_run(page, url: str, notebook: str, shot: Path) -> dict:
    """Open the notebook through the file-browser URL, check the view, run all cells, wait for figures."""
    page.goto(f"{url}/lab/tree/{notebook}?reset", timeout=TIMEOUT_S * 1000)   # reset: no earlier tabs
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden), .jp-FileEditor").first.wait_for(state="visible")
    seen = {"editor": page.locator(".jp-FileEditor:visible").count(),
            "tab": page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel").first.inner_text()}
    if seen["editor"]:
        page.screenshot(path=str(shot))
        return seen                 # opened in the text editor: the test fails on this
    page.wait_for_function("""() => document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell').length >= 4""")
    _wait_for_idle_kernel(page)
    _run_all_cells(page)
    # done: no cell queued or running any more (after an error the queue is cleared)
    page.wait_for_function("""() => ![...document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt')].some(p => p.textContent.includes('*'))""",
                           timeout=RUN_TIMEOUT_S * 1000)
    _wait_for_idle_kernel(page)
    images = panel.locator(".jp-OutputArea-output img")
    images.first.wait_for(state="visible", timeout=10_000)
    page.wait_for_function("""() => [...document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img')].every(i => i.complete && i.naturalWidth > 0)""")
    images.first.scroll_into_view_if_needed()
    page.screenshot(path=str(shot))
    seen["prompts"] = panel.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
    seen["errors"] = panel.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                                   ).all_inner_texts()
    seen["widths"] = [images.nth(i).evaluate("i => i.naturalWidth") for i in range(images.count())]
    return seen


def _in_lab(lab, notebook: str, tmp_path: Path, then=None) -> dict:
    """Open ``notebook`` in headless Chromium, run it (``_open_and_run``), then ``then(page, tmp_path)``."""
    from playwright import sync_api   # the [test] extra: missing is an error, not a skip
    shot = tmp_path / f"jupyterlab_{Path(notebook).stem}.png"
    paired = (REPO / notebook).with_name(f".{Path(notebook).stem}.ipynb")   # the hidden pair (jupytext.toml)
    paired_before = paired.stat().st_mtime_ns if paired.exists() else None
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=lab["chromium"], headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(TIMEOUT_S * 1000)
            try:
                seen = _open_and_run(page, lab["url"], notebook, shot)
                if then is not None and not seen["editor"]:
                    seen.update(then(page, tmp_path))
            except Exception as exc:
                page.screenshot(path=str(tmp_path / "failure.png"))
                raise AssertionError(f"{exc}\n(screenshot: {tmp_path / 'failure.png'}; server log:\n"
                                     f"{lab['log'].read_text()[-2000:]})") from exc
        finally:
            browser.close()
    print(f"screenshot: {shot}")
    assert seen["editor"] == 0, f"the script opened in the text editor (screenshot: {shot})"
    assert seen["tab"] == Path(notebook).name
    assert not [e for e in seen["errors"] if "Traceback" in e or "Error" in e], seen["errors"]
    assert all(p.strip().startswith("[") and "*" not in p and p.strip() != "[ ]:" for p in seen["prompts"]), \
        seen["prompts"]
    assert (paired.stat().st_mtime_ns if paired.exists() else None) == paired_before, "JupyterLab saved the notebook"
    return seen


def test_notebook_opens_as_notebook_runs_and_shows_figures(lab, tmp_path):
    seen = _in_lab(lab, NOTEBOOK, tmp_path)
    saved = sorted(f.name for f in (lab["root"] / "figures" / "figures").glob("*.png"))
    assert {"fig6_context_scaling.png", "table18_forest.png", "d5_sensitivity.png"} <= set(saved)
    assert len(seen["widths"]) == len(saved) and min(seen["widths"]) > 300, (seen["widths"], saved)


def _change_budget(page, shot_dir: Path) -> dict:
    """In the explorer's widgets, pick another budget and wait for the widget's figure to be redrawn."""
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    selects = panel.locator(".widget-dropdown select")
    selects.nth(2).wait_for(state="visible")
    widget_img = panel.locator(".widget-output img, .jupyter-widgets-output-area img").first
    widget_img.wait_for(state="visible")
    before = widget_img.get_attribute("src")
    budget = next(selects.nth(i) for i in range(selects.count())
                  if "all" in selects.nth(i).locator("option").all_inner_texts())
    options = budget.locator("option").all_inner_texts()
    target = next(o for o in options if o != budget.input_value())
    budget.select_option(label=target)
    page.wait_for_function("""([sel, before]) => { const i = document.querySelector(sel);
                              return i && i.complete && i.naturalWidth > 0 && i.getAttribute('src') !== before; }""",
                           arg=[".jp-NotebookPanel:not(.lm-mod-hidden) .widget-output img, "
                                ".jp-NotebookPanel:not(.lm-mod-hidden) .jupyter-widgets-output-area img", before],
                           timeout=RUN_TIMEOUT_S * 1000)
    widget_img.scroll_into_view_if_needed()
    page.screenshot(path=str(shot_dir / "jupyterlab_50_widget_redrawn.png"))
    return {"dropdowns": selects.count(), "budget_picked": target}


def test_subtype_explorer_widgets_redraw_in_lab(lab, tmp_path):
    seen = _in_lab(lab, EXPLORER, tmp_path, then=_change_budget)
    assert seen["dropdowns"] >= 3 and seen["budget_picked"]
    saved = list((lab["root"] / "figures" / "figures").glob("explorer_*.png"))
    assert saved and len(seen["widths"]) > len(saved)      # the saved figures, plus the widget's own


@pytest.fixture(scope="module")
def lab_project(tmp_path_factory, chromium):
    """JupyterLab as ``make lab`` starts it, on a copy of the project (two notebooks, jupytext.toml, the data):
    the pairs written first by ``jupyterlab/pair_notebooks.py``, the settings the environment installs."""
    tmp = tmp_path_factory.mktemp("lab_project")
    project = tmp / "project"
    (project / "notebooks").mkdir(parents=True)
    shutil.copy(REPO / "jupytext.toml", project / "jupytext.toml")
    (project / "data").symlink_to(REPO / "data", target_is_directory=True)
    scripts = [shutil.copy(REPO / "notebooks" / n, project / "notebooks" / n)
               for n in ("00_validate.py", "05_benchmark_design.py")]
    subprocess.run([sys.executable, str(REPO / "jupyterlab" / "pair_notebooks.py"), *map(str, scripts)], check=True,
                   capture_output=True, timeout=300)
    with _serve(tmp, project, chromium) as server:
        yield {**server, "project": project}


def _dirty(page) -> bool:
    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current").first
    return "jp-mod-dirty" in (tab.get_attribute("class") or "")


def test_a_notebook_opens_clean_and_a_save_leaves_one_visible_file(lab_project, tmp_path):
    """Opened: not marked unsaved once its kernel is idle.  Saved: the script unchanged, the outputs in the
    hidden pair, and the file browser lists one file per notebook."""
    from playwright import sync_api

    project, notebook = lab_project["project"], "notebooks/05_benchmark_design.py"
    script_before = (project / notebook).read_bytes()
    pair = project / "notebooks" / ".05_benchmark_design.ipynb"
    pair_before = pair.stat().st_mtime_ns
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=lab_project["chromium"], headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(TIMEOUT_S * 1000)
            page.goto(f"{lab_project['url']}/lab/tree/{notebook}?reset", timeout=TIMEOUT_S * 1000)
            page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").first.wait_for(state="visible")
            _wait_for_idle_kernel(page)
            _accept_kernel_dialog(page)
            page.wait_for_timeout(2000)               # anything the kernel's start would still change
            page.screenshot(path=str(tmp_path / "opened.png"))
            dirty_on_open = _dirty(page)
            page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-InputPrompt").first.click()
            page.keyboard.press("Control+s")
            page.wait_for_function("""() => !document.querySelector(
                '#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current').classList.contains('jp-mod-dirty')""")
            deadline = time.monotonic() + TIMEOUT_S
            while pair.stat().st_mtime_ns == pair_before and time.monotonic() < deadline:
                time.sleep(0.5)
            page.locator(".jp-DirListing-content").first.wait_for(state="visible")
            page.wait_for_timeout(1500)               # the listing refreshes after the save
            listed = sorted(page.locator(".jp-DirListing-item:visible .jp-DirListing-itemText").all_inner_texts())
            page.screenshot(path=str(tmp_path / "saved.png"))
        finally:
            browser.close()
    print(f"screenshots: {tmp_path / 'opened.png'}, {tmp_path / 'saved.png'}")
    assert not dirty_on_open, f"the notebook opened marked unsaved (screenshot: {tmp_path / 'opened.png'})"
    assert pair.stat().st_mtime_ns != pair_before, "the save did not write the hidden pair"
    assert (project / notebook).read_bytes() == script_before
    assert listed == ["00_validate.py", "05_benchmark_design.py"], listed
    assert [p.name for p in (project / "notebooks").glob("*.ipynb") if not p.name.startswith(".")] == []
