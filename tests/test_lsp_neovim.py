"""A real editor drives the server: headless Neovim's built-in LSP client loads the Neovim
snippet from README.md as is, opens a file, and sends ``codeEvidence/find`` (directly, and
through the snippet's ``:CodeEvidence`` command) and a hover; an unsaved edit in the buffer must
be what is searched. Skips when ``nvim`` is not installed (.ci/run installs Debian's)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT
from support.lsp import server_env

DOC = ROOT / "README.md"

DRIVER = r"""
local out = { statuses = {} }
local function finish()
  vim.fn.writefile({ vim.fn.json_encode(out) }, vim.g.ce_out)
  vim.cmd('qa!')
end

local function client()
  local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)()
  for _, c in pairs(clients) do
    if c.name == 'code-evidence' then return c end
  end
end

local function run()
  vim.lsp.handlers['codeEvidence/status'] = function(_, result)
    table.insert(out.statuses, result.state)
  end
  dofile(vim.g.ce_snippet)
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.g.ce_file))
  local bufnr = vim.api.nvim_get_current_buf()
  out.started = vim.wait(60000, function()
    local c = client()
    return c ~= nil and c.initialized == true
  end, 50)
  out.ready = vim.wait(90000, function()
    for _, s in ipairs(out.statuses) do
      if s == 'ready' or s == 'partial' then return true end
    end
    return false
  end, 50)
  local uri = vim.uri_from_bufnr(bufnr)

  local params = { query = 'discount_for' }
  local res = vim.lsp.buf_request_sync(bufnr, 'codeEvidence/find', params, 30000)
  for _, r in pairs(res or {}) do
    out.find_error = r.err and r.err.message or (r.error and r.error.message)
    if r.result then
      out.find = {}
      for _, e in ipairs(r.result.results) do
        table.insert(out.find, { path = e.path, symbol = e.symbol, uri = e.uri })
      end
      out.index_state = r.result.indexState
    end
  end

  local line = vim.g.ce_hover_line
  res = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', {
    textDocument = { uri = uri }, position = { line = line, character = vim.g.ce_hover_col },
  }, 30000)
  for _, r in pairs(res or {}) do
    if r.result and r.result.contents then out.hover = r.result.contents.value end
  end

  -- An unsaved edit: Neovim sends didChange; the find must search the buffer, not the disk.
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false,
    { '', '', 'def settle_gift_card_balance(card):', '    return card' })
  res = vim.lsp.buf_request_sync(bufnr, 'codeEvidence/find', {
    query = 'settle_gift_card_balance', textDocument = { uri = uri },
    position = { line = 0, character = 0 },
  }, 30000)
  for _, r in pairs(res or {}) do
    if r.result and r.result.results[1] then
      out.edited_top = r.result.results[1].symbol
    end
  end

  -- The snippet's own command fills the quickfix list.
  vim.cmd('CodeEvidence where is the oauth state checked')
  vim.wait(30000, function() return #vim.fn.getqflist() > 0 end, 50)
  out.quickfix = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(out.quickfix, vim.api.nvim_buf_get_name(item.bufnr))
  end
end

local ok, err = pcall(run)
if not ok then out.lua_error = tostring(err) end
finish()
"""


def snippet() -> str:
    """The Neovim block of README.md, exactly as a user would paste it."""
    m = re.search(r"```lua\n(-- Code Evidence language server.*?)```", DOC.read_text(), re.S)
    assert m, "README.md has no Neovim snippet"
    return m.group(1)


def test_neovim_drives_the_server(project: Path, tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not installed (Debian package `neovim`; .ci/run installs it)")
    (tmp_path / "snippet.lua").write_text(snippet())
    (tmp_path / "driver.lua").write_text(DRIVER)
    cart = project / "src/shop/cart.py"
    lines = cart.read_text().splitlines()
    hover_line = next(i for i, t in enumerate(lines) if "discount_for(self.code)" in t)
    cmd = [sys.executable, "-m", "code_evidence.cli", "serve", "--index-dir", str(tmp_path / "i")]
    lua_cmd = "{" + ", ".join(json.dumps(c) for c in cmd) + "}"
    env = server_env()
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(tmp_path / "xdg" / var.lower())
    out_file = tmp_path / "out.json"
    setup = [
        f"let g:ce_out = {json.dumps(str(out_file))}",
        f"let g:ce_snippet = {json.dumps(str(tmp_path / 'snippet.lua'))}",
        f"let g:ce_file = {json.dumps(str(cart))}",
        f"let g:ce_hover_line = {hover_line}",
        f"let g:ce_hover_col = {lines[hover_line].index('discount_for') + 2}",
        f"lua vim.g.code_evidence_cmd = {lua_cmd}",
    ]
    args = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", "filetype on"]
    for line in setup:
        args += ["-c", line]
    args += ["-c", f"luafile {tmp_path / 'driver.lua'}"]
    proc = subprocess.run(
        args, cwd=project, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert out_file.exists(), f"nvim wrote nothing: rc={proc.returncode} {proc.stderr[-2000:]}"
    out = json.loads(out_file.read_text())
    assert "lua_error" not in out, out["lua_error"]
    assert out["started"] and out["ready"], out
    assert out.get("find"), out.get("find_error")
    top = out["find"][0]
    assert (top["path"], top["symbol"]) == ("src/shop/pricing.py", "discount_for")
    assert top["uri"] == (project / "src/shop/pricing.py").resolve().as_uri()
    # A watcher pass may be running again by the time find answers (a loaded machine saw it):
    # the answer must still say which state it came from.
    assert out["index_state"] in ("ready", "partial", "indexing")
    assert "**Defined in**" in out["hover"] and "src/shop/pricing.py:4" in out["hover"]
    assert out["edited_top"] == "settle_gift_card_balance"
    assert "settle_gift_card_balance" not in cart.read_text()
    assert out["quickfix"] and os.path.basename(out["quickfix"][0]) == "oauth.py"
