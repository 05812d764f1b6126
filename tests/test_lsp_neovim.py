"""A real editor drives the server: headless Neovim loads ``editors/neovim/code_evidence.lua``
unchanged, the way editors/neovim/README.md installs it (copied into the configuration's
``lua/`` folder, then the README's ``setup`` block in ``init.lua``), opens a file and uses what
the file promises: ``K`` (the hover, mapped only in attached buffers), ``:CodeEvidence`` from a
code buffer and again from the quickfix window it opened, a code lens run into the quickfix
list, and an unsaved edit that must be what is searched. Skips when ``nvim`` is not installed
(.ci/run installs Debian's, Neovim 0.7)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT
from support.lsp import server_env

PLUGIN = ROOT / "editors/neovim/code_evidence.lua"
GUIDE = ROOT / "editors/neovim/README.md"

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

local function qf_names()
  local names = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(names, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ':t'))
  end
  return names
end

local function qf_title()
  return vim.fn.getqflist({ title = 1 }).title
end

local function float_text()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
      return table.concat(lines, '\n')
    end
  end
end

local function run()
  vim.lsp.handlers['codeEvidence/status'] = function(_, result)
    table.insert(out.statuses, result.state)
  end
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
        table.insert(out.find, { path = e.path, symbol = e.symbol, uri = e.uri,
          start = e.start, line = e.line, ["end"] = e["end"] })
      end
      out.index_state = r.result.indexState
    end
  end

  -- K, as a user presses it, on the call of discount_for.
  out.k_mapped_here = vim.fn.maparg('K', 'n') ~= ''
  vim.api.nvim_win_set_cursor(0, { vim.g.ce_hover_line + 1, vim.g.ce_hover_col })
  vim.cmd('normal K')
  vim.wait(30000, function() return float_text() ~= nil end, 50)
  out.hover = float_text()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then vim.api.nvim_win_close(win, true) end
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

  -- :CodeEvidence from the code buffer fills the quickfix list and moves into its window ...
  vim.cmd('CodeEvidence where is the oauth state checked')
  vim.wait(30000, function() return #vim.fn.getqflist() > 0 end, 50)
  out.quickfix = qf_names()
  local first = vim.fn.getqflist()[1] or {}
  out.quickfix_first = { lnum = first.lnum, text = first.text }
  out.in_quickfix = vim.bo.buftype == 'quickfix'
  out.k_mapped_in_quickfix = vim.fn.maparg('K', 'n') ~= ''
  -- ... and, run again from there, it still finds the workspace's server.
  vim.cmd('CodeEvidence where is json saved to a file')
  vim.wait(30000, function() return qf_title():find('json saved', 1, true) ~= nil end, 50)
  out.quickfix_again = qf_names()
  out.quickfix_again_title = qf_title()

  -- A code lens: open pricing.py, wait for the resolved lens on discount_for, run it.
  vim.cmd('wincmd p')
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.g.ce_lens_file))
  local lens_buf = vim.api.nvim_get_current_buf()
  vim.wait(30000, function()
    vim.lsp.codelens.refresh()
    vim.wait(300)
    for _, lens in ipairs(vim.lsp.codelens.get(lens_buf)) do
      if lens.command and lens.range.start.line == vim.g.ce_lens_line then
        out.lens_title = lens.command.title
        return true
      end
    end
    return false
  end, 100)
  vim.api.nvim_win_set_cursor(0, { vim.g.ce_lens_line + 1, 0 })
  vim.fn.setqflist({}, 'r', { title = 'before the lens', items = {} })
  vim.cmd('normal ' .. vim.api.nvim_replace_termcodes('<leader>cl', true, false, true))
  vim.wait(10000, function() return qf_title() == 'Code Evidence: related' end, 50)
  out.lens_quickfix = qf_names()
  out.lens_lines = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ':t')
    out.lens_lines[name] = out.lens_lines[name] or {}
    table.insert(out.lens_lines[name], item.lnum)
  end
end

local ok, err = pcall(run)
if not ok then out.lua_error = tostring(err) end
finish()
"""


def setup_block(cmd: list[str]) -> str:
    """The ``setup`` call of editors/neovim/README.md as a user pastes it into init.lua, with
    the placeholder path of its ``cmd`` replaced by this checkout's server."""
    m = re.search(r"```lua\n(require\('code_evidence'\)\.setup\(.*?)```", GUIDE.read_text(), re.S)
    assert m, "editors/neovim/README.md has no setup block"
    lua_cmd = "{ " + ", ".join(json.dumps(c) for c in cmd) + " }"
    block, n = re.subn(r"cmd = \{[^}]*\}", lambda _: f"cmd = {lua_cmd}", m.group(1))
    assert n == 1, "the setup block must name the server command once"
    return block


def test_neovim_drives_the_server(project: Path, tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not installed (Debian package `neovim`; .ci/run installs it)")
    assert "~/.config/nvim/lua/code_evidence.lua" in GUIDE.read_text()
    config = tmp_path / "xdg" / "xdg_config_home" / "nvim"
    (config / "lua").mkdir(parents=True)
    shutil.copyfile(PLUGIN, config / "lua" / "code_evidence.lua")
    cmd = [sys.executable, "-m", "code_evidence.cli", "serve", "--index-dir", str(tmp_path / "i")]
    (config / "init.lua").write_text(setup_block(cmd))
    (tmp_path / "driver.lua").write_text(DRIVER)

    cart = project / "src/shop/cart.py"
    lines = cart.read_text().splitlines()
    hover_line = next(i for i, t in enumerate(lines) if "discount_for(self.code)" in t)
    pricing = project / "src/shop/pricing.py"
    lens_line = next(
        i for i, t in enumerate(pricing.read_text().splitlines()) if "def discount_for" in t
    )
    env = server_env()
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(tmp_path / "xdg" / var.lower())
    out_file = tmp_path / "out.json"
    setup = [
        f"let g:ce_out = {json.dumps(str(out_file))}",
        f"let g:ce_file = {json.dumps(str(cart))}",
        f"let g:ce_hover_line = {hover_line}",
        f"let g:ce_hover_col = {lines[hover_line].index('discount_for') + 2}",
        f"let g:ce_lens_file = {json.dumps(str(pricing))}",
        f"let g:ce_lens_line = {lens_line}",
    ]
    # The user's init.lua (found through XDG_CONFIG_HOME), no shada; the driver runs after it.
    args = [nvim, "--headless", "-i", "NONE"]
    for line in setup:
        args += ["-c", line]
    args += ["-c", f"luafile {tmp_path / 'driver.lua'}"]
    proc = subprocess.run(
        args, cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False
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
    # K is the hover, in the attached buffer only (Neovim 0.7 maps nothing by itself).
    assert out["k_mapped_here"] and not out["k_mapped_in_quickfix"], out
    assert out.get("hover"), out
    assert "**Defined in**" in out["hover"] and "src/shop/pricing.py:4" in out["hover"]
    assert out["edited_top"] == "settle_gift_card_balance"
    assert "settle_gift_card_balance" not in cart.read_text()
    assert out["in_quickfix"], "the command should leave the cursor in the quickfix window"
    assert out["quickfix"] and out["quickfix"][0] == "oauth.py"
    # Each entry at its line, showing that line's code after the symbol.
    oauth = (project / "src/shop/oauth.py").read_text().splitlines()
    first = out["quickfix_first"]
    assert first["text"].startswith("check_oauth_state: " + oauth[first["lnum"] - 1].strip())
    assert out["quickfix_again_title"] == "Code Evidence: where is json saved to a file"
    assert out["quickfix_again"] and out["quickfix_again"][0] == "storage.py"
    assert re.fullmatch(r"\d+ callers? · related", out.get("lens_title") or ""), out
    assert "cart.py" in out["lens_quickfix"], out
    # The caller is listed at its call (Cart.total's line 20), not at its first line (18).
    assert 20 in out["lens_lines"]["cart.py"] and 18 not in out["lens_lines"]["cart.py"], out
    assert top["start"] <= top["line"] <= top["end"]
