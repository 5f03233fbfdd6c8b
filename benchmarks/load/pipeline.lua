-- Sends `depth` requests per write, as the TechEmpower plaintext test does (wrk ... -s pipeline.lua -- 16). Each is
-- the request wrk would send alone, so the headers given with -H (common.sh: TechEmpower's) are in every one.
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
