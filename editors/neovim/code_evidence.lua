-- Code Evidence for Neovim 0.7 and later: starts the language server (`code-evidence serve`)
-- for code buffers, maps K to its hover in those buffers, adds :CodeEvidence <question>
-- (results into the quickfix list) and shows code lenses (`N callers · related`).
--
-- Install (editors/neovim/README.md):
--   copy this file to ~/.config/nvim/lua/code_evidence.lua, then in init.lua:
--   require('code_evidence').setup({ cmd = { '/path/to/.venv/bin/code-evidence', 'serve' } })
--
-- The protocol is in docs/lsp-extensions.md. tests/test_lsp_neovim.py loads this file as it is
-- into a headless Neovim and drives every feature below.

local M = {}

local NAME = 'code-evidence'

M.defaults = {
  -- The server command; `{ 'python', '-m', 'code_evidence.cli', 'serve' }` works too.
  cmd = { 'code-evidence', 'serve' },
  -- Buffers of these file types start (or join) the server of their workspace.
  filetypes = {
    'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go', 'rust',
    'java', 'c', 'cpp', 'cs', 'ruby', 'php', 'kotlin', 'swift', 'scala',
  },
  -- The `codeEvidence` settings section (docs/lsp-extensions.md, "Settings").
  settings = { limit = 10 },
  -- Run git in a repository another user owns (the CLI's --trust-other-owner).
  trust_other_owner = false,
  -- Buffer-local normal-mode keys in attached buffers; false leaves a key unmapped.
  keys = { hover = 'K', lens = '<leader>cl' },
  -- Refresh code lenses on entering, saving and pausing in an attached buffer.
  codelens = true,
}

local config = vim.deepcopy(M.defaults)

-- The workspace of a buffer: the nearest folder above its file holding `.git` (a folder, or a
-- file in a worktree or submodule), else the working directory.
local function root_of(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  local dir = path ~= '' and vim.fn.fnamemodify(path, ':p:h') or vim.fn.getcwd()
  while dir and dir ~= '' do
    if vim.loop.fs_stat(dir .. '/.git') then
      return dir
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd()
end

local function all_clients()
  local found = {}
  for _, client in pairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
    if client.name == NAME then
      table.insert(found, client)
    end
  end
  return found
end

local function inside(path, root)
  return root ~= nil and (path == root or path:sub(1, #root + 1) == root .. '/')
end

--- The Code Evidence client for a command run in `bufnr`, whatever kind of buffer it is: the
--- one attached to it; else the one whose workspace holds the buffer's file or the working
--- directory (a quickfix list or a scratch buffer has no file of its own); else the first.
--- The second result says whether the buffer is attached (so its document can be sent).
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local clients = all_clients()
  for _, client in ipairs(clients) do
    if vim.lsp.buf_is_attached(bufnr, client.id) then
      return client, true
    end
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local here = (vim.bo[bufnr].buftype == '' and name ~= '') and vim.fn.fnamemodify(name, ':p')
    or vim.fn.getcwd()
  for _, client in ipairs(clients) do
    if inside(here, client.config.root_dir) then
      return client, false
    end
  end
  return clients[1], false
end

local function to_quickfix(title, items)
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  vim.cmd('copen')
end

-- A resolved lens's command: arguments are (uri, position, Location[]).
local function show_related(command, ctx)
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local items = vim.lsp.util.locations_to_items(command.arguments[3] or {}, encoding)
  to_quickfix('Code Evidence: related', items)
end

local function on_attach(client, bufnr)
  local keys = config.keys or {}
  if keys.hover then
    vim.keymap.set('n', keys.hover, vim.lsp.buf.hover, {
      buffer = bufnr, desc = 'Code Evidence: hover',
    })
  end
  if keys.lens then
    vim.keymap.set('n', keys.lens, vim.lsp.codelens.run, {
      buffer = bufnr, desc = 'Code Evidence: run the code lens on this line',
    })
  end
  if config.codelens and client.server_capabilities.codeLensProvider then
    local group = vim.api.nvim_create_augroup('code_evidence_lens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'BufWritePost', 'CursorHold', 'InsertLeave' }, {
      group = group, buffer = bufnr, callback = function() vim.lsp.codelens.refresh() end,
    })
    vim.lsp.codelens.refresh()
  end
end

--- Start the server for `bufnr`'s workspace, or attach the buffer to the one already running.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local root = root_of(bufnr)
  local client_config = {
    name = NAME,
    cmd = config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = {
      codeEvidence = config.settings,
      trustOtherOwner = config.trust_other_owner,
    },
    commands = { ['codeEvidence.showRelated'] = show_related },
    on_attach = on_attach,
  }
  if vim.lsp.start then -- Neovim 0.8+: reuses a running client with the same name and root
    return vim.lsp.start(client_config, { bufnr = bufnr })
  end
  for _, client in ipairs(all_clients()) do
    if client.config.root_dir == root then
      vim.lsp.buf_attach_client(bufnr, client.id)
      return client.id
    end
  end
  local id = vim.lsp.start_client(client_config)
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- Ask a question; the ranked evidence goes to the quickfix list. From a buffer the server is
--- attached to, the open file and the cursor go along (its imports and the callers and callees
--- of the symbol there rank first); from any other buffer, the question alone.
function M.find(question, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client, attached = M.client(bufnr)
  if not client then
    vim.notify('Code Evidence: the server is not running (open a code file first)',
      vim.log.levels.WARN)
    return
  end
  local params = { query = question }
  if attached then
    params.textDocument = vim.lsp.util.make_text_document_params(bufnr)
    params.position = vim.lsp.util.make_position_params(0, client.offset_encoding).position
  end
  client.request('codeEvidence/find', params, function(err, answer)
    if err or not answer then
      vim.notify('Code Evidence: ' .. (err and err.message or 'no answer'), vim.log.levels.ERROR)
      return
    end
    local items = {}
    for _, r in ipairs(answer.results) do
      local lnum = r.line or r.start -- where the result holds the question (a trace's frame line)
      -- That line's code, as grep shows it, after the symbol; the reasons last.
      local code = vim.trim((vim.split(r.text or '', '\n', { plain = true })[lnum - r.start + 1]) or '')
      table.insert(items, {
        filename = vim.uri_to_fname(r.uri),
        lnum = lnum,
        end_lnum = r['end'],
        text = (r.symbol ~= '' and r.symbol or r.kind) .. ': ' .. code
          .. '  [' .. table.concat(r.reasons, ', ') .. ']',
      })
    end
    local title = 'Code Evidence: ' .. question
    if answer.insufficient then
      title = title .. '  (weak evidence: ' .. (answer.insufficient_reason or 'low confidence') .. ')'
    end
    to_quickfix(title, items)
  end, attached and bufnr or nil)
end

--- Options replace the defaults key by key (a list such as `filetypes` or `cmd` replaces the
--- whole default list); `keys` is merged, so `keys = { lens = false }` keeps K.
function M.setup(opts)
  opts = opts or {}
  config = vim.deepcopy(M.defaults)
  for key, value in pairs(opts) do
    if key == 'keys' then
      config.keys = vim.tbl_extend('force', config.keys, value)
    else
      config[key] = value
    end
  end
  local group = vim.api.nvim_create_augroup('code_evidence', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.filetypes,
    callback = function(args) M.start(args.buf) end,
  })
  vim.api.nvim_create_user_command('CodeEvidence', function(cmd) M.find(cmd.args) end, {
    nargs = '+', desc = 'Code Evidence: ranked evidence for a question, into the quickfix list',
  })
end

return M
