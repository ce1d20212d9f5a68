-- Test driver: wait for watcher diagnostics on the current buffer, write them as JSON, quit.
local out = os.getenv('WATCHER_NVIM_OUT')
local ok = vim.wait(20000, function()
  return #vim.diagnostic.get(0) > 0
end, 50)
local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(found, {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = d.severity, message = d.message, source = d.source,
  })
end
local clients = {}
for _, c in pairs(vim.lsp.get_active_clients()) do
  table.insert(clients, c.name)
end
vim.fn.writefile({ vim.fn.json_encode({ ok = ok, diagnostics = found, clients = clients }) }, out)
vim.cmd('qa!')
