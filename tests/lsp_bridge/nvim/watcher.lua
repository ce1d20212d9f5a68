-- watcher-lsp in Neovim 0.7+: show running watchers' findings as diagnostics.
-- Starts one client per project root (the nearest folder with .git or pyproject.toml).
local uv = vim.uv or vim.loop
local clients = {}

local function project_root(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while true do
    if uv.fs_stat(dir .. '/.git') or uv.fs_stat(dir .. '/pyproject.toml') then
      return dir
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return vim.fn.getcwd()
    end
    dir = parent
  end
end

local function start_watcher(args)
  if vim.bo[args.buf].buftype ~= '' then
    return
  end
  local root = project_root(vim.api.nvim_buf_get_name(args.buf))
  local config = {
    name = 'watcher',
    cmd = { 'watcher-lsp' },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
  }
  if vim.lsp.start then -- Neovim 0.8+
    vim.lsp.start(config, { bufnr = args.buf })
  else -- Neovim 0.7
    clients[root] = clients[root] or vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(args.buf, clients[root])
  end
end

vim.api.nvim_create_autocmd('FileType', { pattern = '*', callback = start_watcher })
