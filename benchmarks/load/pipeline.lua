-- Sends `depth` requests per write, as the TechEmpower plaintext test does (wrk ... -s pipeline.lua -- 16).
init = function(args)
  local depth = tonumber(args[1]) or 1
  local requests = {}
  for i = 1, depth do
    requests[i] = wrk.format()
  end
  batch = table.concat(requests)
end

request = function()
  return batch
end
